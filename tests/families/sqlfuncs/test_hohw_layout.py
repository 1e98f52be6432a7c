"""`undertow report RUN --layout hohw`: the paper's tables from the sqlfuncs summaries of a run, checked cell by cell
against numbers computed by hand from episode rows written here; suites filed by the tool access their results
record (not by their labels); the give-up measure and the turn distributions; the missing-data notes; the
unknown-layout error; the turns figure and the HTML report; and the command on a real run store."""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from helpers.builders import episode_result
from helpers.cli import invoke as cli
from helpers.spider import make_spider

from undertow.cluster import api
from undertow.cluster.config import SweepConfig
from undertow.cluster.plan import plan_sweep
from undertow.cluster.report import LayoutView, figures, render_html
from undertow.cluster.report.plots import family_figure
from undertow.cluster.store import RunStore, result_from_row
from undertow.env_core.errors import ConfigError
from undertow.env_core.families import BoxPlots, FamilySummary, ReportTable, family_summaries, get_family
from undertow.env_core.model import EpisodeResult
from undertow.scoring.analysis import analyse
from undertow.scoring.sqlfuncs import SqlfuncsSummary, SuiteAccess
from undertow.scoring.stats import bootstrap_standard_error
from undertow.workers.runner import run_shard

OPEN, C3, C9 = "spider:open", "spider:closed@3", "spider:closed@9"
# the tool access each suite's results record, as the runner writes it (EpisodeResult.access_*)
ACCESS: dict[str, dict[str, Any]] = {
    OPEN: {"access_mode": "open", "access_distractors": 0},
    C3: {"access_mode": "closed", "access_functions": 3, "access_distractors": 0},
    C9: {"access_mode": "closed", "access_functions": 9, "access_distractors": 0},
}
_ids = iter(range(1_000_000))


def ep(
    model: str,
    suite: str,
    setting: str,
    correct: bool,
    category: str | None = None,
    *,
    turns: int = 3,
    backup: int | None = None,
    outcome: str = "scored",
    gave_up: bool = False,
    expected: bool = False,
    answers: str = "strict",
) -> EpisodeResult:
    """One episode as the runner stores it, with its suite's access and the sqlfuncs details the summary reads."""
    i = next(_ids)
    return episode_result(
        i,
        model=model,
        suite=suite,
        family="sqlfuncs",
        setting=setting,
        scenario_id=f"q{i}",
        outcome=outcome,
        **ACCESS[suite],
        correct=correct,
        solved=correct and not expected,
        gave_up=gave_up,
        expected_give_up=expected,
        n_turns=turns,
        answers=answers,
        details={
            "error_category": None if correct else category,
            "backup_plan_calls": backup,
            "search_calls": 1,
            "solution_seen_in_search": None,
        },
    )


def open_world(answers: str = "strict") -> list[EpisodeResult]:
    rows = []
    # no errors: m1 3 of 4 (correct in 2, 3 and 4 turns, wrong in 8), m2 2 of 4; an infra_error never counts
    rows += [ep("m1", OPEN, "clean", True, turns=t, answers=answers) for t in (2, 3, 4)]
    rows += [ep("m1", OPEN, "clean", False, "search", turns=8, answers=answers)]
    rows += [ep("m1", OPEN, "clean", True, outcome="infra_error", turns=1, answers=answers)]
    rows += [ep("m2", OPEN, "clean", c, None if c else "id", answers=answers) for c in (True, True, False, False)]
    # first_tried: m1 2 of 5 (single-call backups 1 of 2, multi-call 1 of 3), m2 0 of 4 (one with nothing disabled)
    rows += [ep("m1", OPEN, "first_tried", True, backup=1), ep("m1", OPEN, "first_tried", False, "search", backup=1)]
    rows += [ep("m1", OPEN, "first_tried", False, "id", backup=2), ep("m1", OPEN, "first_tried", True, backup=2)]
    rows += [ep("m1", OPEN, "first_tried", False, "chaining", backup=2)]
    rows += [ep("m2", OPEN, "first_tried", False, "tool_use", backup=1), ep("m2", OPEN, "first_tried", False, "search")]
    rows += [ep("m2", OPEN, "first_tried", False, c, backup=2) for c in ("search", "id")]
    return [r.model_copy(update={"answers": answers}) for r in rows]


