"""The ``liveapi`` family's summary: per model × formulation × mode × parsing × setting, micro-averaged intent and slot
scores, completion with its interval, the error categories and the agent measures, laid out as the paper's Tables 3,
4 and 6 and its Figure 2 (as a table), and the ``live_api`` layout across a run's suites."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import Field

from undertow.env_core.families import FamilySummary, ReportTable, StackedBars
from undertow.env_core.model import EpisodeResult
from undertow.scoring.family_summary import (
    ModelSettingSummary,
    Rate,
    Row,
    StrictModel,
    any_with_details,
    category_counts,
    count,
    failures_figure,
    flag,
    judged,
    missing_table,
    n_range,
    rate,
    result_rows,
    share_bar,
)
from undertow.scoring.liveapi.metrics import (
    COLUMN_OF,
    DIRECT,
    DIRECT_MODES,
    ERROR_CATEGORIES,
    FAMILY_NAME,
    FORMULATIONS,
    PRF,
    REACT,
    SQL,
    STRICT,
    TOOLS,
    UNKNOWN,
    formulation_of_id,
)

# ---------------------------------------------------------------------------------------------------------------
# Summary


class Micro(StrictModel):
    """A micro-averaged precision / recall / F1: counts summed over episodes, then divided. None where nothing
    was there to judge (slots of a group with no matched call)."""

    matched: int
    predicted: int
    gold: int
    precision: float | None
    recall: float | None
    f1: float | None


class Errors(StrictModel):
    """Failed episodes by BFCL category: counts and shares of the failures (fractions)."""

    n_failures: int
    counts: dict[str, int]
    shares: dict[str, float | None]


class Agent(StrictModel):
    """The ReAct measures of a group: the mean number of loops, and the shares of all valid episodes that failed
    out of budget, stuck, or neither (unclassified)."""

    avg_loops: float | None
    out_of_budget: float | None
    stuck: float | None
    unclassified: float | None
    n_out_of_budget: int
    n_stuck: int
    n_unclassified: int
    no_call: float | None = None  # answered without any tool call (a share of all valid episodes)
    n_no_call: int = 0


class LiveApiRow(StrictModel):
    """One model × formulation × mode × parsing × setting of a suite."""

    model: str
    formulation: str
    mode: str
    parsing: str = STRICT
    setting: str
    n: int  # every episode, infra and config errors included
    n_valid: int  # judged episodes with the liveapi details
    intent: Micro
    slot: Micro
    completion: Rate
    errors: Errors
    agent: Agent


def _flag(value: Any) -> bool:
    return bool(flag(value))  # absent (None, or NaN in a missing cell) is False


def micro(matched: int, predicted: int, gold: int, *, judged: bool = True) -> Micro:
    """Micro-averaged scores from summed counts (:class:`PRF`); all None when ``judged`` is False."""
    if not judged:
        return Micro(matched=matched, predicted=predicted, gold=gold, precision=None, recall=None, f1=None)
    prf = PRF.of(matched, predicted, gold)
    return Micro(matched=matched, predicted=predicted, gold=gold, precision=prf.precision, recall=prf.recall, f1=prf.f1)


def _has_details(row: Row) -> bool:
    return row.get("formulation") is not None


def _summary_row(key: Key, members: list[Row], confidence: float) -> dict[str, Any]:
    model, formulation, mode, parsing, setting = key
    valid = [r for r in members if judged(r) and _has_details(r)]

    def total(name: str) -> int:
        return sum(count(r.get(name)) for r in valid)

    done = [_flag(r.get("completed")) for r in valid]
    failures = [r for r, ok in zip(valid, done, strict=True) if not ok]
    counts = category_counts(failures, "error_category", ERROR_CATEGORIES)
    measures = ("out_of_budget", "stuck", "unclassified", "answered_without_calling")
    flags = {name: sum(_flag(r.get(name)) for r in valid) for name in measures}

    def share(k: int) -> float | None:
        return k / len(valid) if valid else None

    return {
        "model": model,
        "formulation": formulation,
        "mode": mode,
        "parsing": parsing,
        "setting": setting,
        "n": len(members),
        "n_valid": len(valid),
        "intent": micro(total("intent_matched"), total("predicted_calls"), total("gold_calls"), judged=bool(valid)),
        "slot": micro(
            total("slot_matched"), total("slot_predicted"), total("slot_gold"), judged=total("intent_matched") > 0
        ),
        "completion": rate(sum(done), len(valid), confidence),
        "errors": {
            "n_failures": len(failures),
            "counts": counts,
            "shares": {c: (v / len(failures) if failures else None) for c, v in counts.items()},
        },
        "agent": {
            "avg_loops": sum(count(r.get("loops")) for r in valid) / len(valid) if valid else None,
            "out_of_budget": share(flags["out_of_budget"]),
            "stuck": share(flags["stuck"]),
            "unclassified": share(flags["unclassified"]),
            "n_out_of_budget": flags["out_of_budget"],
            "n_stuck": flags["stuck"],
            "n_unclassified": flags["unclassified"],
            "no_call": share(flags["answered_without_calling"]),
            "n_no_call": flags["answered_without_calling"],
        },
    }


Key = tuple[str, str, str, str, str]  # model, formulation, mode, parsing, setting


def summarize_liveapi(rows: Sequence[Row], *, confidence: float = 0.95) -> dict[str, Any]:
    """The summary data of one suite from per-episode dicts (``model``, ``setting``, ``outcome``, ``scenario_id``
    and the :func:`episode_details` keys), one row per model × formulation × mode × parsing × setting in order of
    first appearance. Episodes that are not judged (infra and config errors) count in ``n`` only; such an episode
    has no details, so it joins the row of its model, formulation (from its id) and setting with the first mode
    and parsing seen there (a suite is loaded for one mode, so there is one), else a row of mode ``unknown``."""
    keyed: list[tuple[Key | None, Row]] = []
    variants: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for r in rows:
        formulation = r.get("formulation") or formulation_of_id(str(r.get("scenario_id", "")))
        base = (str(r["model"]), str(formulation), str(r["setting"]))
        mode = r.get("mode")
        if isinstance(mode, str) and mode:
            parsing = r.get("parsing")
            variant = (mode, parsing if isinstance(parsing, str) and parsing else STRICT)
            seen = variants.setdefault(base, [])
            if variant not in seen:
                seen.append(variant)
            keyed.append(((base[0], base[1], *variant, base[2]), r))
        else:
            keyed.append((None, {**r, "_base": base}))
    groups: dict[Key, list[Row]] = {}
    for key, r in keyed:
        if key is None:
            base = r["_base"]
            known = variants.get(base)
            mode, parsing = known[0] if known else (UNKNOWN, STRICT)
            key = (base[0], base[1], mode, parsing, base[2])
        groups.setdefault(key, []).append(r)
    return {
        "family": FAMILY_NAME,
        "confidence": confidence,
        "rows": [_summary_row(key, members, confidence) for key, members in groups.items()],
    }


def decimal(value: float | None, digits: int = 2) -> str:
    """A rate or score as the paper prints it: ``0.42``; a dash when undefined."""
    return "—" if value is None else f"{value:.{digits}f}"


def interval(value: Rate | None, digits: int = 2) -> str:
    """The Wilson interval of a rate: ``0.30–0.55``."""
    if value is None or value.ci_low is None or value.ci_high is None:
        return "—"
    return f"{value.ci_low:.{digits}f}–{value.ci_high:.{digits}f}"


_TITLES = {"slot": "SLOT", "sel": "SEL", "rest": "REST"}


def _formulation_order(name: str) -> int:
    return FORMULATIONS.index(name) if name in FORMULATIONS else len(FORMULATIONS)


def _sorted(found: Iterable[tuple[str, LiveApiRow]]) -> list[tuple[str, LiveApiRow]]:
    """By formulation in the paper's order (SLOT, SEL, REST), run order within (sorted is stable)."""
    return sorted(found, key=lambda item: _formulation_order(item[1].formulation))


