"""Scenario files (env_core.scenarios), suites (env_core.suites) and the built-in smoke suite."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from helpers.builders import follow_plan

from undertow.env_core.environment import Environment
from undertow.env_core.families import get_family
from undertow.env_core.model import ArgRef, Scenario, ToolSpec
from undertow.env_core.scenarios import ScenarioFileError, read_scenarios, scenario_problems, write_scenarios
from undertow.env_core.suites import Suite, SuiteError, copy_suite, load_ref, load_suite, suite_ref
from undertow.env_core.tools import ToolBox


def variant(base: Scenario, scenario_id: str, change: Callable[[dict[str, Any]], None] | None = None) -> Scenario:
    """A copy of ``base`` (as JSON data, so the session's suite is never mutated) with a new id and a change."""
    data = base.model_dump(mode="json")
    data["id"] = scenario_id
    if change is not None:
        change(data)
    return Scenario.model_validate(data)


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------------------------
# read_scenarios / write_scenarios


@pytest.fixture
def file_with_bad_lines(tmp_path: Path, smoke: Suite) -> tuple[Path, list[str]]:
    """Seven lines: three good scenarios, invalid JSON (2), a missing field (3), a duplicate id (5), a blank line."""
    base = smoke.scenarios[0]
    missing_task = variant(base, "no-task").model_dump(mode="json")
    del missing_task["task"]
    path = write_lines(
        tmp_path / "scenarios.jsonl",
        [
            variant(base, "ok-1").model_dump_json(),
            '{"id": "broken", "family": ',
            json.dumps(missing_task),
            variant(base, "ok-2").model_dump_json(),
            variant(base, "ok-1").model_dump_json(),
            "   ",
            variant(base, "ok-3").model_dump_json(),
        ],
    )
    expected = [
        f"{path}:2: not valid JSON",
        f"{path}:3: scenario 'no-task': task: Field required",
        f"{path}:5: duplicate scenario id 'ok-1' (first on line 1)",
    ]
    return path, expected


def test_bad_lines_are_reported_with_file_and_line(file_with_bad_lines: tuple[Path, list[str]]) -> None:
    path, expected = file_with_bad_lines
    with pytest.raises(ScenarioFileError) as excinfo:
        read_scenarios(path)
    assert excinfo.value.problems == expected
    message = str(excinfo.value)
    for problem in expected:
        assert problem in message
    assert "--skip-invalid" in message
    assert f"{path}:1:" not in message
    assert f"{path}:4:" not in message


def test_skip_invalid_returns_valid_scenarios_and_lists_the_skipped(
    file_with_bad_lines: tuple[Path, list[str]],
) -> None:
    path, expected = file_with_bad_lines
    loaded = read_scenarios(path, skip_invalid=True)
    assert [s.id for s in loaded.scenarios] == ["ok-1", "ok-2", "ok-3"]
    assert loaded.skipped == expected


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(lambda d: d.update(tools="abc"), 'tools: Input should be a valid array (got "abc")', id="type"),
        pytest.param(lambda d: d.update(taks="typo"), 'taks: unknown field (got "typo")', id="unknown-field"),
        pytest.param(lambda d: d.update(id=""), 'id: String should have at least 1 character (got "")', id="empty-id"),
        pytest.param(
            lambda d: d["gold"]["plans"][0][0].pop("tool"), "gold.plans[0][0].tool: Field required", id="nested"
        ),
        pytest.param(
            lambda d: d["faults"].append({"kind": "cascade", "target": "x"}),
            "faults[0]: params.on: a 'cascade' fault needs 'on'",
            id="fault-kind",
        ),
        pytest.param(
            lambda d: d["faults"].append({"kind": "unavailable", "target": "x", "persistence": {"after": "soon"}}),
            "faults[0].persistence.after: Input should be a valid integer, unable to parse string as an integer"
            ' (got "soon")',
            id="fault-after",
        ),
        pytest.param(
            lambda d: d.update(schema_version=99),
            "schema_version: schema_version 99 is newer than this undertow understands (1)",
            id="schema-version",
        ),
    ],
)
def test_invalid_line_message_names_file_line_field_and_value(
    tmp_path: Path, smoke: Suite, change: Callable[[dict[str, Any]], None], expected: str
) -> None:
    data = smoke.scenarios[0].model_dump(mode="json")
    change(data)
    path = write_lines(tmp_path / "one.jsonl", [smoke.scenarios[1].model_dump_json(), json.dumps(data)])
    with pytest.raises(ScenarioFileError) as excinfo:
        read_scenarios(path)
    # the line names its scenario too, when it has an id to name
    named = f"scenario '{data['id']}': " if data.get("id") else ""
    assert excinfo.value.problems == [f"{path}:2: {named}{expected}"]


