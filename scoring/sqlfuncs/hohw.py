"""The paper's tables from a run, laid out as the paper prints them: ``undertow report RUN --layout hohw``.

Each suite is filed by the tool access its results recorded (open world, or closed with k functions listed in all
or n distractors), so a suite's label, an alias included, plays no part."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from undertow.env_core.families import FamilySummary, ReportTable
from undertow.scoring.family_summary import missing_table, n_range
from undertow.scoring.formatting import pct
from undertow.scoring.sqlfuncs.summary import ModelSummary, SettingSummary, SqlfuncsSummary, SuiteAccess, TurnStats

NO_ERRORS, ERRORS = "clean", "first_tried"
HINTED, HINTED_ERRORS = "hinted", "hinted_first_tried"
PAPER_CELL_N = 830  # the paper's cells hold about this many episodes (its test split)


@dataclass(frozen=True)
class _Suite:
    """A suite of the run, filed by the access its results recorded."""

    label: str
    summary: SqlfuncsSummary
    access: SuiteAccess

    @property
    def size(self) -> tuple[int, int]:
        """Sort key of a closed suite: k functions in all first, then +n distractors."""
        functions = self.access.functions
        return (0, functions) if functions is not None else (1, self.access.distractors or 0)

    @property
    def size_label(self) -> str:
        functions = self.access.functions
        return str(functions) if functions is not None else f"+{self.access.distractors or 0}"


def _mean_se(row: SettingSummary | None) -> str:
    """Accuracy in percent with its standard error, as the paper prints it: ``71.4 ± 1.6``."""
    if row is None or row.accuracy is None:
        return "—"
    value = f"{100 * row.accuracy:.1f}"
    return value if row.se is None else f"{value} ± {100 * row.se:.1f}"


def _plain_pct(value: float | None) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{100 * value:.1f}"


def _share(percent: float | None) -> str:
    return "—" if percent is None else f"{percent:.1f}"


def _drop(base: SettingSummary | None, hit: SettingSummary | None) -> str:
    """The paper's "Acc. decrease": the relative drop from ``base`` to ``hit`` accuracy, in percent."""
    if base is None or hit is None or base.accuracy is None or hit.accuracy is None or not base.accuracy:
        return "—"
    return f"{100 * (base.accuracy - hit.accuracy) / base.accuracy:.1f}%"


def _turns(stats: TurnStats | None, part: str = "median") -> str:
    if stats is None:
        return "—"
    if part == "iqr":
        return f"{stats.q1:g}–{stats.q3:g}"
    return f"{getattr(stats, part):g}"


def _n_range(cells: Sequence[SettingSummary | None]) -> str:
    """``12`` or ``10–12``: the valid episodes behind the cells shown."""
    return n_range(c.n_valid for c in cells if c is not None)


def _models(suites: Sequence[_Suite], settings: Sequence[str]) -> list[tuple[_Suite, str, ModelSummary]]:
    """(suite, model, its summary) for every model of ``suites`` that ran any of ``settings``."""
    return [
        (suite, model, data)
        for suite in suites
        for model, data in suite.summary.models.items()
        if any(s in data.settings for s in settings)
    ]


def _with_suite(
    title: str, columns: list[str], right: list[bool], rows: list[tuple[_Suite, list[str]]], note: str
) -> ReportTable:
    """A table whose rows come from one or more suites: a Suite column and a section per suite only when there
    are several."""
    several = len({suite.label for suite, _ in rows}) > 1
    table = ReportTable(
        title=title,
        columns=[*(["Suite"] if several else []), *columns],
        right=[*([False] if several else []), *right],
        note=note,
    )
    previous = None
    for i, (suite, cells) in enumerate(rows):
        if several and suite.label != previous:
            table.sections.append(i)
        previous = suite.label
        table.rows.append([*([suite.label] if several else []), *cells])
    return table