def hinted() -> list[EpisodeResult]:
    both = [ep("m1", OPEN, "hinted", True) for _ in range(2)]
    both += [ep("m1", OPEN, "hinted_first_tried", True, backup=1), ep("m1", OPEN, "hinted_first_tried", False, "id")]
    return both


def closed_world() -> list[EpisodeResult]:
    rows = [ep("m1", C3, "clean", True) for _ in range(2)]  # 3 functions: m1 2 of 2 and 1 of 2; m2 0 of 1 clean
    rows += [ep("m1", C3, "first_tried", True, backup=2), ep("m1", C3, "first_tried", False, "tool_use", backup=1)]
    rows += [ep("m2", C3, "clean", False, "id")]
    rows += [ep("m1", C9, "clean", c, None if c else "chaining") for c in (True, False)]  # 9 functions: 1/2, 0/2
    rows += [ep("m1", C9, "first_tried", False, c, backup=2) for c in ("id", "chaining")]
    # only distractors: one gives up (right), one runs out of turns, one answers anyway
    rows += [ep("m1", C3, "distractors_only", True, turns=2, gave_up=True, expected=True)]
    rows += [ep("m1", C3, "distractors_only", False, "no_give_up", turns=10, outcome="budget_exhausted", expected=True)]
    rows += [ep("m1", C3, "distractors_only", False, "no_give_up", turns=4, expected=True)]
    return rows


def layout(results: list[EpisodeResult]) -> list[ReportTable]:
    return get_family("sqlfuncs").layouts["hohw"](family_summaries(results))  # type: ignore[attr-defined, no-any-return]


def table(tables: list[ReportTable], start: str) -> ReportTable:
    found = [t for t in tables if t.title.startswith(start)]
    assert len(found) == 1, [t.title for t in tables]
    return found[0]


def se(*outcomes: int) -> str:
    """The "± SE" part of a cell: the bootstrap standard error of these 0/1 outcomes, in percent."""
    return f"{100 * bootstrap_standard_error([float(x) for x in outcomes]):.1f}"


@pytest.fixture(scope="module")
def tables() -> list[ReportTable]:
    return layout(open_world() + hinted() + closed_world())


# ---------------------------------------------------------------------------------------------------------------
# The summary: standard error, giving up, turns, answer matching


def test_the_summary_carries_the_standard_error_giving_up_and_turn_distributions() -> None:
    summaries = family_summaries(open_world() + closed_world())
    summary = summaries[OPEN]
    assert isinstance(summary, SqlfuncsSummary) and summary.answers == ["strict"]
    clean = summary.models["m1"].settings["clean"]
    assert (clean.n, clean.n_valid, clean.accuracy) == (5, 4, 0.75)
    assert clean.se == bootstrap_standard_error([1.0, 1.0, 1.0, 0.0])
    assert clean.se == pytest.approx(math.sqrt(0.75 * 0.25 / 4), rel=0.03)  # the binomial standard error
    turns = clean.turn_distribution
    assert turns is not None and turns.all is not None and turns.correct is not None and turns.incorrect is not None
    # [2, 3, 4, 8]: quartiles interpolate between the sorted values
    assert turns.all.model_dump() == {"n": 4, "min": 2, "q1": 2.75, "median": 3.5, "q3": 5.0, "max": 8, "mean": 4.25}
    assert (turns.correct.n, turns.correct.median, turns.incorrect.n, turns.incorrect.median) == (3, 3.0, 1, 8.0)
    closed = summaries[C3]
    assert isinstance(closed, SqlfuncsSummary)
    impossible = closed.models["m1"].settings["distractors_only"]
    assert (impossible.n_gave_up, impossible.n_budget_exhausted, impossible.expects_give_up) == (1, 1, True)
    assert impossible.gave_up_share == pytest.approx(1 / 3)
    assert impossible.budget_exhausted_share == pytest.approx(1 / 3)
    assert not closed.models["m1"].settings["clean"].expects_give_up
    # Figure 5 (right) pools the settings with a solution: distractors_only is left out
    solvable = closed.models["m1"].turns_solvable
    assert solvable is not None and solvable.all is not None and solvable.all.n == 4