def _sectioned(
    title: str,
    columns: list[str],
    right: list[bool],
    found: list[tuple[str, LiveApiRow]],
    cells: Callable[[str, LiveApiRow], list[str]],
    note: str,
) -> ReportTable:
    """One section per formulation, a Dataset column first; Suite and Setting columns only when the rows have
    several."""
    several_suites = len({suite for suite, _ in found}) > 1
    several_settings = len({row.setting for _, row in found}) > 1
    extra = [*(["Suite"] if several_suites else []), *(["Setting"] if several_settings else [])]
    table = ReportTable(
        title=title,
        columns=["Dataset", columns[0], *extra, *columns[1:]],
        right=[False, right[0], *[False] * len(extra), *right[1:]],
        note=note,
    )
    previous = None
    for suite, row in _sorted(found):
        if row.formulation != previous:
            table.sections.append(len(table.rows))
            previous = row.formulation
        first, *rest = cells(suite, row)
        where = [*([suite] if several_suites else []), *([row.setting] if several_settings else [])]
        table.rows.append([_TITLES.get(row.formulation, row.formulation), first, *where, *rest])
    return table


def _n_range(rows: Iterable[LiveApiRow]) -> str:
    return n_range(row.n_valid for row in rows)


def model_label(row: LiveApiRow) -> str:
    """The model as a table row names it: ``(Tools)`` for native tool calling (the paper's GPT-4o rows),
    ``(lenient)`` for replies read with the lenient parser (an undertow option, never the paper's reading)."""
    marks = [*(["Tools"] if row.mode == TOOLS else []), *(["lenient"] if row.parsing != STRICT else [])]
    return f"{row.model} ({', '.join(marks)})" if marks else row.model