def _accuracy_table(name: str, what: str, suites: Sequence[_Suite], no_errors: str, errors: str) -> ReportTable:
    """Tables 1 and 4: accuracy without and with external errors (mean ± SE) and the relative decrease."""
    found = _models(suites, (no_errors, errors))
    rows, cells = [], []
    for suite, model, data in found:
        base, hit = data.settings.get(no_errors), data.settings.get(errors)
        cells += [base, hit]
        rows.append((suite, [model, _mean_se(base), _mean_se(hit), _drop(base, hit)]))
    absent = [s for s in (no_errors, errors) if not any(s in data.settings for _, _, data in found)]
    note = (
        f"Accuracy (%, right behaviour) ± bootstrap standard error; external errors N: setting {no_errors}, Y: "
        f"{errors}; Acc. decrease = (N − Y) / N. n per cell: {_n_range(cells)} valid episodes."
        + (f" Setting {' and '.join(absent)} not in this run (—)." if absent else "")
    )
    columns = ["Model", "External errors (N)", "External errors (Y)", "Acc. decrease"]
    return _with_suite(f"{name} — {what}", columns, [False, True, True, True], rows, note)


def _failure_columns(categories: Sequence[str]) -> list[str]:
    names = {"search": "Search", "id": "ID", "chaining": "Chaining", "tool_use": "Tool use"}
    names |= {"no_give_up": "No give-up", "other": "Other", "uncategorized": "Uncategorized"}
    return ["Total failures", *(names.get(c, c) for c in categories)]


def _categories(rows: Sequence[SettingSummary], shown: Sequence[str]) -> list[str]:
    """The categories to show: ``shown``, then ours that the paper does not have, uncategorized only if used."""
    extra = ["no_give_up", "other"] + (
        ["uncategorized"] if any(r.errors.counts.get("uncategorized") for r in rows) else []
    )
    return [*shown, *extra]


def _failure_cells(row: SettingSummary, categories: Sequence[str]) -> list[str]:
    errors = row.errors
    return [str(errors.n_failures), *(_share(errors.percent.get(c)) for c in categories)]


def _table2(open_suites: Sequence[_Suite]) -> ReportTable:
    found = [(suite, model, data.settings[ERRORS]) for suite, model, data in _models(open_suites, (ERRORS,))]
    found = [(suite, model, row) for suite, model, row in found if row is not None]
    if not found:
        return missing_table("Table 2", f"{ERRORS} episodes in an open-world suite (access mode open)")
    categories = _categories([row for _, _, row in found], ("search", "id", "chaining", "tool_use"))
    rows = [(suite, [model, *_failure_cells(row, categories)]) for suite, model, row in found]
    note = (
        f"Failures of the {ERRORS} open-world episodes by category (% of failures); No give-up and Other are ours "
        f"(not in the paper). n per cell: {_n_range([row for _, _, row in found])} valid episodes."
    )
    columns = ["Model", *_failure_columns(categories)]
    return _with_suite(
        "Table 2 — failures by category, open world with external errors",
        columns,
        [False, *[True] * (len(columns) - 1)],
        rows,
        note,
    )


