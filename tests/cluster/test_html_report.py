"""The HTML report, its figures and the run analysis behind them, on real episodes run in-process (no Ray)."""

from __future__ import annotations

import base64
import importlib.resources
import io
import json
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import matplotlib.image
import pytest
from helpers.spider import make_spider
from rich.console import Console

from undertow.cluster.report import figures, pick_trace, print_comparison, render_html
from undertow.env_core.families import SuiteConfig
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import EpisodeResult, Outcome, Trajectory
from undertow.env_core.suites import load_ref, suite_ref
from undertow.scoring.analysis import Analysis, analyse
from undertow.scoring.summary import summarize
from undertow.workers.clients import PolicyModel
from undertow.workers.runner import EpisodePlan, ShardSpec, infra_error_shard, run_shard

SECTIONS = ("summary", "plots", "recovery", "comparisons", "families", "trace", "about")
FAULTED = "unavailable"


@dataclass
class Run:
    results: list[EpisodeResult]
    trajectories: dict[str, list[Trajectory]]  # by shard id

    def load(self, shard_id: str) -> list[Trajectory]:
        return self.trajectories.get(shard_id, [])


def shard(ref: SuiteConfig, model: str, setting: str, count: int, seeds: tuple[int, ...] = (0,)) -> ShardSpec:
    suite = load_ref(ref)
    return ShardSpec(
        shard_id=f"{model}-{ref.label}-{setting}",
        model=PolicyModel(name=model),
        suite=ref,
        setting=PRESET_SETTINGS[setting],
        episodes=[
            EpisodePlan(episode_id=f"{model}-{ref.label}-{setting}-{s.id}-{seed}", scenario_id=s.id, seed=seed)
            for s in suite.scenarios[:count]
            for seed in seeds
        ],
    )


def run(specs: list[ShardSpec]) -> Run:
    results: list[EpisodeResult] = []
    trajectories: dict[str, list[Trajectory]] = {}
    for spec in specs:
        output = run_shard(spec)
        results += output.results
        trajectories[output.shard_id] = output.trajectories
    return Run(results, trajectories)


