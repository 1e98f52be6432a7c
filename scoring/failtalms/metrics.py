"""The FAIL-TaLMs metrics (§3.4 and the interaction ratio of §5.1) with Wilson intervals, and the family summary laid
out as the paper's Table 1.

**Awareness** (§3.4.2). Before it works on a task the model is asked whether it has what the task needs and must
answer yes, idk or no first; :func:`~undertow.scoring.answers.parse_awareness` reads that first answer (None when the
reply opens with anything else). The questions themselves are the workers' business.

**Metrics** (§3.4, §5.1), per model and setting, over the episodes that carry the details (``passed``,
``awareness``, ``asked_human``): PR = passed / n; Aware = (idk + no) / n; Unexp = (yes and passed) / n;
Skip = no / n; Inter = episodes that asked the human at least once / n. In a setting that lacks nothing (the
paper's *perfect*) the right answer is yes, so there Aware counts the yes answers and Unexp is not defined
(the paper reads its Perfect row so).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from undertow.env_core.failtalms import build
from undertow.env_core.families import ReportTable
from undertow.env_core.model import EpisodeResult
from undertow.scoring.answers import Awareness, parse_awareness
from undertow.scoring.family_summary import (
    ModelSettingSummary,
    Rate,
    Row,
    StrictModel,
    any_with_details,
    by_model_setting,
    flag,
    judged,
    rate,
    result_rows,
)

FAMILY_NAME = build.FAMILY


@dataclass(frozen=True)
class EpisodeFacts:
    """What the metrics need of one episode. ``passed`` None: the judge had no readable vote (counted as not
    passed). ``awareness`` None: not asked, or the reply did not open with an answer. ``asked`` None: the setting
    offered no human to ask."""

    passed: bool | None
    awareness: Awareness | None
    asked: bool | None = None
    emulated: bool = False  # a helper model answered for some tool (its real API out of reach)


class SettingMetrics(StrictModel):
    """The paper's numbers for one group of episodes (a model × setting). ``aware``, ``unexp`` and ``skip`` are
    None when no episode gave a readable awareness answer (the question was not asked there), ``inter`` when no
    episode could ask a human, ``unexp`` also in a setting that lacks nothing (success is expected there)."""

    n: int
    complete: bool = False  # the setting lacks nothing: awareness is right when it says yes
    pr: Rate
    aware: Rate | None
    unexp: Rate | None
    skip: Rate | None
    inter: Rate | None
    answers: dict[str, int] = Field(default_factory=dict)  # yes / idk / no / none (not asked or unreadable)
    judge_errors: int = 0  # episodes whose judge had no readable vote (not passed)
    emulated: int = 0  # episodes in which a helper model answered for some tool


def setting_metrics(
    rows: Sequence[EpisodeFacts], *, complete: bool = False, confidence: float = 0.95
) -> SettingMetrics:
    """PR, Aware, Unexp, Skip and Inter of a group of episodes, each over all ``n`` of them (§3.4, §5.1).
    ``complete``: the setting lacks nothing (perfect), so Aware counts the yes answers and Unexp is None."""
    n = len(rows)
    answers = {key: sum(r.awareness == key for r in rows) for key in ("yes", "idk", "no")}
    answers["none"] = n - sum(answers.values())
    answered = n - answers["none"] > 0
    passed = sum(r.passed is True for r in rows)
    aware_k = answers["yes"] if complete else answers["idk"] + answers["no"]
    unexpected = sum(r.awareness == "yes" and r.passed is True for r in rows)
    offered = any(r.asked is not None for r in rows)
    return SettingMetrics(
        n=n,
        complete=complete,
        pr=rate(passed, n, confidence),
        aware=rate(aware_k, n, confidence) if answered else None,
        unexp=rate(unexpected, n, confidence) if answered and not complete else None,
        skip=rate(answers["no"], n, confidence) if answered else None,
        inter=rate(sum(r.asked is True for r in rows), n, confidence) if offered else None,
        answers=answers,
        judge_errors=sum(r.passed is None for r in rows),
        emulated=sum(r.emulated for r in rows),
    )


def _pool_rates(rates: Sequence[Rate | None], confidence: float) -> Rate | None:
    known = [r for r in rates if r is not None]
    return rate(sum(r.k for r in known), sum(r.n for r in known), confidence) if known else None


def pool(groups: Sequence[SettingMetrics], confidence: float = 0.95) -> SettingMetrics:
    """Several groups as one (the paper's *Unavailable tools* row pools the replaceable and non-replaceable
    settings): counts added, rates and intervals recomputed; a metric a group does not define is left out of it."""
    answers: dict[str, int] = {}
    for group in groups:
        for key, count in group.answers.items():
            answers[key] = answers.get(key, 0) + count
    return SettingMetrics(
        n=sum(g.n for g in groups),
        complete=bool(groups) and all(g.complete for g in groups),
        pr=_pool_rates([g.pr for g in groups], confidence) or rate(0, 0, confidence),
        aware=_pool_rates([g.aware for g in groups], confidence),
        unexp=_pool_rates([g.unexp for g in groups], confidence),
        skip=_pool_rates([g.skip for g in groups], confidence),
        inter=_pool_rates([g.inter for g in groups], confidence),
        answers=answers,
        judge_errors=sum(g.judge_errors for g in groups),
        emulated=sum(g.emulated for g in groups),
    )


# ---------------------------------------------------------------------------------------------------------------
# Settings: recognized by name, so the table can follow the paper's order and labels

# setting kind -> the paper's row label, in Table 1's order
KINDS = {
    "perfect": "Perfect",
    "underspecified": "Under-specified",
    "unavailable": "Unavailable tools",  # the pooled row, never a setting of its own
    "nonreplaceable": "non-replaceable",
    "replaceable": "replaceable",
    "no_tools": "No-tools",
}
# words that mark a setting with a human to ask; "human" alone would not do: the paper calls the tools a person can
# stand in for "human-replaceable"
_HELP_WORDS = ("aah", "askandhelp", "withhelp", "askhuman")


def _squashed(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.casefold())


def setting_kind(name: str) -> str | None:
    """Which of the paper's settings a setting name is (``under_specified``, ``non-replaceable+aah``...): a key
    of :data:`KINDS`, or None for a name it does not recognize."""
    squashed = _squashed(name)
    for word in _HELP_WORDS:
        squashed = squashed.replace(word, "")
    if "nonreplaceable" in squashed or "irreplaceable" in squashed:
        return "nonreplaceable"
    if "replaceable" in squashed:
        return "replaceable"
    if "underspecified" in squashed or "masked" in squashed:
        return "underspecified"
    if "notool" in squashed:
        return "no_tools"
    if "perfect" in squashed:
        return "perfect"
    return None


def with_help(name: str) -> bool:
    """Whether a setting name says the model could ask a human (the paper's Ask-and-Help, Table 2)."""
    squashed = _squashed(name)
    return any(word in squashed for word in _HELP_WORDS)


_UNAVAILABLE = {"nonreplaceable", "replaceable"}


def _label(kind: str | None, name: str, helped: bool) -> str:
    base = KINDS[kind] if kind else name
    return f"{base} + AAH" if helped and kind else base


# ---------------------------------------------------------------------------------------------------------------
# The summary


class FailTalmsRow(StrictModel):
    """One model × setting of a suite."""

    model: str
    setting: str
    n: int  # every episode, infra and config errors included
    n_valid: int  # judged episodes with the failtalms details
    metrics: SettingMetrics


def _awareness(value: Any) -> Awareness | None:
    """A stored answer: already read (``yes`` / ``idk`` / ``no``) or the reply text, read here."""
    return parse_awareness(value) if isinstance(value, str) else None


def facts(details: Mapping[str, Any]) -> EpisodeFacts:
    """An episode's facts from its ``EpisodeResult.details`` (``passed``, ``awareness``, ``asked_human``)."""
    return EpisodeFacts(
        passed=flag(details.get("passed")),
        awareness=_awareness(details.get("awareness")),
        asked=flag(details.get("asked_human")),
        emulated=bool(flag(details.get("emulated_calls"))),
    )


def _has_details(row: Row) -> bool:
    return "passed" in row


def summarize_failtalms(rows: Sequence[Row], *, confidence: float = 0.95) -> dict[str, Any]:
    """The summary data of one suite from per-episode dicts (``model``, ``setting``, ``outcome`` and the details
    keys), one row per model × setting in order of first appearance. Episodes that are not judged (infra and
    config errors) or carry no ``passed`` count in ``n`` only."""
    out = []
    for (model, setting), members in by_model_setting(rows).items():
        valid = [r for r in members if judged(r) and _has_details(r)]
        metrics = setting_metrics(
            [facts(r) for r in valid], complete=setting_kind(setting) == "perfect", confidence=confidence
        )
        out.append({"model": model, "setting": setting, "n": len(members), "n_valid": len(valid), "metrics": metrics})
    return {"family": FAMILY_NAME, "confidence": confidence, "rows": out}


def decimal(value: Rate | None, digits: int = 2) -> str:
    """A rate as the paper prints it, with its interval: ``0.42 [0.30–0.55]``; a dash when undefined."""
    if value is None or value.rate is None:
        return "—"
    text = f"{value.rate:.{digits}f}"
    if value.ci_low is not None and value.ci_high is not None:
        text += f" [{value.ci_low:.{digits}f}–{value.ci_high:.{digits}f}]"
    return text


def _order(setting: str, first_seen: int) -> tuple[int, int, int]:
    kind = setting_kind(setting)
    rank = list(KINDS).index(kind) if kind else len(KINDS)
    return (int(with_help(setting)), rank, first_seen)


class FailTalmsSummary(ModelSettingSummary):
    """The FAIL-TaLMs numbers of one suite: see :func:`summarize_failtalms`."""

    family: Literal["failtalms"] = "failtalms"
    confidence: float = 0.95
    rows: list[FailTalmsRow] = Field(default_factory=list)

    def models(self) -> list[str]:
        return list(dict.fromkeys(r.model for r in self.rows))

    def lines(self, model: str) -> list[tuple[str, str, SettingMetrics]]:
        """(label, setting, metrics) for one model in Table 1's order (without help first, then with), with the
        pooled *Unavailable tools* row before its two parts when both ran."""
        mine = [r for r in self.rows if r.model == model]
        ordered = sorted(enumerate(mine), key=lambda item: _order(item[1].setting, item[0]))
        out: list[tuple[str, str, SettingMetrics]] = []
        pooled: set[bool] = set()
        for _, row in ordered:
            kind, helped = setting_kind(row.setting), with_help(row.setting)
            if kind in _UNAVAILABLE and helped not in pooled:
                parts = [r for r in mine if setting_kind(r.setting) in _UNAVAILABLE and with_help(r.setting) == helped]
                if {setting_kind(r.setting) for r in parts} == _UNAVAILABLE:
                    pooled.add(helped)
                    out.append(
                        (_label("unavailable", "", helped), "", pool([r.metrics for r in parts], self.confidence))
                    )
            label = _label(kind, row.setting, helped)
            out.append((f"  {label}" if kind in _UNAVAILABLE else label, row.setting, row.metrics))
        return out

    def tables(self, suite: str) -> list[ReportTable]:
        """Table 1's layout (Setting | PR | Aware | Unexp | Skip, plus Inter), one section per model."""
        level = f"{100 * self.confidence:g}%"
        columns = ["Model", "Setting", "n", "PR", "Aware", "Unexp", "Skip", "Inter"]
        judge_errors = any(r.metrics.judge_errors for r in self.rows)
        if judge_errors:
            columns.append("Judge err.")
        emulated = any(r.metrics.emulated for r in self.rows)
        if emulated:
            columns.append("Emulated")
        table = ReportTable(
            title=f"{suite}: FAIL-TaLMs Table 1 — pass rate, awareness, unexpected success, skipped, interaction",
            columns=columns,
            right=[False, False, *[True] * (len(columns) - 2)],
            note=(
                f"Shares of the n episodes with {level} Wilson intervals. PR: passed (the gold facts stated; a "
                "judge's majority vote where there is no gold). Aware: answered idk or no to the awareness question "
                "(in Perfect, where nothing is missing: answered yes). Unexp: answered yes and passed. Skip: "
                "answered no. Inter: asked the human at least once. — : not asked in that setting. Unavailable "
                "tools pools its replaceable and non-replaceable rows."
            ),
        )
        for model in self.models():
            table.sections.append(len(table.rows))
            for label, _, m in self.lines(model):
                cells = [model, label, str(m.n), *(decimal(x) for x in (m.pr, m.aware, m.unexp, m.skip, m.inter))]
                extra = ([str(m.judge_errors)] if judge_errors else []) + ([str(m.emulated)] if emulated else [])
                table.rows.append(cells + extra)
        if emulated:
            table.note += (
                " Emulated: episodes in which a helper model answered for a tool from its documentation, because "
                "the real API is out of reach; their numbers measure behaviour against emulated responses."
            )
        return [table]

    def setting_parts(self, model: str, setting: str) -> list[tuple[str, SettingMetrics]]:
        """The paper's numbers, right under the family: ``failtalms.pr.rate``, ``failtalms.aware.ci_low``..."""
        return [("", row.metrics) for row in self.rows if (row.model, row.setting) == (model, setting)]


def summarize(results: Sequence[EpisodeResult]) -> FailTalmsSummary | None:
    """The family summary of one suite's results (None when no judged episode carries the failtalms details)."""
    rows = result_rows(results)
    if not any_with_details(rows, _has_details):
        return None
    return FailTalmsSummary.model_validate(summarize_failtalms(rows))