def _figure3(closed: Sequence[_Suite]) -> list[ReportTable]:
    """Figure 3 as a table (accuracy by the number of functions listed, per model, without and with errors) and
    Table 3 (the failure breakdown under errors, per number of functions)."""
    found = [s for s in closed if _models([s], (NO_ERRORS, ERRORS))]
    if not found:
        needs = (
            f"closed-world suites (access closed@<k functions> or closed+<n distractors>) run under {NO_ERRORS} "
            f"and {ERRORS}"
        )
        return [missing_table("Figure 3 / Table 3", needs)]
    found = sorted(found, key=lambda s: s.size)
    shared_size = len({s.size_label for s in found}) < len(found)  # two sources at one size: say which is which
    models = list(dict.fromkeys(m for s in found for m in s.summary.models))
    columns = ["Functions", *(["Suite"] if shared_size else [])]
    columns += [f"{m}: {label}" for m in models for label in ("no errors", "errors")]
    figure = ReportTable(
        title="Figure 3 — closed world: accuracy by the number of functions listed, without / with external errors",
        columns=columns,
        right=[True, *([False] if shared_size else []), *[True] * (2 * len(models))],
    )
    cells: list[SettingSummary | None] = []
    for suite in found:
        line = [suite.size_label, *([suite.label] if shared_size else [])]
        for model in models:
            data = suite.summary.models.get(model)
            pair = [data.settings.get(s) if data else None for s in (NO_ERRORS, ERRORS)]
            cells += pair
            line += [_mean_se(cell) for cell in pair]
        figure.rows.append(line)
    figure.note = (
        f"Accuracy (%) ± bootstrap standard error; no errors: setting {NO_ERRORS}, errors: {ERRORS}. Functions: k "
        f"functions listed in all (closed@k), or +n: the solution functions and n distractors (closed+n). n per "
        f"cell: {_n_range(cells)} valid episodes."
    )
    hit = [
        (suite, model, data.settings[ERRORS])
        for suite in found
        for model, data in suite.summary.models.items()
        if ERRORS in data.settings
    ]
    if not hit:
        return [figure, missing_table("Table 3", f"{ERRORS} episodes in closed-world suites")]
    categories = _categories([row for _, _, row in hit], ("id", "chaining", "tool_use"))
    table = ReportTable(
        title="Table 3 — closed world: failures by category with external errors, by the number of functions",
        columns=["Model", "Functions", *(["Suite"] if shared_size else []), *_failure_columns(categories)],
        right=[False, True, *([False] if shared_size else []), *[True] * (len(categories) + 1)],
        note=f"Failures of the {ERRORS} closed-world episodes by category (% of failures). n per cell: "
        f"{_n_range([row for _, _, row in hit])} valid episodes.",
    )
    for model in models:
        if any(name == model for _, name, _ in hit):
            table.sections.append(len(table.rows))
        for suite, name, row in hit:
            if name == model:
                table.rows.append(
                    [model, suite.size_label, *([suite.label] if shared_size else []), *_failure_cells(row, categories)]
                )
    return [figure, table]


def _table5(open_suites: Sequence[_Suite]) -> ReportTable:
    found = [(suite, model, data) for suite, model, data in _models(open_suites, (ERRORS,))]
    if not found:
        return missing_table("Table 5", f"{ERRORS} episodes in an open-world suite (access mode open)")
    rows, neither = [], 0
    for suite, model, data in found:
        single, multi = data.by_backup_plan_calls.get("single"), data.by_backup_plan_calls.get("multi")
        none = data.by_backup_plan_calls.get("none")
        neither += none.n if none else 0
        rows.append(
            (
                suite,
                [
                    model,
                    _plain_pct(single.accuracy if single else None),
                    _plain_pct(multi.accuracy if multi else None),
                    f"{single.n if single else 0}:{multi.n if multi else 0}",
                ],
            )
        )
    note = (
        f"Accuracy (%) of the {ERRORS} open-world episodes by the plan left after the fault: a single call (the "
        "chain was hit) or several (the direct function was hit); the ratio counts episodes."
    )
    if neither:
        note += f" {neither} episode(s) where no solution function was disabled (none was called) are in neither."
    columns = ["Model", "Single call", "Multi call", "Ratio (single:multi)"]
    return _with_suite(
        "Table 5 — accuracy by the number of calls in the backup plan",
        columns,
        [False, True, True, True],
        rows,
        note,
    )


def _give_up_table(suites: Sequence[_Suite]) -> ReportTable:
    """Per model, suite and setting: giving up, running out of turns, and the turn distribution (Figure 5)."""
    several = len(suites) > 1
    columns = ["Model", *(["Suite"] if several else []), "Setting", "Solvable", "n", "Gave up", "Out of turns"]
    columns += ["Turns", "IQR", "Correct", "Incorrect"]
    table = ReportTable(
        title="Giving up and turns per episode (Figure 5)",
        columns=columns,
        right=[False, *([False] if several else []), False, False, *[True] * 7],
        note="Solvable: no where only giving up was right. Gave up: ended before the turn budget without an "
        "answer; Out of turns: the budget ran out (budget_exhausted, not giving up); shares of valid episodes. "
        "Turns: the median number of turns, IQR its quartiles; Correct / Incorrect: the median of correct and of "
        "incorrect episodes. The HTML report draws these distributions (the turns figure).",
    )
    models = list(dict.fromkeys(m for s in suites for m in s.summary.models))
    for model in models:
        table.sections.append(len(table.rows))
        for suite in suites:
            data = suite.summary.models.get(model)
            for setting, row in (data.settings if data else {}).items():
                split = row.turn_distribution
                table.rows.append(
                    [
                        model,
                        *([suite.label] if several else []),
                        setting,
                        "no" if row.expects_give_up else "yes",
                        str(row.n_valid),
                        pct(row.gave_up_share),
                        pct(row.budget_exhausted_share),
                        _turns(split.all if split else None),
                        _turns(split.all if split else None, "iqr"),
                        _turns(split.correct if split else None),
                        _turns(split.incorrect if split else None),
                    ]
                )
    return table