def test_the_bootstrap_standard_error_is_seeded_and_close_to_the_binomial_one() -> None:
    values = [1.0] * 30 + [0.0] * 70
    first = bootstrap_standard_error(values)
    assert first == bootstrap_standard_error(values) != bootstrap_standard_error(values, seed=1)
    assert first == pytest.approx(math.sqrt(0.3 * 0.7 / 100), rel=0.03)
    assert math.isnan(bootstrap_standard_error([])) and bootstrap_standard_error([1.0, 1.0]) == 0.0
    with pytest.raises(ValueError, match="resamples must be at least 1"):
        bootstrap_standard_error(values, resamples=0)


# ---------------------------------------------------------------------------------------------------------------
# The tables, cell by cell


def test_the_first_line_names_the_answer_matching_and_the_sample_size(tables: list[ReportTable]) -> None:
    about = tables[0]
    assert not about.rows
    assert about.note.startswith("Answers matched: strict. 1–5 valid episodes per cell (the paper: about 830")
    assert "a subset of the benchmark" in about.note


def test_mixed_answer_matching_is_named_per_suite() -> None:
    note = layout(open_world(answers="lenient") + closed_world())[0].note
    assert note.startswith(f"Answers matched: mixed — lenient in {OPEN}; strict in {C3}, {C9}.")


def test_table_1_open_world_accuracy_with_and_without_errors(tables: list[ReportTable]) -> None:
    t1 = table(tables, "Table 1")
    assert t1.columns == ["Model", "External errors (N)", "External errors (Y)", "Acc. decrease"]
    assert t1.rows == [
        ["m1", f"75.0 ± {se(1, 1, 1, 0)}", f"40.0 ± {se(1, 0, 0, 1, 0)}", "46.7%"],  # (75 - 40) / 75
        ["m2", f"50.0 ± {se(1, 1, 0, 0)}", "0.0 ± 0.0", "100.0%"],
    ]
    assert "n per cell: 4–5 valid episodes" in t1.note


def test_table_2_failures_by_category(tables: list[ReportTable]) -> None:
    t2 = table(tables, "Table 2")
    assert t2.columns == ["Model", "Total failures", "Search", "ID", "Chaining", "Tool use", "No give-up", "Other"]
    assert t2.rows == [
        ["m1", "3", "33.3", "33.3", "33.3", "0.0", "0.0", "0.0"],
        ["m2", "4", "50.0", "25.0", "0.0", "25.0", "0.0", "0.0"],
    ]


def test_figure_3_and_table_3_pivot_the_closed_world_over_the_number_of_functions(tables: list[ReportTable]) -> None:
    figure = table(tables, "Figure 3")
    assert figure.columns == ["Functions", "m1: no errors", "m1: errors", "m2: no errors", "m2: errors"]
    assert figure.rows == [
        ["3", "100.0 ± 0.0", f"50.0 ± {se(1, 0)}", "0.0 ± 0.0", "—"],
        ["9", f"50.0 ± {se(1, 0)}", "0.0 ± 0.0", "—", "—"],
    ]
    t3 = table(tables, "Table 3")
    assert t3.columns == [
        "Model", "Functions", "Total failures", "ID", "Chaining", "Tool use", "No give-up", "Other"
    ]  # fmt: skip
    assert t3.rows == [
        ["m1", "3", "1", "0.0", "0.0", "100.0", "0.0", "0.0"],
        ["m1", "9", "2", "50.0", "50.0", "0.0", "0.0", "0.0"],
    ]