@pytest.fixture(scope="module")
def episodes(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """oracle and naive on smoke (12 scenarios × 2 seeds) and on a compiled sqlfuncs suite, clean and faulted."""
    smoke = suite_ref("smoke")
    spider = suite_ref(
        {"family": "sqlfuncs", "spider": str(make_spider(tmp_path_factory.mktemp("spider") / "spider")), "seed": 5}
    )
    specs = [
        shard(ref, model, setting, count, seeds)
        for ref, count, seeds in [(smoke, 12, (0, 1)), (spider, 7, (0,))]
        for model in ("oracle", "naive")
        for setting in ("clean", FAULTED)
    ]
    return run(specs)


@pytest.fixture(scope="module")
def analysis(episodes: Run) -> Analysis:
    return analyse(episodes.results, model_sizes={"oracle": 70.0, "naive": 7.0})


@pytest.fixture(scope="module")
def pngs(analysis: Analysis) -> dict[str, bytes]:
    return figures(analysis)


@pytest.fixture(scope="module")
def html(episodes: Run, analysis: Analysis, pngs: dict[str, bytes]) -> str:
    trace = pick_trace(episodes.results, episodes.load)
    return render_html(analysis, "test run", pngs, trace, {"run id": "test-run", "created": "today"})


class Elements(HTMLParser):
    """Every element as (tag, attributes, text inside it, including nested elements' text)."""

    VOID = frozenset({"img", "br", "meta", "hr", "input", "link"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[tuple[str, dict[str, str | None], list[str]]] = []
        self.done: list[tuple[str, dict[str, str | None], str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.VOID:
            self.done.append((tag, dict(attrs), ""))
        else:
            self.open.append((tag, dict(attrs), []))

    def handle_endtag(self, tag: str) -> None:
        while self.open:
            name, attrs, text = self.open.pop()
            self.done.append((name, attrs, "".join(text)))
            if self.open:
                self.open[-1][2].append("".join(text))
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.open:
            self.open[-1][2].append(data)


def elements(html: str) -> list[tuple[str, dict[str, str | None], str]]:
    parser = Elements()
    parser.feed(html)
    parser.close()
    return parser.done


def classes(attrs: dict[str, str | None]) -> set[str]:
    return set((attrs.get("class") or "").split())


def section(html: str, name: str) -> str:
    start = html.index(f'<section id="{name}"')
    return html[start : html.index("</section>", start)]


def check_png(data: bytes) -> tuple[int, ...]:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    image = matplotlib.image.imread(io.BytesIO(data), format="png")
    assert image.ndim == 3 and image.shape[2] in (3, 4)
    assert image.shape[0] >= 150 and image.shape[1] >= 300
    return image.shape


# ---------------------------------------------------------------------------------------------------------------


def test_the_template_ships_inside_the_package() -> None:
    assert (importlib.resources.files("undertow.cluster") / "templates" / "report.html.j2").is_file()


def test_every_section_is_present_and_nothing_is_loaded_from_elsewhere(html: str) -> None:
    for name in SECTIONS:
        assert html.count(f'<section id="{name}"') == 1, name
    assert "<script" not in html
    for tag, attrs, _ in elements(html):
        for attribute in ("src", "href"):
            target = attrs.get(attribute)
            assert target is None or target.startswith(("data:image/png;base64,", "#")), (tag, target)


def test_figures_are_small_valid_pngs_embedded_in_the_report(pngs: dict[str, bytes], html: str) -> None:
    family = "errors_spider.png"  # the sqlfuncs family's figures: their names and the suite label
    turns = "turns_spider.png"  # the turn distributions (the paper's Figure 5), a BoxPlots figure
    assert set(pngs) == {"accuracy_vs_size.png", "clean_vs_faulted.png", "outcomes.png", family, turns}
    plots = {attrs["data-name"]: attrs for tag, attrs, _ in elements(section(html, "plots")) if tag == "img"}
    families = {attrs["data-name"]: attrs for tag, attrs, _ in elements(section(html, "families")) if tag == "img"}
    assert set(plots) == set(pngs) - {family, turns} and set(families) == {family, turns}
    for name, data in pngs.items():
        check_png(data)
        assert len(data) < 120_000, (name, len(data))
        image = {**plots, **families}[name]
        assert image["src"] == "data:image/png;base64," + base64.b64encode(data).decode()
        assert image["alt"]
    assert (families[family]["alt"] or "").startswith("Failure categories")  # the family's own StackedBars.alt


def test_summary_table_numbers_match_summarize(episodes: Run, html: str) -> None:
    # Elements close inner first: a row's cells arrive before the row itself.
    cells: dict[tuple[str | None, ...], dict[str, str]] = {}
    pending: dict[str, str] = {}
    for tag, attrs, text in elements(section(html, "summary")):
        if tag == "td":
            for name in classes(attrs) & {"n", "n-valid", "accuracy", "ci", "tokens"}:
                pending[name] = text.strip()
        elif tag == "tr" and "data-model" in attrs:
            cells[(attrs["data-model"], attrs["data-suite"], attrs["data-setting"])] = pending
            pending = {}
    rows = summarize(episodes.results)
    assert len(cells) == len(rows) == 8
    for row in rows:
        got = cells[(row.model, row.suite, row.setting)]
        assert row.accuracy is not None
        assert got["n"] == str(row.n)
        assert got["n-valid"] == str(row.n_valid)
        assert got["accuracy"] == f"{100 * row.accuracy:.1f}%"
        assert got["ci"] == f"{100 * row.ci_low:.1f}–{100 * row.ci_high:.1f}"
        assert got["tokens"] == f"{row.prompt_tokens + row.completion_tokens:,}"


def test_oracle_beats_naive_under_faults_and_naive_loses_accuracy(analysis: Analysis, html: str) -> None:
    pair = {(c.suite, c.setting, c.model_a, c.model_b): c for c in analysis.comparisons}
    faulted = pair[("smoke", FAULTED, "oracle", "naive")]
    assert faulted.n == 24 and faulted.difference and faulted.difference > 0 and faulted.ci_low and faulted.ci_low > 0
    assert faulted.mcnemar_only_a == 24 and faulted.mcnemar_p_value < 0.001
    assert pair[("smoke", "clean", "oracle", "naive")].difference == 0
    gaps = {(g.model, g.suite, g.setting): g for g in analysis.gaps}
    assert set(gaps) == {(m, s, FAULTED) for m in ("oracle", "naive") for s in ("smoke", "spider")}
    naive = gaps[("naive", "smoke", FAULTED)]
    assert naive.paired and naive.n_paired == 24 and naive.estimate and naive.estimate > 0
    assert naive.ci_low and naive.ci_low > 0
    assert gaps[("oracle", "smoke", FAULTED)].estimate == 0
    comparisons = section(html, "comparisons")
    assert 'data-model-a="oracle" data-model-b="naive"' in comparisons and "+100.0" in comparisons
    assert 'data-model="naive" data-suite="smoke" data-setting="unavailable"' in section(html, "recovery")


def test_trace_shows_a_recovered_episode_with_the_fired_fault_highlighted(episodes: Run, html: str) -> None:
    trace = pick_trace(episodes.results, episodes.load)
    assert trace is not None and trace.setting == FAULTED and trace.model == "oracle"
    result = next(r for r in episodes.results if r.episode_id == trace.episode_id)
    assert result.faults_fired > 0 and result.solved
    highlighted = [(attrs, text) for tag, attrs, text in elements(section(html, "trace")) if "fault" in classes(attrs)]
    assert highlighted, "no observation is highlighted as a fired fault"
    attrs, text = highlighted[0]
    assert attrs["data-fault"] == FAULTED and f"fault: {FAULTED}" in text
    labels = [t for tag, a, t in elements(section(html, "trace")) if "fault-label" in classes(a)]
    assert labels == [f"fault: {FAULTED}"] * len(highlighted)
    # Every turn of the episode is shown, and the calls the model made.
    for step in trace.tool_steps():
        assert step.action.tool_call is not None and step.action.tool_call.name in section(html, "trace")


def test_pick_trace_falls_back_when_no_fault_fired(episodes: Run) -> None:
    clean = [r for r in episodes.results if r.setting == "clean"]
    trace = pick_trace(clean, episodes.load)
    assert trace is not None and trace.episode_id == clean[0].episode_id
    failed = [r for r in episodes.results if r.model == "naive" and r.setting == FAULTED]
    trace = pick_trace(failed, episodes.load)  # a fault fired but nobody recovered: still a faulted episode
    assert trace is not None and trace.setting == FAULTED
    assert pick_trace(episodes.results, lambda shard_id: []) is None
    assert pick_trace([], episodes.load) is None


def test_user_derived_text_is_escaped(episodes: Run) -> None:
    evil = "<script>alert(1)</script>"
    results = [r.model_copy(update={"model": evil + r.model, "scenario_id": evil}) for r in episodes.results[:4]]
    trajectory = episodes.trajectories[results[0].shard_id][0]
    turns = [t.model_copy(update={"content": f"I think {evil} <b>bold</b>"}) for t in trajectory.turns]
    trace = trajectory.model_copy(update={"model": evil, "turns": turns, "final_answer": "<img src=x onerror=1>"})
    analysis = analyse(results)
    page = render_html(analysis, f"title {evil}", figures(analysis), trace, {"run id": evil, "note": "<i>x</i>"})
    assert "<script" not in page and "<b>bold" not in page and "<img src=x" not in page and "<i>x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in section(page, "summary")
    assert "&lt;script&gt;" in section(page, "trace") and "&lt;script&gt;" in section(page, "about")


def test_analysis_is_json_able_and_gives_mlflow_metrics(analysis: Analysis) -> None:
    data = json.loads(analysis.to_json())
    assert data["schema_version"] == 1 and data["metric"] == "solved" and data["baseline"] == "clean"
    assert data["settings"] == ["clean", FAULTED] and data["sizes"] == {"oracle": 70.0, "naive": 7.0}
    assert len(data["rows"]) == 8 and len(data["gaps"]) == 4 and len(data["comparisons"]) == 4
    assert data["comparisons"][0]["mcnemar_method"] in ("exact", "chi2")
    assert data["families"]["spider"]["family"] == "sqlfuncs" and "models" in data["families"]["spider"]
    assert Analysis.model_validate_json(analysis.to_json()) == analysis  # family summaries come back typed
    metrics = analysis.metrics()
    assert metrics["accuracy/oracle/smoke/unavailable"] == 1.0
    assert metrics["gap/naive/smoke/unavailable"] == 1.0
    assert metrics["difference/smoke/unavailable/oracle-vs-naive"] == 1.0
    assert all(isinstance(v, float) for v in metrics.values())


def test_print_comparison_shows_pairs_and_gaps(analysis: Analysis) -> None:
    console = Console(record=True, width=200)
    print_comparison(analysis, console)
    text = console.export_text()
    assert "McNemar" in text and "Recovery gaps" in text
    assert len(re.findall(r"oracle +naive", text)) == 4  # both suites, both settings
    assert "+100.0" in text


NUM = ' class="num"'


def test_families_section_shows_the_error_taxonomy(analysis: Analysis, html: str) -> None:
    families = section(html, "families")
    assert families.count('class="family-table" data-suite="spider"') == 2  # accuracy, then failures by category
    assert "failures by category" in families
    for table in analysis.families["spider"].tables("spider"):  # the family's own tables, cell for cell
        assert f"<caption>{table.title}</caption>" in families
        for row in table.rows:
            cells = [f"<td{NUM if right else ''}>{text}</td>" for text, right in zip(row, table.right, strict=True)]
            assert "".join(cells) in families


def degenerate_runs(tmp_path: Path) -> dict[str, list[EpisodeResult]]:
    smoke = suite_ref("smoke")
    one = run([shard(smoke, "oracle", "clean", 3)]).results
    faulted_only = run([shard(smoke, "naive", FAULTED, 3)]).results
    infra = infra_error_shard(shard(smoke, "naive", FAULTED, 3), "endpoint down").results
    mixed = run([shard(smoke, "oracle", "clean", 3)]).results + infra
    return {"one model, one setting": one, "no baseline": faulted_only, "all infra_error": infra, "mixed": mixed}


@pytest.mark.parametrize("sizes", [None, {"oracle": 1.5}])
def test_degenerate_inputs_render(tmp_path: Path, sizes: dict[str, float] | None) -> None:
    for name, results in [*degenerate_runs(tmp_path).items(), ("empty", [])]:
        analysis = analyse(results, model_sizes=sizes)
        pngs = figures(analysis)
        assert {"accuracy_vs_size.png", "clean_vs_faulted.png", "outcomes.png"} <= set(pngs), name
        for data in pngs.values():
            check_png(data)
        page = render_html(analysis, name, pngs, None, None)
        for section_id in SECTIONS:
            assert f'<section id="{section_id}"' in page, (name, section_id)
        json.dumps(analysis.as_dict(), allow_nan=False)
        print_comparison(analysis, Console(record=True, width=160))
        if name == "all infra_error":
            assert analysis.n_infra_errors == 3 and not analysis.gaps and not analysis.comparisons
            assert all(r.accuracy is None for r in analysis.rows)
            assert all(r.outcome == Outcome.infra_error for r in results)