def test_a_json_line_that_is_not_an_object_is_reported(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "list.jsonl", ["[1, 2]"])
    with pytest.raises(ScenarioFileError) as excinfo:
        read_scenarios(path)
    assert excinfo.value.problems == [f"{path}:1: Input should be an object (got [1, 2])"]


def test_more_than_ten_problems_are_shown_as_ten_plus_a_count(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "many.jsonl", ["{nope"] * 12)
    with pytest.raises(ScenarioFileError) as excinfo:
        read_scenarios(path)
    assert len(excinfo.value.problems) == 12
    message = str(excinfo.value)
    assert f"{path}:10: not valid JSON" in message
    assert f"{path}:11:" not in message
    assert "(and 2 more)" in message


@pytest.mark.parametrize("make_path", [lambda tmp: tmp / "absent.jsonl", lambda tmp: tmp], ids=["missing", "folder"])
def test_missing_scenario_file_is_named(tmp_path: Path, make_path: Callable[[Path], Path]) -> None:
    path = make_path(tmp_path)
    with pytest.raises(FileNotFoundError) as excinfo:
        read_scenarios(path)
    assert str(excinfo.value) == f"{path}: scenario file not found"


def test_write_then_read_scenarios_round_trips(tmp_path: Path, smoke: Suite) -> None:
    path = tmp_path / "out.jsonl"
    write_scenarios(path, smoke.scenarios)
    assert len(path.read_text(encoding="utf-8").splitlines()) == len(smoke.scenarios)
    loaded = read_scenarios(path)
    assert loaded.scenarios == smoke.scenarios
    assert loaded.skipped == []
    chained = next(s for s in loaded.scenarios if s.metadata["template"] == "reports").gold.plans[1][1]
    assert isinstance(chained.arguments["manager_ids"], ArgRef)


def test_empty_scenario_file_reads_as_no_scenarios(tmp_path: Path) -> None:
    loaded = read_scenarios(write_lines(tmp_path / "empty.jsonl", ["", "  "]))
    assert loaded.scenarios == []
    assert loaded.skipped == []


# ---------------------------------------------------------------------------------------------------------------
# load_suite: scenarios checked against the tool universe


def _unknown_plan_tool(d: dict[str, Any]) -> None:
    d["gold"]["plans"][1][0]["tool"] = "find_employee_by_badge"


def test_scenario_with_unknown_plan_tool_is_refused_naming_id_and_tool(tmp_path: Path, smoke: Suite) -> None:
    good = smoke.scenarios[:3]
    bad = variant(smoke.scenarios[0], "bad-tool", _unknown_plan_tool)
    path = tmp_path / "custom.jsonl"
    write_scenarios(path, [good[0], bad, *good[1:]])
    with pytest.raises(ScenarioFileError) as excinfo:
        load_ref(suite_ref({"family": "smoke", "scenarios": str(path)}))
    expected = (
        f"{path}:2: scenario 'bad-tool': gold.plans[1][0] references unknown tool 'find_employee_by_badge'; "
        "did you mean 'find_employee_ids'?"
    )
    assert excinfo.value.problems == [expected]
    assert "--skip-invalid" in str(excinfo.value)

    suite = load_ref(suite_ref({"family": "smoke", "scenarios": str(path), "skip_invalid": True}))
    assert [s.id for s in suite.scenarios] == [s.id for s in good]
    assert suite.skipped == [expected]