def table3(found: list[tuple[str, LiveApiRow]], title: str = "Table 3", confidence: float = 0.95) -> ReportTable | None:
    """Direct invocation: intent and slot P / R / F1 (micro-averaged) and the completion rate with its Wilson
    interval, per model and formulation; None without direct-mode rows."""
    direct = [(suite, row) for suite, row in found if row.mode in DIRECT_MODES]
    if not direct:
        return None

    def cells(suite: str, row: LiveApiRow) -> list[str]:
        i, s = row.intent, row.slot
        scores = [decimal(v) for v in (i.precision, i.recall, i.f1, s.precision, s.recall, s.f1)]
        return [model_label(row), *scores, decimal(row.completion.rate), interval(row.completion), str(row.n_valid)]

    level = f"{100 * confidence:g}%"
    note = (
        "Direct invocation (one reply plans every call; the tools in the prompt, or in the request's tools "
        "parameter for '(Tools)' rows). Replies are read as the calls alone (prose around them is an instruction-"
        "alignment failure); '(lenient)' rows dug calls out of reasoning text too. Intent: position-aware "
        "precision / recall / F1 of the calls (tool and occurrence); Slot: of the arguments of matched calls only "
        "(data sources compared by the call that produced them); both micro-averaged over episodes. Compl. Rate: "
        "the calls returned the gold rows (an answer given without calling completes nothing); CI: its Wilson "
        f"{level} interval. n per row: {_n_range(r for _, r in direct)} valid episodes."
    )
    columns = ["Model", "Intent P", "Intent R", "Intent F1", "Slot P", "Slot R", "Slot F1", "Compl. Rate", "CI", "n"]
    return _sectioned(
        f"{title} — direct invocation: intent, slots and completion",
        columns,
        [False, *[True] * 9],
        direct,
        cells,
        note,
    )


def _base_completion(row: LiveApiRow, suite: str, everything: Sequence[tuple[str, LiveApiRow]]) -> Rate | None:
    """The same model's direct completion on the same formulation: same setting (same suite first), else the one
    direct row of that model and formulation."""
    direct = [
        (s, r)
        for s, r in everything
        if (r.mode, r.parsing) == (DIRECT, STRICT) and (r.model, r.formulation) == (row.model, row.formulation)
    ]
    same = [(s, r) for s, r in direct if r.setting == row.setting]
    for candidates in ([r for s, r in same if s == suite], [r for _, r in same]):
        if candidates:
            return candidates[0].completion
    return direct[0][1].completion if len(direct) == 1 else None