def test_closed_suites_with_distractors_pivot_on_the_number_of_distractors() -> None:
    moved = {C3: ("spider:closed+6", 6), C9: ("spider", 0)}
    rows = [
        r.model_copy(
            update={"suite": moved[r.suite][0], "access_functions": None, "access_distractors": moved[r.suite][1]}
        )
        for r in closed_world()
    ]
    figure = table(layout(rows), "Figure 3")
    assert [row[0] for row in figure.rows] == ["+0", "+6"]
    assert figure.rows[1][1:3] == ["100.0 ± 0.0", f"50.0 ± {se(1, 0)}"]


def test_a_suite_is_filed_by_its_recorded_access_whatever_its_label() -> None:
    aliased = [r.model_copy(update={"suite": "my:alias"}) for r in open_world()]
    t1 = table(layout(aliased), "Table 1")
    assert [row[0] for row in t1.rows] == ["m1", "m2"] and t1.rows[0][3] == "46.7%"
    closed = [r.model_copy(update={"suite": "closed-as-open:open"}) for r in closed_world() if r.suite == C3]
    assert [row[0] for row in table(layout(closed), "Figure 3").rows] == ["3"]  # the label says open: not read


def test_table_4_question_hints(tables: list[ReportTable]) -> None:
    t4 = table(tables, "Table 4")
    assert t4.columns == ["Model", "External errors (N)", "External errors (Y)", "Acc. decrease"]
    assert t4.rows == [["m1", "100.0 ± 0.0", f"50.0 ± {se(1, 0)}", "50.0%"]]
    assert "N: setting hinted, Y: hinted_first_tried" in t4.note


def test_table_5_single_against_multi_call_backup_plans(tables: list[ReportTable]) -> None:
    t5 = table(tables, "Table 5")
    assert t5.columns == ["Model", "Single call", "Multi call", "Ratio (single:multi)"]
    assert t5.rows == [["m1", "50.0", "33.3", "2:3"], ["m2", "0.0", "0.0", "1:2"]]
    assert "1 episode(s) where no solution function was disabled (none was called) are in neither." in t5.note


def test_the_give_up_table(tables: list[ReportTable]) -> None:
    give_up = table(tables, "Giving up and turns")
    assert give_up.columns == [
        "Model", "Suite", "Setting", "Solvable", "n", "Gave up", "Out of turns", "Turns", "IQR", "Correct", "Incorrect"
    ]  # fmt: skip
    rows = {(r[0], r[1], r[2]): r[3:] for r in give_up.rows}
    # gave up 1 of 3, ran out of turns 1 of 3 (not giving up); turns [2, 4, 10]: median 4, quartiles 3 and 7
    assert rows[("m1", C3, "distractors_only")] == ["no", "3", "33.3%", "33.3%", "4", "3–7", "2", "7"]
    assert rows[("m1", OPEN, "clean")] == ["yes", "4", "0.0%", "0.0%", "3.5", "2.75–5", "3", "8"]
    assert give_up.sections == [0, 9]  # one section per model


def test_a_table_without_its_data_is_one_line_saying_what_it_needs() -> None:
    closed_only = layout(closed_world())
    notes = {t.title: t.note for t in closed_only if not t.rows}
    assert notes["Table 1"] == (
        "Table 1 needs an open-world suite (access mode open) run under clean or first_tried: not in this run, "
        "left out."
    )
    assert notes["Table 2"].startswith("Table 2 needs first_tried episodes in an open-world suite")
    assert notes["Table 4"] == "Table 4 needs the settings hinted and hinted_first_tried: not in this run, left out."
    assert notes["Table 5"].startswith("Table 5 needs first_tried episodes in an open-world suite")
    assert all(not t.columns for t in closed_only if not t.rows)
    open_only = {t.title: t.note for t in layout(open_world()) if not t.rows}
    assert open_only["Figure 3 / Table 3"].startswith("Figure 3 / Table 3 needs closed-world suites (access closed@")
    clean_only = [r for r in closed_world() if r.setting == "clean"]
    notes = {t.title: t.note for t in layout(clean_only) if not t.rows}
    assert notes["Table 3"].startswith("Table 3 needs first_tried episodes in closed-world suites")