def test_one_pass_reports_bad_json_and_unknown_tools_together_with_their_lines(tmp_path: Path, smoke: Suite) -> None:
    bad = variant(smoke.scenarios[0], "bad-tool", _unknown_plan_tool)
    path = tmp_path / "mixed.jsonl"
    write_scenarios(path, [smoke.scenarios[0], bad, smoke.scenarios[1]])
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"id": "broken", \n')
    with pytest.raises(ScenarioFileError) as excinfo:
        load_ref(suite_ref({"family": "smoke", "scenarios": str(path)}))
    assert [p.split(": ")[0] for p in excinfo.value.problems] == [f"{path}:2", f"{path}:4"]
    assert "unknown tool 'find_employee_by_badge'" in excinfo.value.problems[0]
    assert excinfo.value.problems[1].endswith("not valid JSON")


def test_custom_scenarios_do_not_leak_into_the_built_in_suite(tmp_path: Path, smoke: Suite) -> None:
    path = tmp_path / "two.jsonl"
    write_scenarios(path, smoke.scenarios[:2])
    assert len(load_ref(suite_ref({"family": "smoke", "scenarios": str(path)})).scenarios) == 2
    again = load_ref(suite_ref("smoke"))
    assert [s.id for s in again.scenarios] == [s.id for s in smoke.scenarios]
    assert again.skipped == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(
            lambda d: d.update(family="retail"),
            "family 'retail' does not match the suite's family 'smoke'",
            id="family",
        ),
        pytest.param(
            lambda d: d["tools"].append("teleport"), "tools references unknown tool 'teleport'", id="visible-tool"
        ),
        pytest.param(
            lambda d: d.update(hidden_tools=["teleport"]),
            "hidden_tools references unknown tool 'teleport'",
            id="hidden-tool",
        ),
        pytest.param(
            lambda d: d["tools"].remove("find_employee_ids"),
            "gold.plans[1][0] uses tool 'find_employee_ids', which is neither visible nor hidden in the scenario",
            id="plan-tool-not-offered",
        ),
        pytest.param(
            lambda d: d["gold"]["plans"][1][1]["arguments"]["manager_ids"].update(from_call=1),
            "gold.plans[1][1].arguments.manager_ids refers to call 1, which is not earlier",
            id="argref-not-earlier",
        ),
        pytest.param(
            lambda d: d["gold"]["required_calls"].append({"tool": "teleport"}),
            "gold.required_calls[0] references unknown tool 'teleport'",
            id="required-call",
        ),
        pytest.param(
            lambda d: d["gold"]["forbidden_calls"].append({"tool": "teleport"}),
            "gold.forbidden_calls[0] references unknown tool 'teleport'",
            id="forbidden-call",
        ),
        pytest.param(
            lambda d: d["faults"].append({"kind": "unavailable", "target": ["@primary", "teleport"]}),
            "faults[0].target references unknown tool 'teleport'",
            id="fault-target",
        ),
    ],
)
def test_scenario_problems_against_the_tool_universe(
    tmp_path: Path, smoke: Suite, change: Callable[[dict[str, Any]], None], expected: str
) -> None:
    reports = next(s for s in smoke.scenarios if s.metadata["template"] == "reports")
    bad = variant(reports, "bad-one", change)
    [found] = scenario_problems(bad, smoke.toolbox.specs, "smoke")
    assert found.startswith(expected)
    if "unknown tool" in expected:  # nothing is close to 'teleport': the message lists the tools there are
        names = sorted(smoke.toolbox.specs)
        assert found.endswith(f"; known: {', '.join(names[:12])}, … ({len(names)} in all)")

    path = tmp_path / "bad.jsonl"
    write_scenarios(path, [bad, smoke.scenarios[1]])
    with pytest.raises(ScenarioFileError) as excinfo:
        load_ref(suite_ref({"family": "smoke", "scenarios": str(path)}))
    assert excinfo.value.problems == [f"{path}:1: scenario 'bad-one': {found}"]


