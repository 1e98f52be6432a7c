"""The authors' FAIL-TaLMs outputs as a reference run (``undertow import failtalms PATH --results OUTPUTS``): every
cell of issue 34's table read back through ``undertow report --layout failtalms``, and what the reader lists
(malformed entries, repeated query ids, entries that link to no scenario)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import UNDERTOW
from helpers.paths import FAIL_TALMS

from undertow.cluster import api
from undertow.cluster.api.reference import IMPORTED, paired_with_reference
from undertow.cluster.store import RunStore
from undertow.env_core.errors import ConfigError
from undertow.env_core.model import EpisodeResult, Outcome
from undertow.scoring.failtalms import FailTalmsSummary
from undertow.scoring.failtalms.reference import MALFORMED, REPEATED, UNLINKED

OUTPUTS = FAIL_TALMS / "outputs"
pytestmark = pytest.mark.skipif(not OUTPUTS.is_dir(), reason="the released FAIL-TaLMs outputs are not in ../shared")

# issue 34's table (the authors' outputs scored with the authors' definitions): model -> (Ask-and-Help, label) ->
# PR, Aware, Unexp, Skip, Inter (None: "—")
P, U, R, N, T = "Perfect", "Under-specified", "  replaceable", "  non-replaceable", "No-tools"
EXPECTED: dict[str, dict[tuple[bool, str], tuple[float | None, ...]]] = {
    "claude3.5_sonnet": {
        (False, P): (0.67, 0.94, 0.00, 0.00, None),
        (False, U): (0.31, 0.42, 0.24, 0.08, None),
        (False, R): (0.41, 0.54, 0.01, 0.01, None),
        (False, N): (0.09, 0.85, 0.04, 0.09, None),
        (False, T): (0.10, None, 0.00, 0.00, None),
        (True, U): (0.61, 0.51, 0.31, 0.03, 0.61),
        (True, R): (0.43, 0.51, 0.03, 0.03, 0.19),
        (True, N): (0.07, 0.85, 0.03, 0.10, 0.27),
    },
    "gpt_4o": {
        (False, P): (0.68, 1.00, 0.00, 0.00, None),
        (False, U): (0.36, 0.18, 0.33, 0.05, None),
        (False, R): (0.44, 0.03, 0.01, 0.01, None),
        (False, N): (0.11, 0.09, 0.09, 0.06, None),
        (False, T): (0.29, None, 0.01, 0.00, None),
        (True, U): (0.61, 0.21, 0.47, 0.01, 0.58),
        (True, R): (0.45, 0.02, 0.02, 0.02, 0.15),
        (True, N): (0.10, 0.05, 0.10, 0.03, 0.09),
    },
    "llama_405B": {
        (False, P): (0.53, 1.00, 0.00, 0.00, None),
        (False, U): (0.25, 0.11, 0.25, 0.06, None),
        (False, R): (0.36, 0.02, 0.01, 0.01, None),
        (False, N): (0.12, 0.02, 0.12, 0.02, None),
        (False, T): (0.28, None, 0.06, 0.00, None),
        (True, U): (0.53, 0.02, 0.53, 0.01, 0.25),
        (True, R): (0.38, 0.01, 0.02, 0.02, 0.24),
        (True, N): (0.16, 0.09, 0.15, 0.03, 0.16),
    },
}
METRICS = ("PR", "Aware", "Unexp", "Skip", "Inter")


def _import(out: Path, results: Path, store: Path) -> str:
    """``undertow import failtalms`` with --results, through the command line; the run id it prints."""
    done = subprocess.run(
        [
            UNDERTOW,
            "import",
            "failtalms",
            str(FAIL_TALMS),
            "--out",
            str(out),
            "--results",
            str(results),
            "--store",
            str(store),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    found = re.search(r"as reference run (\S+)", done.stdout)
    assert found, done.stdout
    return found.group(1)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    root = tmp_path_factory.mktemp("reference")
    return _import(root / "suite", OUTPUTS, root / "runs"), root / "runs"


def test_every_cell_of_the_issue_table(reference: tuple[str, Path]) -> None:
    run_id, store = reference
    shown = api.report(run_id, str(store), layout="failtalms")
    view = shown.layout_view
    assert view is not None
    table1, table2 = view.tables
    assert "Table 1" in table1.title and "Table 2" in table2.title
    # the printed tables, rounded; the summary they print from, exact (the cells are checked on the exact rates)
    printed = {
        (helped, row[0], row[1].removesuffix(" + AAH"))
        for helped, t in ((False, table1), (True, table2))
        for row in t.rows
    }
    summary = shown.families["failtalms-released"]
    assert isinstance(summary, FailTalmsSummary)
    checked = 0
    for model, rows in EXPECTED.items():
        lines = {
            (helped, label.removesuffix(" + AAH")): m
            for helped in (False, True)
            for label, _, m in summary.lines(model, helped)
        }
        for key, values in rows.items():
            assert (key[0], model, key[1]) in printed
            m = lines[key]
            got = dict(zip(METRICS, (m.pr, m.aware, m.unexp, m.skip, m.inter), strict=True))
            for metric, want in zip(METRICS, values, strict=True):
                where = f"{model} {'AAH ' if key[0] else ''}{key[1].strip()} {metric}"
                value = got[metric]
                if want is None:
                    assert value is None, where
                else:
                    assert value is not None and value.rate is not None, where
                    assert abs(value.rate - want) <= 0.01, (where, value.rate, want)
                checked += 1
    assert checked == 3 * 8 * 5
    # the Unavailable tools row: the unweighted mean of its two rows
    gpt = {label: m.pr.rate or 0.0 for label, _, m in summary.lines("gpt_4o", False)}
    assert gpt["Unavailable tools"] == pytest.approx((gpt[R] + gpt[N]) / 2)
    assert gpt["Unavailable tools"] == pytest.approx((0.44 + 0.11) / 2, abs=0.01)


def test_the_reference_run_is_marked_imported(reference: tuple[str, Path]) -> None:
    run_id, store = reference
    manifest = RunStore.open(run_id, store).manifest()
    marked = manifest.config[IMPORTED]
    assert marked["models"] == ["claude3.5_sonnet", "gpt_4o", "llama_405B"]
    # the four repeated query ids of the released outputs: each the second entry of query 25 in its file
    assert marked["family"] == "failtalms" and Path(marked["results"]) == OUTPUTS.resolve()
    assert sorted(marked["listed"][REPEATED]) == [
        "Non-replaceable/claude3.5_sonnet_auto_eval_qaq/answers.json[23]",
        "Non-replaceable/llama_405B_auto_eval/answers.json[23]",
        "Replaceable/claude3.5_sonnet_auto_eval_qaq/answers.json[24]",
        "Replaceable/llama_405B_auto_eval/answers.json[24]",
    ]
    settings = {s.setting.name for s in manifest.shards}
    assert settings == {
        "perfect",
        "underspecified",
        "replaceable",
        "non_replaceable",
        "no_tools",
        "underspecified_aah",
        "replaceable_aah",
        "non_replaceable_aah",
    }
    view = api.report(run_id, str(store), layout="failtalms").layout_view
    assert view is not None
    assert all("imported" in table.title and "not run here" in table.note for table in view.tables)


def _entry(query_id: int, query: str, passed: int, **fields: Any) -> dict[str, Any]:
    return {"query_id": query_id, "query": query, "skipped": False, "pass_rate": passed, **fields}


def test_malformed_repeated_and_unlinked_entries_are_listed(tmp_path: Path) -> None:
    original = json.loads((OUTPUTS / "Original" / "gpt_4o_auto_eval" / "answers.json").read_text())[0]
    no_tools = json.loads((OUTPUTS / "No-tools" / "gpt_4o_auto_eval" / "answers.json").read_text())[0]
    assert original["query_id"] == no_tools["query_id"] == 1
    mine = tmp_path / "outputs"
    (mine / "Original" / "m_auto_eval").mkdir(parents=True)
    (mine / "No-tools" / "m_auto_eval").mkdir(parents=True)
    (mine / "Original" / "m_auto_eval" / "answers.json").write_text(
        json.dumps(
            [
                original,
                "not an entry",
                {**original, "pass_rate": 0},  # query 1 again: one episode, the first kept
                _entry(7, "A question nobody released", 1, tool_annotation="no"),
                {"query_id": 8, "query": "no verdict"},
            ]
        )
    )
    # No-tools: passed, lost the pairwise comparison (win_rate 0)
    (mine / "No-tools" / "m_auto_eval" / "answers.json").write_text(json.dumps([no_tools]))
    built = api.import_suite("failtalms", FAIL_TALMS, out=tmp_path / "suite", results=mine, store=tmp_path / "runs")
    ref = built.reference
    assert ref is not None
    assert ref.listed == {
        MALFORMED: [
            "Original/m_auto_eval/answers.json[1]: expected a JSON object, got str",
            "Original/m_auto_eval/answers.json[4]: 'pass_rate' is missing",
        ],
        REPEATED: ["Original/m_auto_eval/answers.json[2]"],
        UNLINKED: ["Original/m_auto_eval/answers.json[3]"],
    }
    assert ref.episodes == 3
    summary = api.report(ref.run_id, str(tmp_path / "runs")).families["failtalms-released"]
    rows = {r.setting: r for r in summary.rows}  # type: ignore[attr-defined]
    perfect, nothing = rows["perfect"].metrics, rows["no_tools"].metrics
    # Perfect: queries 1 (passed, answered yes) and 7 (passed, answered no): PR 2/2, Aware 1/2, Unexp (no) 1/2
    assert (perfect.n, perfect.pr.k, perfect.aware.k, perfect.unexp.k) == (2, 2, 1, 1)
    # No-tools: passed but lost to its Perfect answer: not counted in PR; no tie, so nothing unexpected
    assert (nothing.n, nothing.pr.k, nothing.unexp.k) == (1, 0, 0)


def _result(model: str, scenario: str, seed: int, solved: bool) -> EpisodeResult:
    return EpisodeResult(
        episode_id=f"{model}-{scenario}-{seed}",
        model=model,
        suite="failtalms-released",
        family="failtalms",
        setting="perfect",
        seed=seed,
        scenario_id=scenario,
        outcome=Outcome.scored,
        solved=solved,
    )


def test_reference_episodes_pair_with_every_seed_of_a_users_run() -> None:
    user = [_result("mine", "a", 1, True), _result("mine", "a", 2, False), _result("mine", "b", 1, True)]
    ref = [_result("ref", "a", 0, True), _result("ref", "c", 0, True)]
    paired = paired_with_reference(user + ref, {"ref"})
    keys = sorted((r.model, r.scenario_id, r.seed) for r in paired)
    # "a" is repeated under seeds 1 and 2; "c", which the user's run lacks, stays as it was
    assert keys == [
        ("mine", "a", 1),
        ("mine", "a", 2),
        ("mine", "b", 1),
        ("ref", "a", 1),
        ("ref", "a", 2),
        ("ref", "c", 0),
    ]


def test_compare_accepts_a_reference_run(reference: tuple[str, Path], tmp_path: Path) -> None:
    run_id, store = reference
    compared = api.compare([run_id], str(store))
    pairs = {(c.model_a, c.model_b, c.setting) for c in compared.analysis.comparisons}
    assert ("claude3.5_sonnet", "gpt_4o", "perfect") in pairs


def test_results_that_are_not_a_folder_are_refused_before_anything_is_built(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found") as caught:
        api.import_suite("failtalms", FAIL_TALMS, out=tmp_path / "suite", results=tmp_path / "nowhere")
    assert caught.value.field == "--results"
    assert not (tmp_path / "suite").exists()


def test_the_prose_reading_is_a_named_layout(reference: tuple[str, Path]) -> None:
    """``--layout failtalms_prose``: Unexp as a success (answered yes and passed) and No-tools PR as a pass alone, the
    readings of the paper's prose; on the released outputs they give the figures issue 34 quotes for undertow's
    earlier definitions (Replaceable Unexp 0.30 / 0.42 / 0.36, No-tools PR 0.20 / 0.58 / 0.43)."""
    run_id, store = reference
    view = api.report(run_id, str(store), layout="failtalms_prose").layout_view
    assert view is not None
    table1 = view.tables[0]
    cells = {(row[0], row[1].strip()): row for row in table1.rows}
    unexp, pr = table1.columns.index("Unexp"), table1.columns.index("PR")
    for model, replaceable_unexp, no_tools_pr in (
        ("claude3.5_sonnet", 0.30, 0.20),
        ("gpt_4o", 0.42, 0.58),
        ("llama_405B", 0.36, 0.43),
    ):
        assert abs(float(cells[(model, R.strip())][unexp].split()[0]) - replaceable_unexp) <= 0.01 + 1e-9, model
        assert abs(float(cells[(model, "No-tools")][pr].split()[0]) - no_tools_pr) <= 0.01 + 1e-9, model