def test_a_setting_missing_from_table_1_is_a_dash_and_said_so() -> None:
    t1 = table(layout([r for r in open_world() if r.setting == "clean"]), "Table 1")
    assert t1.rows[0][2:] == ["—", "—"] and "Setting first_tried not in this run (—)." in t1.note


def test_suites_whose_results_record_no_access_are_left_out_and_named() -> None:
    older = [r.model_copy(update={"access_mode": None, "access_distractors": None}) for r in open_world()]
    assert family_summaries(older)[OPEN].access is None  # type: ignore[attr-defined]
    tables = layout(older)
    note = "Suites whose results do not record their tool access (an older run), left out: spider:open."
    assert note in tables[0].note
    assert table(tables, "Table 1").note.startswith("Table 1 needs")


# ---------------------------------------------------------------------------------------------------------------
# Layout names, the turns figure and the HTML report


def test_an_unknown_layout_names_the_known_ones_with_a_did_you_mean() -> None:
    with pytest.raises(ConfigError) as caught:
        api.layout_owners("hohv", ["sqlfuncs"])
    assert str(caught.value) == (
        "--layout: unknown layout 'hohv' (layouts of this run's families (sqlfuncs): hohw); did you mean 'hohw'?"
    )
    with pytest.raises(ConfigError, match="did you mean 'hohw'"):
        api.layout_owners("HoHW", ["sqlfuncs"])
    with pytest.raises(
        ConfigError, match=r"unknown layout 'paper' \(layouts of this run's families \(smoke\): none\)$"
    ):
        api.layout_owners("paper", ["smoke"])


def test_the_turns_figure_is_drawn_as_box_plots() -> None:
    summary = family_summaries(closed_world())[C3]
    charts = summary.figures(C3)
    turns = [c for c in charts if isinstance(c, BoxPlots)]
    assert len(turns) == 1 and turns[0].name == "turns"
    boxes = {(b.panel, b.label, b.series): b for b in turns[0].boxes}
    impossible = boxes[("per setting", "distractors_only\n(no solution)", "m1")]
    assert (impossible.n, impossible.low, impossible.q1, impossible.median, impossible.q3, impossible.high) == (
        3, 2, 3, 4, 7, 10
    )  # fmt: skip
    assert ("correct / incorrect (solvable)", "m1", "incorrect") in boxes
    png = family_figure(turns[0])
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) < 120_000


def test_the_html_report_with_a_layout_shows_its_tables_and_the_turns_figure() -> None:
    results = open_world() + hinted() + closed_world()
    analysis = analyse(results)
    summaries: dict[str, FamilySummary] = dict(analysis.families)
    view = api.apply_layout("hohw", api.layout_owners("hohw", ["sqlfuncs"]), summaries)
    assert isinstance(view, LayoutView) and view.families == frozenset({"sqlfuncs"})
    pngs = figures(analysis)
    page = render_html(analysis, "hohw", pngs, None, None, view)
    assert "layout hohw" in page and "Table 1 — open world" in page and "Table 4 needs" not in page
    assert 'data-name="turns_spider_closed_3.png"' in page
    assert "right behaviour — solved, or gave up" not in page  # the family's own tables give way to the layout
    default = render_html(analysis, "hohw", pngs, None, None)
    assert "right behaviour — solved, or gave up" in default and "Table 1 — open world" not in default


# ---------------------------------------------------------------------------------------------------------------
# The command, on a real run store