def test_symbolic_fault_targets_are_not_unknown_tools(smoke: Suite) -> None:
    scenario = variant(
        smoke.scenarios[0],
        "symbolic",
        lambda d: d["faults"].extend(
            [{"kind": "unavailable", "target": "@primary"}, {"kind": "removed", "target": ["@solution"]}]
        ),
    )
    assert scenario_problems(scenario, smoke.toolbox.specs, "smoke") == []


def test_no_valid_scenarios_is_a_suite_error(tmp_path: Path, smoke: Suite) -> None:
    empty = write_lines(tmp_path / "empty.jsonl", [])
    with pytest.raises(SuiteError) as excinfo:
        load_ref(suite_ref({"family": "smoke", "scenarios": str(empty)}))
    assert str(excinfo.value) == f"{empty}: no valid scenarios to run"

    only_bad = tmp_path / "bad.jsonl"
    write_scenarios(only_bad, [variant(smoke.scenarios[0], "bad", _unknown_plan_tool)])
    with pytest.raises(SuiteError, match="no valid scenarios to run"):
        load_ref(suite_ref({"family": "smoke", "scenarios": str(only_bad), "skip_invalid": True}))


def test_limit_keeps_the_first_scenarios(smoke: Suite) -> None:
    suite = load_ref(suite_ref({"family": "smoke", "limit": 4}))
    assert [s.id for s in suite.scenarios] == [s.id for s in smoke.scenarios[:4]]


# ---------------------------------------------------------------------------------------------------------------
# load_suite: suite names and folders


def test_missing_suite_folder_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "nowhere"
    with pytest.raises(SuiteError) as excinfo:
        load_suite(folder)
    assert str(excinfo.value) == f"{folder}: suite folder not found"


def test_folder_without_suite_json_is_not_a_suite(tmp_path: Path) -> None:
    with pytest.raises(SuiteError) as excinfo:
        load_suite(tmp_path)
    assert str(excinfo.value) == f"{tmp_path}: not a suite folder (no suite.json)"


@pytest.fixture
def suite_folder(tmp_path: Path, smoke: Suite) -> Path:
    return copy_suite(smoke, tmp_path / "smoke-copy")


def _edit_meta(folder: Path, change: Callable[[dict[str, Any]], None]) -> None:
    meta = json.loads((folder / "suite.json").read_text())
    change(meta)
    (folder / "suite.json").write_text(json.dumps(meta))


def _bad_tool_line(folder: Path) -> None:
    lines = (folder / "tools.jsonl").read_text().splitlines()
    lines[1] = json.dumps({"name": "half_a_tool"})
    (folder / "tools.jsonl").write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        pytest.param(
            lambda f: (f / "suite.json").write_text("{not json"),
            ["{folder}/suite.json: not valid JSON"],
            id="suite-json-invalid",
        ),
        pytest.param(
            lambda f: _edit_meta(f, lambda m: m.update(family="smok")),
            ["{folder}/suite.json: family: unknown family 'smok'; did you mean 'smoke'?"],
            id="unknown-family",
        ),
        pytest.param(
            _bad_tool_line,
            ["{folder}/tools.jsonl:2: invalid tool:", "description", "Field required"],
            id="tool-line",
        ),
        pytest.param(
            lambda f: (f / "database.sqlite").unlink(),
            ["{folder}/database.sqlite: database file not found"],
            id="database-missing",
        ),
        pytest.param(
            lambda f: _edit_meta(f, lambda m: m.update(schema_version=99)),
            ["{folder}/suite.json: schema_version: schema_version 99 is newer than this undertow understands"],
            id="newer-schema",
        ),
        pytest.param(
            lambda f: _edit_meta(f, lambda m: m.pop("family")),
            ["{folder}/suite.json", "family"],
            id="family-missing",
        ),
        pytest.param(
            lambda f: (f / "database.sqlite").write_bytes(b"this is not sqlite" * 64),
            ["{folder}/database.sqlite"],
            id="database-corrupt",
        ),
        pytest.param(
            lambda f: (f / "tools.jsonl").write_text(ToolSpec(name="no_sql", description="d").model_dump_json() + "\n"),
            ["{folder}/tools.jsonl", "no_sql", "binding.sql"],
            id="tool-without-sql",
        ),
    ],
)
def test_damaged_suite_folder_is_a_suite_error_naming_the_file(
    suite_folder: Path, damage: Callable[[Path], Any], expected: list[str]
) -> None:
    damage(suite_folder)
    with pytest.raises(SuiteError) as excinfo:
        load_suite(suite_folder)
    for fragment in expected:
        assert fragment.format(folder=suite_folder) in str(excinfo.value)


