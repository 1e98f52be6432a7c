"""The sqlfuncs family: compiler, build summary, both solution paths, tool behaviour, settings and search."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
import yaml
from helpers.builders import follow_plan
from helpers.cli import run_cli
from helpers.paths import SPIDER_DEV
from helpers.runs import policy_results
from helpers.spider import BAD_QUESTIONS, QUESTIONS, make_spider
from typer.testing import CliRunner

from undertow.cluster.cli import app
from undertow.env_core.environment import Environment
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import Action, Observation, PlannedCall, ToolCall
from undertow.env_core.search import GET_INFO, SEARCH_TOOLS, ToolAccess
from undertow.env_core.sqlfuncs.build import BuiltSuite, build_suite, write_build
from undertow.env_core.suites import Suite, load_ref, load_suite, suite_ref


@pytest.fixture(scope="module")
def spider(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_spider(tmp_path_factory.mktemp("spider"))


@pytest.fixture(scope="module")
def built(spider: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[BuiltSuite, Path]:
    result = build_suite(spider, seed=0, augment=1)
    return result, write_build(result, tmp_path_factory.mktemp("built") / "suite")


@pytest.fixture(scope="module")
def suite(built: tuple[BuiltSuite, Path]) -> Suite:
    return load_suite(built[1])


@pytest.fixture(scope="module")
def dev_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not SPIDER_DEV.is_dir():
        pytest.fail(f"{SPIDER_DEV} is missing: the tests need ../shared beside the repository")
    return write_build(build_suite(SPIDER_DEV, seed=0, augment=1), tmp_path_factory.mktemp("dev") / "suite")


def play(suite: Suite, scenario_id: str, plan: list[PlannedCall], setting: str = "clean") -> list[Observation]:
    """Follow one gold plan by hand through the environment, resolving references to earlier results."""
    scenario = suite.by_id[scenario_id]
    env = suite.environment(scenario, 0, PRESET_SETTINGS[setting])
    env.reset()
    return follow_plan(env, plan)


def same_rows(a: list[dict], b: list[dict]) -> bool:
    return sorted(map(repr, (tuple(r.values()) for r in a))) == sorted(map(repr, (tuple(r.values()) for r in b)))


# ---------------------------------------------------------------------------------------------------------------
# The compiler on a Spider folder the tests generate


def test_generated_folder_compiles_with_expected_counts(built: tuple[BuiltSuite, Path]) -> None:
    result, _ = built
    kept = sum(1 for *_, keep in QUESTIONS if keep)
    assert result.stats["stages"] == {
        "questions in": len(QUESTIONS),
        "parsed and ran": len(QUESTIONS),
        # one question asks for customers and gets none: left out; no ORDER BY ... LIMIT ties at its cut
        "non-empty result, or an existence question": len(QUESTIONS) - 1,
        "no tie at the LIMIT cut": len(QUESTIONS) - 1,
        "at most 100 rows": len(QUESTIONS) - 1,
        "nested SELECT": kept,
        "both paths match gold (kept)": kept,
    }
    assert result.stats["skipped"] == 0
    originals = [s for s in result.scenarios if not s.metadata["augmented"]]
    assert [s.task for s in originals] == [q for _, q, _, keep in QUESTIONS if keep]
    assert result.stats["scenarios"] == len(result.scenarios) == kept + result.stats["scenarios_augmented"]
    assert sum(result.stats["functions_by_arguments"].values()) == result.stats["functions"] == len(result.tools)


def test_double_quoted_spider_literal_becomes_a_typed_string_argument(suite: Suite) -> None:
    scenario = next(s for s in suite.scenarios if "Chile" in s.task)
    (direct,) = scenario.gold.plans[0]
    assert list(direct.arguments.values()) == ["Chile"]
    spec = suite.toolbox.specs[direct.tool]
    (param,) = spec.binding["params"]
    assert param["type"] == "str" and param["column"] == ["authors", "country"]
    assert spec.parameters["properties"][param["name"]]["type"] == "string"
    assert '"Chile"' not in spec.binding["sql"] and f":{param['name']}" in spec.binding["sql"]


def test_names_are_obfuscated_and_deterministic_per_seed(spider: Path, built: tuple[BuiltSuite, Path]) -> None:
    result, _ = built
    assert all(t.name.startswith("function_") for t in result.tools)
    for tool in result.tools:
        for name in tool.parameters["properties"]:
            first, second = name.split("_")
            assert first != second and first.isalpha() and second.isalpha()
    again = build_suite(spider, seed=0, augment=1)
    assert [t.model_dump() for t in again.tools] == [t.model_dump() for t in result.tools]
    other = build_suite(spider, seed=1, augment=1)
    assert {t.binding["sql"] for t in other.tools} != {t.binding["sql"] for t in result.tools}  # other arg names
    assert {t.name: t.binding["role"] for t in other.tools} != {t.name: t.binding["role"] for t in result.tools}


def test_building_twice_gives_byte_identical_folders(spider: Path, tmp_path: Path) -> None:
    first = write_build(build_suite(spider, seed=3), tmp_path / "a")
    second = write_build(build_suite(spider, seed=3), tmp_path / "b")
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert {"suite.json", "tools.jsonl", "scenarios.jsonl", "build.json"} <= {str(f) for f in files}
    for file in files:
        assert (first / file).read_bytes() == (second / file).read_bytes(), file


def test_every_kept_scenario_is_solvable_both_ways(suite: Suite) -> None:
    for scenario in suite.scenarios:
        direct, chain, *_ = scenario.gold.plans
        assert len(direct) == 1 and len(chain) >= 2
        assert not {c.tool for c in direct} & {c.tool for c in chain}, "the two paths must be tool-disjoint"
        for plan in (direct, chain):
            observations = play(suite, scenario.id, plan)
            assert all(o.ok for o in observations), [o.error for o in observations]
            assert same_rows(observations[-1].result, scenario.gold.answer), (scenario.id, plan)


def test_an_argument_free_function_with_the_same_rows_is_another_solution(suite: Suite) -> None:
    scenario = next(s for s in suite.scenarios if s.task == "Which authors have written no book?")
    *_, equivalent = scenario.gold.plans
    assert len(scenario.gold.plans) == 3
    assert len(equivalent) == 1 and equivalent[0].arguments == {}
    assert "LIMIT 1" in suite.toolbox.specs[equivalent[0].tool].binding["sql"]
    assert same_rows(play(suite, scenario.id, equivalent)[-1].result, scenario.gold.answer)
    # "impossible" disables every solution, the equivalent one included
    assert not play(suite, scenario.id, equivalent, setting="impossible")[-1].ok


def test_augmentation_swaps_a_quoted_value_and_recomputes_gold(suite: Suite) -> None:
    augmented = [s for s in suite.scenarios if s.metadata["augmented"]]
    assert augmented
    for scenario in augmented:
        original = suite.by_id[scenario.id.rsplit("-aug", 1)[0]]
        assert scenario.task != original.task
        assert scenario.gold.answer != original.gold.answer
        assert [c.tool for p in scenario.gold.plans for c in p] == [c.tool for p in original.gold.plans for c in p]


def test_bad_input_is_reported_per_item_and_skipped(tmp_path: Path) -> None:
    result = build_suite(make_spider(tmp_path, bad=True))
    by_item = {p.item: p for p in result.problems}
    assert by_item["tables.json[2]"].kind == "malformed schema entry"
    assert "column_names_original" in by_item["tables.json[2]"].reason
    assert by_item["database broken"].kind == "not a SQLite database"
    assert by_item["database missing"].kind == "database file missing"
    first_bad = len(QUESTIONS)
    for offset, (*_, expected) in enumerate(BAD_QUESTIONS):
        problem = by_item[f"question {first_bad + offset}"]
        assert expected.split(" ")[0] in f"{problem.kind} {problem.reason}", (problem, expected)
    assert by_item[f"question {first_bad + len(BAD_QUESTIONS)}"].kind == "malformed question"
    assert result.stats["skipped"] == len(result.problems) == 3 + len(BAD_QUESTIONS) + 1
    assert sum(result.stats["skipped_by_kind"].values()) == result.stats["skipped"]
    # the good questions still compiled
    assert result.stats["stages"]["both paths match gold (kept)"] == sum(1 for *_, keep in QUESTIONS if keep)


@pytest.mark.parametrize(
    ("content", "kind"),
    [("{not json", "unreadable tables.json"), ('{"a": 1}', "unreadable tables.json")],
)
def test_unreadable_tables_json_skips_everything_without_crashing(tmp_path: Path, content: str, kind: str) -> None:
    folder = make_spider(tmp_path)
    (folder / "tables.json").write_text(content)
    result = build_suite(folder)
    assert result.problems[0].item == "tables.json" and result.problems[0].kind == kind
    assert result.scenarios == [] and result.tools == []
    assert result.stats["stages"]["questions in"] == len(QUESTIONS)
    assert result.stats["skipped_by_kind"]["no schema"] == len(QUESTIONS)


# ---------------------------------------------------------------------------------------------------------------
# Function behaviour


def test_argument_types_are_checked_with_the_papers_message(suite: Suite) -> None:
    tool = next(t for t in suite.toolbox.specs.values() if any(p["type"] == "float" for p in t.binding["params"]))
    name = next(p["name"] for p in tool.binding["params"] if p["type"] == "float")
    # the tool belongs to another question: an open-world environment can call any function of the universe
    env = suite.environment(suite.scenarios[0], 0, PRESET_SETTINGS["clean"], ToolAccess(mode="open"))
    env.reset()
    observation = env.step(Action(kind="tool_call", tool_call=ToolCall(id="c", name=tool.name, arguments={name: 10})))
    assert observation is not None and not observation.ok
    assert observation.error.message == f"Expected float but got int for {name}"
    assert observation.error.type == "argument_type"  # CodeAct raises it as AssertionError, as the paper shows
    fine = env.step(Action(kind="tool_call", tool_call=ToolCall(id="d", name=tool.name, arguments={name: 10.0})))
    assert fine is not None and fine.ok and fine.result == [{"COUNT(*)": 4}]


def test_a_near_miss_string_gets_the_did_you_mean_hint(suite: Suite) -> None:
    scenario = next(s for s in suite.scenarios if "Chile" in s.task)
    (direct,) = scenario.gold.plans[0]
    (arg,) = direct.arguments
    env = suite.environment(scenario, 0, PRESET_SETTINGS["clean"])
    env.reset()
    observation = env.step(
        Action(kind="tool_call", tool_call=ToolCall(id="c", name=direct.tool, arguments={arg: "chilee"}))
    )
    assert observation is not None and observation.ok and observation.result == []
    assert observation.notes == [f"Could not find entry with `{arg}` value `chilee`.", "Did you mean 'Chile'?"]
    assert "Did you mean 'Chile'?" in observation.content()
    far = env.step(Action(kind="tool_call", tool_call=ToolCall(id="d", name=direct.tool, arguments={arg: "Mars"})))
    assert far is not None and far.notes == [f"Could not find entry with `{arg}` value `Mars`."]


def test_functions_read_the_database_and_never_change_it(suite: Suite, built: tuple[BuiltSuite, Path]) -> None:
    folder = built[1]
    before = {p.name: p.read_bytes() for p in (folder / "databases").iterdir()}
    for scenario in suite.scenarios:
        play(suite, scenario.id, scenario.gold.plans[1])
    assert {p.name: p.read_bytes() for p in (folder / "databases").iterdir()} == before
    with sqlite3.connect(folder / "databases" / "library.sqlite") as db:
        assert db.execute("SELECT count(*) FROM books").fetchone() == (6,)


# ---------------------------------------------------------------------------------------------------------------
# Settings and tool access


@pytest.mark.parametrize("access", [ToolAccess(), ToolAccess(distractors=24), ToolAccess(mode="open")], ids=str)
def test_oracle_on_spider_dev_solves_clean_and_first_tried_and_gives_up_when_impossible(
    dev_folder: Path, access: ToolAccess
) -> None:
    ref = suite_ref({"path": str(dev_folder), "access": access})
    assert len(load_ref(ref).scenarios) >= 40
    for setting in ("clean", "first_tried", "removed"):
        results = policy_results(ref, "oracle", setting)
        assert all(r.solved and r.correct for r in results), (setting, [r.error for r in results if not r.solved])
    impossible = policy_results(ref, "oracle", "impossible")
    assert not any(r.solved for r in impossible) and all(r.gave_up and r.correct for r in impossible)
    naive = policy_results(ref, "naive", "first_tried")
    assert not any(r.solved for r in naive)
    assert all(r.details["backup_plan_calls"] is not None and r.details["error_category"] for r in naive)


def test_every_spider_dev_scenario_is_solvable_both_ways(dev_folder: Path) -> None:
    suite = load_suite(dev_folder)
    for scenario in suite.scenarios:
        for plan in scenario.gold.plans:
            observations = play(suite, scenario.id, plan)
            assert all(o.ok for o in observations) and same_rows(observations[-1].result, scenario.gold.answer)


def test_closed_distractors_are_deterministic_and_keep_the_solution(suite: Suite) -> None:
    scenario = suite.scenarios[0]
    access = ToolAccess(distractors=6)
    shown = access.apply(scenario, list(suite.toolbox.specs), seed=0)
    assert set(scenario.tools) <= set(shown.tools) and len(shown.tools) == len(scenario.tools) + 6
    assert access.apply(scenario, list(suite.toolbox.specs), seed=0).tools == shown.tools
    assert access.apply(scenario, list(suite.toolbox.specs), seed=1).tools != shown.tools


def search(env: Environment, tool: str, **arguments: object) -> Observation:
    observation = env.step(Action(kind="tool_call", tool_call=ToolCall(id="s", name=tool, arguments=arguments)))
    assert observation is not None
    return observation


def test_open_world_search_finds_documents_and_discloses(suite: Suite) -> None:
    scenario = next(s for s in suite.scenarios if "Chile" in s.task)
    env = suite.environment(scenario, 0, PRESET_SETTINGS["clean"], ToolAccess(mode="open"))
    start = env.reset()
    assert [t.name for t in start.tools] == [SEARCH_TOOLS, GET_INFO]
    found = search(env, SEARCH_TOOLS, query="titles of books whose author_id is in a list", num_results=3)
    assert found.ok and 1 <= len(found.result) <= 3
    assert all(set(item) == {"name", "description"} for item in found.result)
    assert {item["name"] for item in found.result} <= {t.name for t in env.tools()}
    info = search(env, GET_INFO, tool_name=scenario.gold.plans[0][0].tool)
    assert info.ok and info.result["parameters"]["type"] == "object"


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        (SEARCH_TOOLS, {"query": "  "}, "needs a non-empty query"),
        (SEARCH_TOOLS, {"query": "books", "num_results": 0}, "num_results must be an integer from 1 to 9, got 0"),
        (SEARCH_TOOLS, {"query": "books", "num_results": 10}, "num_results must be an integer from 1 to 9, got 10"),
        (GET_INFO, {"tool_name": "function_9999"}, "No tool named 'function_9999'"),
    ],
)
def test_bad_search_requests_are_observations(suite: Suite, tool: str, arguments: dict, message: str) -> None:
    env = suite.environment(suite.scenarios[0], 0, PRESET_SETTINGS["clean"], ToolAccess(mode="open"))
    env.reset()
    observation = search(env, tool, **arguments)
    assert not observation.ok and message in observation.error.message


def test_a_removed_function_never_appears_in_search_or_get_info(suite: Suite) -> None:
    scenario = next(s for s in suite.scenarios if "Chile" in s.task)
    direct = scenario.gold.plans[0][0].tool
    description = suite.toolbox.specs[direct].description
    env = suite.environment(scenario, 0, PRESET_SETTINGS["removed"], ToolAccess(mode="open"))
    env.reset()
    found = search(env, SEARCH_TOOLS, query=description, num_results=9)
    assert found.ok and direct not in {item["name"] for item in found.result}
    assert not search(env, GET_INFO, tool_name=direct).ok
    called = search(env, direct, **scenario.gold.plans[0][0].arguments)
    assert not called.ok and called.error.type == "unknown_tool" and called.fault.kind == "removed"
    clean = suite.environment(scenario, 0, PRESET_SETTINGS["clean"], ToolAccess(mode="open"))
    clean.reset()
    assert direct in {item["name"] for item in search(clean, SEARCH_TOOLS, query=description).result}


# ---------------------------------------------------------------------------------------------------------------
# Sweeps name a Spider folder directly; the CLI builds


def test_a_spider_folder_in_a_sweep_is_built_once_and_cached(
    spider: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UNDERTOW_CACHE", str(tmp_path / "cache"))
    ref = suite_ref({"family": "sqlfuncs", "spider": str(spider), "seed": 5})
    suite = load_ref(ref)
    (built,) = (tmp_path / "cache" / "suites").iterdir()
    stamp = (built / "tools.jsonl").stat().st_mtime_ns
    assert suite.family == "sqlfuncs" and ref.label == spider.name
    from undertow.env_core.suites import suite_folder

    assert suite_folder(ref) == built and (built / "tools.jsonl").stat().st_mtime_ns == stamp
    other = suite_folder(suite_ref({"family": "sqlfuncs", "spider": str(spider), "seed": 6}))
    assert other != built and other.parent == built.parent  # another build field: another build


def test_cli_build_prints_the_summary_and_rejects_bad_arguments(spider: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["build", "sqlfuncs", f"spider={spider}", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert "both paths match gold (kept)" in result.output and "functions" in result.output
    assert "sqlfuncs gold answers by database" in result.output and "left out: tie at the LIMIT cut" in result.output
    assert json.loads((tmp_path / "o" / "build.json").read_text())["scenarios"] > 0
    missing = runner.invoke(app, ["build", "sqlfuncs", "--out", str(tmp_path / "x")])
    assert missing.exit_code == 2 and "sqlfuncs suite: spider: Field required" in " ".join(missing.output.split())
    nowhere = runner.invoke(app, ["build", "sqlfuncs", f"spider={tmp_path / 'nope'}", "--out", str(tmp_path)])
    assert nowhere.exit_code == 2 and "Spider folder not found" in " ".join(nowhere.output.split())
    unknown = runner.invoke(app, ["build", "bird", "--out", str(tmp_path)])
    assert unknown.exit_code == 2 and "unknown family 'bird'" in unknown.output
    typo = runner.invoke(app, ["build", "sqlfunc", f"spider={spider}", "--out", str(tmp_path / "t")])
    assert typo.exit_code == 2 and "did you mean 'sqlfuncs'?" in " ".join(typo.output.split())
    stranger = runner.invoke(app, ["build", "sqlfuncs", f"spider={spider}", "seeed=2", "--out", str(tmp_path / "s")])
    assert stranger.exit_code == 2 and "sqlfuncs suite: seeed: unknown field" in " ".join(stranger.output.split())


def test_cli_build_reads_its_argument_as_a_family_beside_a_folder_of_that_name(
    spider: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for _ in range(2):  # the second time, ./sqlfuncs is the folder the first one wrote
        result = CliRunner().invoke(app, ["build", "sqlfuncs", f"spider={spider}", "--out", "sqlfuncs"])
        assert result.exit_code == 0, result.output
    assert load_suite(tmp_path / "sqlfuncs").family == "sqlfuncs"


@pytest.mark.slow
def test_a_spider_sweep_end_to_end_through_ray_with_the_family_report(spider: Path, tmp_path: Path) -> None:
    config = {
        "name": "hohw",
        "models": ["oracle", "naive", "random"],  # random searches: many shards share the node's index actor
        "suites": [{"family": "sqlfuncs", "spider": str(spider), "access": {"mode": "open"}}],
        "settings": ["clean", "first_tried", "impossible"],
        "run": {"store": str(tmp_path / "runs"), "shard_size": 2},
    }
    (tmp_path / "sweep.yaml").write_text(yaml.safe_dump(config))
    env = {**os.environ, "UNDERTOW_CACHE": str(tmp_path / "cache"), "COLUMNS": "200"}
    done = run_cli("run", "sweep.yaml", cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "failures by category" in done.stdout and f"{spider.name}:open" in done.stdout
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if not p.name.startswith(".")]  # .embeddings: the cache
    report = run_cli("report", str(run_dir), "--format", "json", "--families", env=env, timeout=120)
    assert report.returncode == 0, report.stderr
    summary = json.loads(report.stdout)["families"][f"{spider.name}:open"]
    rows = run_cli("report", str(run_dir), "--format", "json", env=env, timeout=120)
    # the index actor stayed up
    assert all(row["outcomes"]["infra_error"] == 0 for row in json.loads(rows.stdout)["rows"])
    oracle, naive = summary["models"]["oracle"], summary["models"]["naive"]
    assert oracle["decrease"]["absolute_points"] == 0 and naive["decrease"]["absolute_points"] == 100
    assert oracle["settings"]["impossible"]["accuracy"] == 1.0  # gave up: the right behaviour
    first_tried = naive["settings"]["first_tried"]["errors"]
    assert first_tried["percent"]["search"] == 100  # the chain never showed up in any search
    assert naive["settings"]["impossible"]["errors"]["percent"]["no_give_up"] == 100