def table4(found: list[tuple[str, LiveApiRow]], title: str = "Table 4") -> ReportTable | None:
    """ReAct agents: base (direct) and agent completion, average loops and the OOB / stuck / unclassified shares,
    per model and formulation; None without agent rows."""
    agents = [(suite, row) for suite, row in found if row.mode not in (*DIRECT_MODES, SQL, UNKNOWN)]
    if not agents:
        return None

    def cells(suite: str, row: LiveApiRow) -> list[str]:
        base = _base_completion(row, suite, found)
        a = row.agent
        name = row.model if row.mode == REACT else f"{row.model} ({row.mode})"
        return [
            name,
            decimal(base.rate if base else None),
            decimal(row.completion.rate),
            interval(row.completion),
            decimal(a.avg_loops),
            decimal(a.out_of_budget),
            decimal(a.stuck),
            decimal(a.unclassified),
            decimal(a.no_call),
            str(row.n_valid),
        ]

    note = (
        "Agents plan one call per turn and see each result. Base Comp.: the same model's direct completion on the "
        "same formulation (— when it was not run); Agent Comp.: the final answer states the rows of the last "
        "data-returning call and those are the gold rows, with its Wilson interval (CI). Avg. Loops: turns per "
        "episode; OOB (the turn budget ran out), Stuck (a failure with the same function called twice or more in "
        "a row) and Unclassified (a failure that is neither) are shares of all episodes, as the paper counts them; "
        "OOB and Stuck can overlap. No Call (undertow's): answered without calling any tool, a part of "
        f"Unclassified. n per row: {_n_range(r for _, r in agents)} valid episodes."
    )
    columns = ["Model", "Base Comp.", "Agent Comp.", "CI", "Avg. Loops", "OOB", "Stuck", "Unclassified", "No Call"]
    return _sectioned(
        f"{title} — ReAct agents: completion and what went wrong",
        [*columns, "n"],
        [False, *[True] * 9],
        agents,
        cells,
        note,
    )


def table6(found: list[tuple[str, LiveApiRow]], title: str = "Table 6") -> ReportTable | None:
    """Completion by calling the APIs (direct invocation) and by writing SQL (the SQL mode) on each formulation's
    questions, per model (appendix B.3); None without SQL-mode rows."""
    sql = [row for _, row in found if row.mode == SQL]
    if not sql:
        return None
    present = [f for f in FORMULATIONS if any(row.formulation == f for row in sql)]
    models = list(dict.fromkeys(row.model for row in sql))

    def completion(model: str, formulation: str, mode: str) -> str:
        rows = [
            r for _, r in found if (r.model, r.formulation, r.mode, r.parsing) == (model, formulation, mode, STRICT)
        ]
        return decimal(rows[0].completion.rate) if len(rows) == 1 else "—"

    table = ReportTable(
        title=f"{title} — completion by calling the APIs and by writing SQL",
        columns=["Model", *[f"{_TITLES[f]} {kind}" for f in present for kind in ("API", "SQL")]],
        right=[False, *[True] * (2 * len(present))],
        note="API: direct invocation's completion (Table 3); SQL: the same questions answered with one SQL query "
        "written from the database's schema, run on the database and scored the same way (its rows against the "
        "gold rows). — where a mode was not run (or ran in several settings).",
    )
    for model in models:
        cells = [completion(model, f, mode) for f in present for mode in (DIRECT, SQL)]
        table.rows.append([model, *cells])
    return table


def _categories(rows: Iterable[LiveApiRow]) -> list[str]:
    rows = list(rows)
    extra = ["uncategorized"] if any(r.errors.counts.get("uncategorized") for r in rows) else []
    return [*ERROR_CATEGORIES, *extra]


def error_table(found: list[tuple[str, LiveApiRow]], title: str = "Figure 2") -> ReportTable | None:
    """Direct invocation failures by BFCL category (shares of the failures), per model and formulation; None
    without a failed direct-mode episode."""
    direct = [(suite, row) for suite, row in found if row.mode in DIRECT_MODES and row.errors.n_failures]
    if not direct:
        return None
    categories = _categories(r for _, r in direct)

    def cells(suite: str, row: LiveApiRow) -> list[str]:
        shares = [decimal(row.errors.shares.get(c)) if c in row.errors.shares else "—" for c in categories]
        return [model_label(row), str(row.errors.n_failures), *shares]

    legend = "; ".join(f"{COLUMN_OF.get(c, c)}: {c}" for c in categories)
    note = (
        "Failed direct-invocation episodes by BFCL category, each failure in the first category that applies "
        "(in column order); shares of the failures. no call: the reply made no call and was taken as the answer "
        "(the paper counts it under instruction alignment; undertow names it apart). other: every call matched "
        f"the gold sequence and the output still differed. Columns — {legend}."
    )
    return _sectioned(
        f"{title} (as a table) — direct invocation failures by category",
        ["Model", "Failures", *[COLUMN_OF.get(c, c) for c in categories]],
        [False, True, *[True] * len(categories)],
        direct,
        cells,
        note,
    )