def test_write_suite_then_load_folder_round_trips(suite_folder: Path, smoke: Suite) -> None:
    assert sorted(p.name for p in suite_folder.iterdir()) == [
        "database.sqlite",
        "scenarios.jsonl",
        "suite.json",
        "tools.jsonl",
    ]
    loaded = load_suite(suite_folder)
    assert (loaded.name, loaded.family, loaded.version) == (smoke.name, smoke.family, smoke.version)
    assert loaded.scenarios == smoke.scenarios
    assert loaded.toolbox.specs == smoke.toolbox.specs
    assert loaded.toolbox.database_bytes() == smoke.toolbox.database_bytes()
    assert loaded.content_hash() == smoke.content_hash()
    assert loaded.skipped == []


def test_folder_suite_answers_like_the_built_in_one(suite_folder: Path, smoke: Suite) -> None:
    loaded = load_suite(suite_folder)
    sql = "SELECT d.name, COUNT(*) AS n FROM employees e JOIN departments d ON e.department_id = d.id GROUP BY d.id"
    assert loaded.toolbox.query(sql) == smoke.toolbox.query(sql)


def test_suite_ref_loads_a_folder(suite_folder: Path, smoke: Suite) -> None:
    ref = suite_ref({"path": str(suite_folder), "limit": 3})
    assert ref.label == "smoke-copy"
    assert [s.id for s in load_ref(ref).scenarios] == [s.id for s in smoke.scenarios[:3]]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"family": "galaxy"},
            "unknown family 'galaxy' (registered: failtalms, liveapi, middleware, services, smoke, sqlfuncs;",
        ),
        ({"family": "smok"}, "unknown family 'smok'; did you mean 'smoke'?"),
        (
            {},
            "a suite needs 'family' (one of: failtalms, liveapi, middleware, services, smoke, sqlfuncs, or "
            "module:attribute)",
        ),
        ({"family": "smoke", "limit": 0}, "greater than or equal to 1"),
        ({"family": "smoke", "spider": "x"}, "spider\n  Extra inputs are not permitted"),
        ({"family": "sqlfuncs"}, "spider\n  Field required"),
    ],
    ids=["unknown-family", "did-you-mean", "neither", "limit", "field-of-another-family", "own-field-missing"],
)
def test_suite_ref_validation(data: dict[str, Any], expected: str) -> None:
    with pytest.raises(ValueError) as excinfo:
        suite_ref(data)
    assert expected in str(excinfo.value)


def test_a_folder_named_with_another_family_is_refused(suite_folder: Path) -> None:
    assert load_ref(suite_ref({"path": str(suite_folder), "family": "smoke"})).family == "smoke"
    with pytest.raises(SuiteError) as excinfo:
        load_ref(suite_ref({"path": str(suite_folder), "family": "sqlfuncs"}))
    assert str(excinfo.value) == f"{suite_folder}: a 'smoke' suite, not 'sqlfuncs'"


