"""The FAIL-TaLMs metrics as the authors' evaluation code computes them (their published Tables 1 and 2), with Wilson
intervals, and the family summary laid out as those tables.

**Facts** (:class:`EpisodeFacts`), per episode, from ``EpisodeResult.details``: ``passed`` (the judge's verdict),
the answers to the two awareness questions (``tool_awareness``, ``info_awareness``; a live episode that asked one
question records it as ``awareness``), ``skipped``, ``asked_human``, and for No-tools ``win_rate`` (the pairwise
comparison with the same model's Perfect answer to the same query: 0 lose, 1 tie, 2 win) and whether that Perfect
answer passed (``perfect_passed``, or joined by scenario: ``perfect_scenario``). Reference runs (the authors'
released outputs, ``undertow import failtalms --results``) and live runs record the same facts.

**Definitions** (``reading="code"``, the default), per model × setting, each rate over every episode of the cell:

- which awareness answer counts: Replaceable and Non-replaceable the tool question's, Under-specified the
  information question's, Perfect the tool question's when it is yes / no / idk, else the information question's;
- PR: passed. In No-tools: passed, and the pairwise comparison is a tie or a win (``win_rate >= 1``; missing: 0);
- Aware: Replaceable answered idk; Non-replaceable and Under-specified no or idk; Perfect yes; No-tools not asked;
- Unexp: Non-replaceable and Under-specified answered yes and passed; Replaceable and Perfect answered no;
  No-tools a tie (``win_rate == 1``) while the same query failed (or is missing) in Perfect;
- Skip: skipped / all (a live episode without ``skipped`` counts an answer of no);
- Inter (Ask-and-Help): asked the person / episodes not skipped;
- the *Unavailable tools* row: the unweighted mean of the Replaceable and Non-replaceable rows.

``reading="prose"`` follows the paper's §3.4 wording instead: Aware is idk or no wherever something is missing
(Replaceable too); Unexp is "unexpected success", answered yes and passed, in Under-specified, Replaceable and
Non-replaceable only (undefined in Perfect and No-tools); No-tools PR is the judge's verdict alone. A setting whose
name this module does not recognize is read as one where something is missing (idk or no aware, yes-and-passed
unexpected).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from undertow.env_core.failtalms import build
from undertow.env_core.families import FamilySummary, ReportTable
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
Reading = Literal["code", "prose"]
READINGS: tuple[Reading, ...] = ("code", "prose")


@dataclass(frozen=True)
class EpisodeFacts:
    """What the metrics need of one episode. ``passed`` None: the judge had no readable vote (counted as not
    passed). ``awareness``: the one answer a live episode recorded (None: not asked or unreadable);
    ``tool_awareness`` / ``info_awareness``: the answers to each question where both are known. ``asked`` None: the
    setting offered no one to ask. ``skipped`` None: not recorded (an answer of no skips). ``win_rate`` and
    ``perfect_passed``: No-tools only (None: missing)."""

    passed: bool | None
    awareness: Awareness | None
    asked: bool | None = None
    emulated: bool = False  # a helper model answered for some tool (its real API out of reach)
    tool_awareness: Awareness | None = None
    info_awareness: Awareness | None = None
    skipped: bool | None = None
    win_rate: int | None = None
    perfect_passed: bool | None = None
    unreadable: bool = False  # asked, but no reply (of the attempts the protocol allows) opened with an answer
    pr_by: str | None = None  # what decided ``passed``: "gold" (the offline library's answers) or "judge"


def counted_awareness(kind: str | None, facts: EpisodeFacts) -> Awareness | None:
    """The awareness answer that counts in a setting of ``kind`` (a key of :data:`KINDS`, None: unrecognized)."""
    if kind in ("replaceable", "nonreplaceable"):
        return facts.tool_awareness or facts.awareness
    if kind == "underspecified":
        return facts.info_awareness or facts.awareness
    if kind == "perfect" and (facts.tool_awareness or facts.info_awareness):
        return facts.tool_awareness or facts.info_awareness
    return facts.awareness or facts.tool_awareness or facts.info_awareness


class SettingMetrics(StrictModel):
    """The paper's numbers for one group of episodes (a model × setting). ``aware`` and ``unexp`` are None where
    the setting does not define them (no readable awareness answer, No-tools' Aware...), ``skip`` when nothing says
    what was skipped, ``inter`` when no episode could ask a person."""

    n: int
    complete: bool = False  # the setting lacks nothing: awareness is right when it says yes
    kind: str | None = None  # a key of KINDS (None: a setting name not recognized)
    reading: Reading = "code"
    pr: Rate
    aware: Rate | None
    unexp: Rate | None
    skip: Rate | None
    inter: Rate | None
    # yes / idk / no / none (not asked or unreadable), and unreadable apart (the authors labelled those by hand)
    answers: dict[str, int] = Field(default_factory=dict)
    judge_errors: int = 0  # episodes whose judge had no readable vote (not passed)
    pr_by: dict[str, int] = Field(default_factory=dict)  # episodes whose verdict the gold answers / the judge gave
    emulated: int = 0  # episodes in which a helper model answered for some tool
    mean_of: int = 0  # a row that is the unweighted mean of this many rows (no interval then)


def _passed_pr(kind: str | None, f: EpisodeFacts, reading: Reading) -> bool:
    if kind == "no_tools" and reading == "code":
        return f.passed is True and (f.win_rate or 0) >= 1
    return f.passed is True


def _aware(kind: str | None, answer: Awareness | None, reading: Reading) -> bool:
    if kind == "perfect":
        return answer == "yes"
    if kind == "replaceable" and reading == "code":
        return answer == "idk"
    return answer in ("idk", "no")


def _unexpected(kind: str | None, answer: Awareness | None, f: EpisodeFacts, reading: Reading) -> bool:
    if reading == "code" and kind in ("replaceable", "perfect"):
        return answer == "no"
    if kind == "no_tools":
        return f.win_rate == 1 and f.perfect_passed is not True
    return answer == "yes" and f.passed is True


def setting_metrics(
    rows: Sequence[EpisodeFacts],
    *,
    kind: str | None = None,
    reading: Reading = "code",
    confidence: float = 0.95,
) -> SettingMetrics:
    """PR, Aware, Unexp, Skip and Inter of a group of episodes of a setting of ``kind`` (a key of :data:`KINDS`),
    each over all ``n`` of them except Inter (over those not skipped); see the module's docstring for ``reading``."""
    n = len(rows)
    counted = [counted_awareness(kind, r) for r in rows]
    answers = {key: sum(a == key for a in counted) for key in ("yes", "idk", "no")}
    answers["none"] = n - sum(answers.values())
    answered = n - answers["none"] > 0
    answers["unreadable"] = sum(r.unreadable for r in rows)
    skipped = [r.skipped if r.skipped is not None else a == "no" for r, a in zip(rows, counted, strict=True)]
    knows_skips = answered or any(r.skipped is not None for r in rows)
    passed = sum(_passed_pr(kind, r, reading) for r in rows)
    aware: Rate | None = None
    if answered and kind != "no_tools":
        aware = rate(sum(_aware(kind, a, reading) for a in counted), n, confidence)
    unexp: Rate | None = None
    if kind == "no_tools":
        if reading == "code" and any(r.win_rate is not None for r in rows):
            unexp = rate(sum(_unexpected(kind, None, r, reading) for r in rows), n, confidence)
    elif answered and not (reading == "prose" and kind == "perfect"):
        hits = sum(_unexpected(kind, a, r, reading) for r, a in zip(rows, counted, strict=True))
        unexp = rate(hits, n, confidence)
    offered = [r for r, s in zip(rows, skipped, strict=True) if r.asked is not None and not s]
    inter = rate(sum(r.asked is True for r in offered), len(offered), confidence) if offered else None
    return SettingMetrics(
        n=n,
        complete=kind == "perfect",
        kind=kind,
        reading=reading,
        pr=rate(passed, n, confidence),
        aware=aware,
        unexp=unexp,
        skip=rate(sum(skipped), n, confidence) if knows_skips else None,
        inter=inter,
        answers=answers,
        judge_errors=sum(r.passed is None for r in rows),
        emulated=sum(r.emulated for r in rows),
        pr_by={by: sum(r.pr_by == by for r in rows) for by in ("gold", "judge") if any(r.pr_by == by for r in rows)},
    )


def _mean_rate(rates: Sequence[Rate | None]) -> Rate | None:
    known = [r for r in rates if r is not None and r.rate is not None]
    if not known:
        return None
    mean = sum(r.rate for r in known if r.rate is not None) / len(known)
    return Rate(n=sum(r.n for r in known), k=sum(r.k for r in known), rate=mean, ci_low=None, ci_high=None)


def mean_row(groups: Sequence[SettingMetrics]) -> SettingMetrics:
    """Several rows as their unweighted mean, metric by metric (the paper's *Unavailable tools* row is the mean of
    its replaceable and non-replaceable rows): a metric a row does not define is left out of the mean; counts are
    added; no interval (a mean of two rates is not a proportion)."""
    answers: dict[str, int] = {}
    for group in groups:
        for key, count in group.answers.items():
            answers[key] = answers.get(key, 0) + count
    return SettingMetrics(
        n=sum(g.n for g in groups),
        kind="unavailable",
        reading=groups[0].reading if groups else "code",
        pr=_mean_rate([g.pr for g in groups]) or rate(0, 0),
        aware=_mean_rate([g.aware for g in groups]),
        unexp=_mean_rate([g.unexp for g in groups]),
        skip=_mean_rate([g.skip for g in groups]),
        inter=_mean_rate([g.inter for g in groups]),
        answers=answers,
        judge_errors=sum(g.judge_errors for g in groups),
        emulated=sum(g.emulated for g in groups),
        mean_of=len(groups),
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
    imported: int = 0  # episodes read from the authors' released outputs (a reference run), not run here


def _awareness(value: Any) -> Awareness | None:
    """A stored answer: already read (``yes`` / ``idk`` / ``no``) or the reply text, read here."""
    return parse_awareness(value) if isinstance(value, str) else None


def _win_rate(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def facts(details: Mapping[str, Any], perfect_passed: bool | None = None) -> EpisodeFacts:
    """An episode's facts from its ``EpisodeResult.details`` (``passed``, ``awareness`` or ``tool_awareness`` /
    ``info_awareness``, ``skipped``, ``asked_human``, ``win_rate``, ``perfect_passed``); ``perfect_passed``: the
    joined Perfect verdict, where the details do not carry it."""
    recorded = flag(details.get("perfect_passed"))
    return EpisodeFacts(
        passed=flag(details.get("passed")),
        awareness=_awareness(details.get("awareness")),
        asked=flag(details.get("asked_human")),
        emulated=bool(flag(details.get("emulated_calls"))),
        tool_awareness=_awareness(details.get("tool_awareness")),
        info_awareness=_awareness(details.get("info_awareness")),
        skipped=flag(details.get("skipped")),
        win_rate=_win_rate(details.get("win_rate")),
        perfect_passed=recorded if recorded is not None else perfect_passed,
        unreadable=bool(flag(details.get("awareness_unreadable"))),
        pr_by=details.get("pr_by") if isinstance(details.get("pr_by"), str) else None,
    )


def _has_details(row: Row) -> bool:
    return "passed" in row


def _perfect_verdicts(rows: Sequence[Row]) -> dict[tuple[str, str], bool]:
    """(model, scenario id) -> passed, over the Perfect episodes without help: what No-tools is joined with."""
    found: dict[tuple[str, str], bool] = {}
    for row in rows:
        setting = str(row["setting"])
        if setting_kind(setting) == "perfect" and not with_help(setting) and judged(row) and _has_details(row):
            found.setdefault((str(row["model"]), str(row.get("scenario_id"))), flag(row.get("passed")) is True)
    return found


def summarize_failtalms(rows: Sequence[Row], *, confidence: float = 0.95, reading: Reading = "code") -> dict[str, Any]:
    """The summary data of one suite from per-episode dicts (``model``, ``setting``, ``outcome``, ``scenario_id``
    and the details keys), one row per model × setting in order of first appearance. Episodes that are not judged
    (infra and config errors) or carry no ``passed`` count in ``n`` only. A No-tools episode is joined with the
    same model's Perfect episode of ``perfect_scenario`` (its details) or of its own scenario id."""
    perfect = _perfect_verdicts(rows)
    out = []
    for (model, setting), members in by_model_setting(rows).items():
        valid = [r for r in members if judged(r) and _has_details(r)]
        kind = setting_kind(setting)
        found = []
        for r in valid:
            pair = str(r.get("perfect_scenario") or r.get("scenario_id"))
            found.append(facts(r, perfect.get((model, pair)) if kind == "no_tools" else None))
        metrics = setting_metrics(found, kind=kind, reading=reading, confidence=confidence)
        imported = sum(flag(r.get("imported")) is True for r in valid)
        out.append(
            {
                "model": model,
                "setting": setting,
                "n": len(members),
                "n_valid": len(valid),
                "metrics": metrics,
                "imported": imported,
            }
        )
    return {"family": FAMILY_NAME, "confidence": confidence, "reading": reading, "rows": out}


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


def _decided_by(metrics: Sequence[SettingMetrics]) -> str:
    """Which verdicts PR counts: the offline library's gold answers (its default) or a judge model (configured)."""
    gold = sum(m.pr_by.get("gold", 0) for m in metrics if not m.mean_of)
    judge = sum(m.pr_by.get("judge", 0) for m in metrics if not m.mean_of)
    if gold and not judge:
        return " PR decided by the gold answers (the offline library's default; a configured judge decides instead)."
    if gold and judge:
        return f" PR decided by the gold answers in {gold} episodes and by the judge in {judge}."
    return ""


_NOTES: dict[Reading, str] = {
    "code": (
        "PR: the answer passed (No-tools: and it ties or beats the model's own Perfect answer). Aware: "
        "Perfect answered yes, Replaceable idk, Non-replaceable and Under-specified no or idk. Unexp: "
        "Non-replaceable and Under-specified answered yes and passed; Replaceable and Perfect answered no; No-tools "
        "tied its Perfect answer where that failed. Skip: skipped. Inter: asked the person, of those not skipped. "
        "Unavailable tools: the mean of its two rows. The definitions of the authors' evaluation code."
    ),
    "prose": (
        "PR: the answer passed. Aware: Perfect answered yes, elsewhere idk or no. Unexp: answered yes "
        "and passed. Skip: skipped. Inter: asked the person, of those not skipped. Unavailable tools: the mean of "
        "its two rows. The paper's §3.4 wording (reading 'prose')."
    ),
}


class FailTalmsSummary(ModelSettingSummary):
    """The FAIL-TaLMs numbers of one suite: see :func:`summarize_failtalms`."""

    family: Literal["failtalms"] = "failtalms"
    confidence: float = 0.95
    reading: Reading = "code"
    rows: list[FailTalmsRow] = Field(default_factory=list)
    # the same episodes under the other reading (the paper's prose where ``rows`` follow the code), for the named
    # layout that prints them (``failtalms_prose``)
    other_rows: list[FailTalmsRow] = Field(default_factory=list)

    def models(self) -> list[str]:
        return list(dict.fromkeys(r.model for r in self.rows))

    def lines(self, model: str, helped: bool | None = None) -> list[tuple[str, str, SettingMetrics]]:
        """(label, setting, metrics) for one model in Table 1's order (without help first, then with; only those
        with or without help when ``helped`` says), with the *Unavailable tools* row (the mean of its two parts)
        before them when both ran."""
        mine = [r for r in self.rows if r.model == model and (helped is None or with_help(r.setting) == helped)]
        ordered = sorted(enumerate(mine), key=lambda item: _order(item[1].setting, item[0]))
        out: list[tuple[str, str, SettingMetrics]] = []
        meaned: set[bool] = set()
        for _, row in ordered:
            kind, help_ = setting_kind(row.setting), with_help(row.setting)
            if kind in _UNAVAILABLE and help_ not in meaned:
                parts = [r for r in mine if setting_kind(r.setting) in _UNAVAILABLE and with_help(r.setting) == help_]
                if {setting_kind(r.setting) for r in parts} == _UNAVAILABLE:
                    meaned.add(help_)
                    out.append((_label("unavailable", "", help_), "", mean_row([r.metrics for r in parts])))
            label = _label(kind, row.setting, help_)
            out.append((f"  {label}" if kind in _UNAVAILABLE else label, row.setting, row.metrics))
        return out

    def tables(self, suite: str) -> list[ReportTable]:
        """The paper's Table 1 (the settings without help) and Table 2 (with Ask-and-Help), each with a section per
        model; a table with no row is left out."""
        level = f"{100 * self.confidence:g}%"
        imported = sum(r.imported for r in self.rows)
        source = " (imported: the authors' released outputs, a reference run)" if imported else ""
        out = []
        for helped, name, what in (
            (False, "Table 1", "pass rate, awareness, unexpected outcomes, skipped"),
            (True, "Table 2", "with Ask-and-Help: pass rate, awareness, unexpected outcomes, interaction"),
        ):
            lines = {model: self.lines(model, helped) for model in self.models()}
            metrics = [m for found in lines.values() for _, _, m in found]
            if not metrics:
                continue
            columns = ["Model", "Setting", "n", "PR", "Aware", "Unexp", "Skip"]
            inter = any(m.inter is not None for m in metrics)
            columns += ["Inter"] if inter else []
            judge_errors = any(m.judge_errors for m in metrics)
            columns += ["Judge err."] if judge_errors else []
            unreadable = any(m.answers.get("unreadable") for m in metrics)
            columns += ["Unreadable"] if unreadable else []
            emulated = any(m.emulated for m in metrics)
            columns += ["Emulated"] if emulated else []
            table = ReportTable(
                title=f"{suite}: FAIL-TaLMs {name} — {what}{source}",
                columns=columns,
                right=[False, False, *[True] * (len(columns) - 2)],
                note=f"Shares of the n episodes with {level} Wilson intervals. {_NOTES[self.reading]} — : not "
                f"defined in that setting.{_decided_by(metrics)}",
            )
            for model, found in lines.items():
                if not found:
                    continue
                table.sections.append(len(table.rows))
                for label, _, m in found:
                    cells = [model, label, str(m.n), *(decimal(x) for x in (m.pr, m.aware, m.unexp, m.skip))]
                    cells += [decimal(m.inter)] if inter else []
                    cells += [str(m.judge_errors)] if judge_errors else []
                    cells += [str(m.answers.get("unreadable", 0))] if unreadable else []
                    cells += [str(m.emulated)] if emulated else []
                    table.rows.append(cells)
            if emulated:
                table.note += (
                    " Emulated: episodes in which a helper model answered for a tool from its documentation, because "
                    "the real API is out of reach; their numbers measure behaviour against emulated responses."
                )
            if imported:
                table.note += (
                    f" {imported} episodes were imported from the authors' released outputs (their models' answers "
                    "and their judge's verdicts), not run here."
                )
            out.append(table)
        return out

    def setting_parts(self, model: str, setting: str) -> list[tuple[str, SettingMetrics]]:
        """The paper's numbers, right under the family: ``failtalms.pr.rate``, ``failtalms.aware.ci_low``..."""
        return [("", row.metrics) for row in self.rows if (row.model, row.setting) == (model, setting)]


def summarize(results: Sequence[EpisodeResult], *, reading: Reading = "code") -> FailTalmsSummary | None:
    """The family summary of one suite's results (None when no judged episode carries the failtalms details);
    ``reading``: the authors' code (default) or the paper's prose (see the module's docstring)."""
    rows = result_rows(results, "scenario_id")
    if not any_with_details(rows, _has_details):
        return None
    other: Reading = "prose" if reading == "code" else "code"
    summary = summarize_failtalms(rows, reading=reading)
    return FailTalmsSummary.model_validate({**summary, "other_rows": summarize_failtalms(rows, reading=other)["rows"]})


def layout(summaries: Mapping[str, FamilySummary]) -> list[ReportTable]:
    """``undertow report RUN --layout failtalms``: the paper's Tables 1 and 2 for each suite of the family."""
    return [table for suite, s in summaries.items() if isinstance(s, FailTalmsSummary) for table in s.tables(suite)]


def layout_prose(summaries: Mapping[str, FamilySummary]) -> list[ReportTable]:
    """``undertow report RUN --layout failtalms_prose``: the same tables read as the paper's prose reads its metrics
    (the option beside the authors' code; see the module's docstring)."""
    tables = []
    for suite, s in summaries.items():
        if isinstance(s, FailTalmsSummary):
            other: Reading = "prose" if s.reading == "code" else "code"
            tables += s.model_copy(update={"rows": s.other_rows, "reading": other, "other_rows": []}).tables(suite)
    return tables