def _about(suites: Sequence[_Suite], unknown: Sequence[str]) -> ReportTable:
    """The layout's first line: how answers were matched, and how many episodes stand behind a cell."""
    modes: dict[str, list[str]] = {}
    for suite in suites:
        for mode in suite.summary.answers:
            modes.setdefault(mode, []).append(suite.label)
    if len(modes) == 1:
        matching = next(iter(modes))
    elif modes:
        matching = "mixed — " + "; ".join(f"{m} in {', '.join(labels)}" for m, labels in sorted(modes.items()))
    else:
        matching = "none (no scored episode)"
    cells = [row for s in suites for data in s.summary.models.values() for row in data.settings.values()]
    ns = sorted({c.n_valid for c in cells})
    if not ns:
        size = "no valid episodes"
    else:
        subset = "a subset of the benchmark" if ns[-1] < PAPER_CELL_N else "the paper's scale"
        size = f"{_n_range(cells)} valid episodes per cell (the paper: about {PAPER_CELL_N}, its test split"
        size += f"; this is {subset})"
    note = f"Answers matched: {matching}. {size}."
    if unknown:
        note += f" Suites whose results do not record their tool access (an older run), left out: {', '.join(unknown)}."
    return ReportTable(title="HoHW layout", columns=[], note=note)


def hohw_layout(summaries: Mapping[str, FamilySummary]) -> list[ReportTable]:
    """The paper's tables from the sqlfuncs summaries of a run's suites (keyed by suite label), laid out as the
    paper prints them: a line on answer matching and sample size; Table 1 (open world, accuracy without / with
    external errors and the relative decrease); Table 2 (its failures by category); Figure 3 as a table and
    Table 3 (closed world by the number of functions listed); Table 4 (question hints); Table 5 (single- against
    multi-call backup plans); and giving up with the turn distributions (Figure 5). Which suite feeds which
    table is the tool access its results recorded (``SqlfuncsSummary.access``), whatever its label says. A table
    the run has no data for is one line saying what it needs."""
    suites, unknown = [], []
    for label, summary in summaries.items():
        if not isinstance(summary, SqlfuncsSummary):
            continue
        if summary.access is not None:
            suites.append(_Suite(label, summary, summary.access))
        else:
            unknown.append(label)
    open_suites = [s for s in suites if s.access.mode == "open"]
    closed = [s for s in suites if s.access.mode == "closed"]
    open_needs = f"an open-world suite (access mode open) run under {NO_ERRORS} or {ERRORS}"
    tables = [_about(suites, unknown)]
    if _models(open_suites, (NO_ERRORS, ERRORS)):
        what = "open world: accuracy without / with external errors"
        tables.append(_accuracy_table("Table 1", what, open_suites, NO_ERRORS, ERRORS))
    else:
        tables.append(missing_table("Table 1", open_needs))
    tables.append(_table2(open_suites))
    tables += _figure3(closed)
    if _models(suites, (HINTED, HINTED_ERRORS)):
        what = "with question hints: accuracy without / with external errors"
        tables.append(_accuracy_table("Table 4", what, suites, HINTED, HINTED_ERRORS))
    else:
        tables.append(missing_table("Table 4", f"the settings {HINTED} and {HINTED_ERRORS}"))
    tables.append(_table5(open_suites))
    if suites:
        tables.append(_give_up_table(suites))
    else:
        tables.append(missing_table("The give-up table", "scored sqlfuncs episodes"))
    return tables