class EchoToolBox(ToolBox):
    """A real (non-SQLite) tool box: every tool returns its arguments."""

    def new_state(self) -> dict[str, Any]:
        return {}

    def execute(self, state: dict[str, Any], spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        return arguments


def test_write_suite_refuses_a_non_sqlite_suite(tmp_path: Path, smoke: Suite) -> None:
    suite = Suite("echo", "echo", "1", EchoToolBox([ToolSpec(name="echo", description="d")]), [])
    with pytest.raises(SuiteError) as excinfo:
        copy_suite(suite, tmp_path / "echo")
    assert str(excinfo.value) == "suite 'echo' is not SQLite-backed; no folder format for it yet"
    assert not (tmp_path / "echo").exists()


# ---------------------------------------------------------------------------------------------------------------
# Determinism and content hash


def test_building_the_smoke_suite_twice_gives_identical_bytes_and_hash(tmp_path: Path) -> None:
    family = get_family("smoke")
    for name in ("a", "b"):
        family.build(suite_ref("smoke"), tmp_path / name)
    first, second = load_suite(tmp_path / "a"), load_suite(tmp_path / "b")
    assert first.toolbox.database_bytes() == second.toolbox.database_bytes()
    assert first.scenarios == second.scenarios
    assert first.content_hash() == second.content_hash()
    assert len(first.content_hash()) == 64


def test_content_hash_changes_with_scenarios_and_data(smoke: Suite) -> None:
    base = smoke.content_hash()
    changed_task = variant(smoke.scenarios[0], smoke.scenarios[0].id, lambda d: d.update(task=d["task"] + "?"))
    edited = Suite(smoke.name, smoke.family, smoke.version, smoke.toolbox, [changed_task, *smoke.scenarios[1:]])
    fewer = Suite(smoke.name, smoke.family, smoke.version, smoke.toolbox, smoke.scenarios[:-1])
    assert len({base, edited.content_hash(), fewer.content_hash()}) == 3


# ---------------------------------------------------------------------------------------------------------------
# The smoke suite itself


def test_smoke_suite_shape(smoke: Suite) -> None:
    assert smoke.name == "smoke"
    assert smoke.family == "smoke"
    assert len(smoke.scenarios) >= 30
    assert len(smoke.toolbox.specs) == 15
    assert len(smoke.by_id) == len(smoke.scenarios)  # ids are unique
    assert {s.metadata["template"] for s in smoke.scenarios} == {
        "reports",
        "city_projects",
        "budget",
        "project_staff",
        "above_average",
    }
    for scenario in smoke.scenarios:
        assert scenario_problems(scenario, smoke.toolbox.specs, "smoke") == [], scenario.id


def test_every_smoke_scenario_has_two_tool_disjoint_plans(smoke: Suite) -> None:
    for scenario in smoke.scenarios:
        plans = [{c.tool for c in plan} for plan in scenario.gold.plans]
        assert len(plans) >= 2, scenario.id
        for a, b in combinations(plans, 2):
            assert not a & b, f"{scenario.id}: plans share {a & b}"


def test_every_smoke_gold_answer_is_a_non_empty_bounded_list_of_records(smoke: Suite) -> None:
    for scenario in smoke.scenarios:
        answer = scenario.gold.answer
        assert isinstance(answer, list), scenario.id
        assert 1 <= len(answer) <= 100, scenario.id
        assert all(isinstance(row, dict) and row for row in answer), scenario.id
        assert not all(v is None for v in answer[0].values()), scenario.id


def test_every_smoke_gold_plan_reproduces_the_gold_answer(smoke: Suite) -> None:
    for scenario in smoke.scenarios:
        for number, plan in enumerate(scenario.gold.plans):
            env = Environment(scenario, smoke.toolbox)
            env.reset()
            observations = follow_plan(env, plan)
            assert all(o.ok for o in observations), observations
            rows = observations[-1].result
            assert rows == scenario.gold.answer, f"{scenario.id} plan {number}"
            env.close()


def test_a_replacement_scenario_file_is_read_instead_of_the_folders_own(suite_folder: Path, smoke: Suite) -> None:
    replacement = suite_folder.parent / "three.jsonl"
    write_scenarios(replacement, smoke.scenarios[:3])
    (suite_folder / "scenarios.jsonl").write_text("{broken\n")  # never read when a replacement is given
    loaded = load_suite(suite_folder, scenarios=replacement)
    assert [s.id for s in loaded.scenarios] == [s.id for s in smoke.scenarios[:3]]