@pytest.fixture(scope="module")
def run_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """oracle and naive on a compiled sqlfuncs suite (the generated Spider folder), open world with lexical search
    and strict matching, without and with the first-tried fault."""
    root = tmp_path_factory.mktemp("hohw")
    spider = make_spider(root / "spider")
    suite: dict[str, Any] = {"family": "sqlfuncs", "spider": str(spider), "answers": "strict"}
    config = SweepConfig.model_validate(
        {
            "name": "hohw-layout",
            "models": ["oracle", "naive"],
            "suites": [{**suite, "access": {"mode": "open", "search": "lexical"}}],
            "settings": ["clean", "first_tried"],
            "run": {"store": str(root / "runs"), "shard_size": 50},
        }
    )
    manifest = plan_sweep(config)
    store = RunStore.create(root / "runs", manifest.run_id)
    store.write_manifest(manifest)
    for shard in manifest.shards:
        store.commit(run_shard(shard))
    return root / "runs", manifest.run_id


def test_report_layout_prints_the_papers_tables(run_store: tuple[Path, str], tmp_path: Path) -> None:
    root, run_id = run_store
    code, out, err = cli("report", run_id, "--store", str(root), "--layout", "hohw")
    assert code == 0, err
    text = " ".join(out.split())
    assert "Answers matched: strict." in text
    assert "Table 1 — open world" in text and "oracle 100.0 ± 0.0 100.0 ± 0.0 0.0%" in text
    assert "Table 4 needs the settings hinted and hinted_first_tried: not in this run, left out." in text
    assert "right behaviour — solved" not in text  # the family's own tables are replaced
    page = tmp_path / "report.html"
    code, _, err = cli("report", run_id, "--store", str(root), "--layout", "hohw", "--html", str(page))
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    assert "Table 1 — open world" in html and 'data-name="turns_' in html


def test_the_runner_records_the_suites_access(run_store: tuple[Path, str]) -> None:
    root, run_id = run_store
    results = RunStore.open(run_id, root).results()
    assert {(r.access_mode, r.access_functions, r.access_distractors) for r in results} == {("open", None, 0)}
    summary = family_summaries(results)[results[0].suite]
    assert isinstance(summary, SqlfuncsSummary) and summary.access == SuiteAccess(mode="open", distractors=0)


def test_a_run_stored_before_results_carried_access_gets_it_from_its_manifest(
    run_store: tuple[Path, str], tmp_path: Path
) -> None:
    root, run_id = run_store
    old = tmp_path / "old"
    shutil.copytree(root / run_id, old / run_id)
    store = RunStore.open(run_id, old)
    for shard_id in store.committed():  # the results as an older undertow wrote them: no access columns
        path = old / run_id / "results" / f"{shard_id}.parquet"
        table = pq.read_table(path)
        pq.write_table(table.drop_columns(["access_mode", "access_functions", "access_distractors"]), path)
    stripped = [result_from_row(row) for row in pq.read_table(path).to_pylist()]
    assert {r.access_mode for r in stripped} == {None}
    assert {(r.access_mode, r.access_distractors) for r in store.results()} == {("open", 0)}
    code, out, err = cli("report", run_id, "--store", str(old), "--layout", "hohw")
    assert code == 0, err
    assert "Table 1 — open world" in " ".join(out.split())


def test_report_with_an_unknown_layout_fails_in_one_line(run_store: tuple[Path, str]) -> None:
    root, run_id = run_store
    code, out, err = cli("report", run_id, "--store", str(root), "--layout", "hohv")
    assert code == 2 and not out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and " ".join(lines[0].split()) == (
        "error: --layout: unknown layout 'hohv' (layouts of this run's families (sqlfuncs): hohw); did you mean 'hohw'?"
    )
    code, _, err = cli("report", run_id, "--store", str(root), "--layout", "hohw", "--format", "json", "--families")
    assert code == 2 and "--families: the family analyses or a layout's tables, not both" in " ".join(err.split())