class LiveApiSummary(ModelSettingSummary):
    """The Live API-Bench numbers of one suite: see :func:`summarize_liveapi`."""

    family: Literal["liveapi"] = "liveapi"
    confidence: float = 0.95
    rows: list[LiveApiRow] = Field(default_factory=list)

    def found(self, suite: str) -> list[tuple[str, LiveApiRow]]:
        """(suite, row) pairs, the input of the table builders."""
        return [(suite, row) for row in self.rows]

    def tables(self, suite: str) -> list[ReportTable]:
        """Table 3 (direct invocation), Table 4 (ReAct agents) and the error categories, each when the suite has
        its data."""
        found = self.found(suite)
        made = [table3(found, f"{suite}: Table 3", self.confidence), table4(found, f"{suite}: Table 4")]
        made += [error_table(found, f"{suite}: Figure 2"), table6(found, f"{suite}: Table 6")]
        return [t for t in made if t is not None]

    def figures(self, suite: str) -> list[StackedBars]:
        """Error categories as stacked shares per model × formulation (direct mode; none when nothing failed)."""
        several_settings = len({r.setting for r in self.rows}) > 1

        def label(row: LiveApiRow) -> str:
            name = f"{model_label(row)}\n{_TITLES.get(row.formulation, row.formulation)}"
            return name + (f" {row.setting}" if several_settings else "")

        return failures_figure(
            "errors",
            f"Tool-calling error categories — {suite}",
            f"BFCL error categories (share of failed direct-invocation episodes) per model and formulation, suite "
            f"{suite}",
            (
                share_bar(label(row), row.errors.counts)
                for _, row in _sorted(self.found(suite))
                if row.mode in DIRECT_MODES
            ),
            "model / formulation",
            order=_categories(self.rows),
        )

    def setting_parts(self, model: str, setting: str) -> list[tuple[str, LiveApiRow]]:
        """A row per formulation and mode: ``liveapi.<formulation>.<mode>.completion.rate`` and so on."""
        return [
            (f"{row.formulation}.{row.mode}", row) for row in self.rows if (row.model, row.setting) == (model, setting)
        ]


def summarize(results: Sequence[EpisodeResult]) -> LiveApiSummary | None:
    """The family summary of one suite's results (None when no judged episode carries the liveapi details)."""
    rows = result_rows(results, "scenario_id")
    if not any_with_details(rows, _has_details):
        return None
    return LiveApiSummary.model_validate(summarize_liveapi(rows))


# ---------------------------------------------------------------------------------------------------------------
# The paper's tables across a run's suites: ``undertow report RUN --layout live_api``


def live_api_layout(summaries: Mapping[str, FamilySummary]) -> list[ReportTable]:
    """Tables 3 and 4 of the paper and its Figure 2 as a table, from the liveapi summaries of a run's suites
    (keyed by suite label): one section per formulation (SLOT, SEL, REST), one row per model, decimals with two
    places. A table the run has no data for is one line saying what it needs."""
    ours = [(label, s) for label, s in summaries.items() if isinstance(s, LiveApiSummary)]
    found = [pair for label, s in ours for pair in s.found(label)]
    confidence = ours[0][1].confidence if ours else 0.95
    return [
        table3(found, confidence=confidence)
        or missing_table("Table 3", "direct-invocation episodes (agent protocol direct)"),
        table4(found) or missing_table("Table 4", "ReAct agent episodes (agent protocol react)"),
        error_table(found) or missing_table("Figure 2", "failed direct-invocation episodes"),
        table6(found) or missing_table("Table 6", "SQL-mode episodes (suite option mode: sql)"),
    ]


LAYOUTS: dict[str, Callable[[Mapping[str, FamilySummary]], list[ReportTable]]] = {"live_api": live_api_layout}
