"""The core data model (env_core.model): JSON/YAML round trips and the validation messages of bad input."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, ValidationError

from undertow.env_core.model import (
    SCHEMA_VERSION,
    Action,
    ArgRef,
    CallPattern,
    Checkpoint,
    DisclosureRule,
    EpisodeResult,
    FaultKind,
    FaultSpec,
    FiredFault,
    Gold,
    Observation,
    Outcome,
    Persistence,
    PlannedCall,
    Scenario,
    Step,
    ToolCall,
    ToolError,
    ToolSpec,
    Trajectory,
    Turn,
    Usage,
)

# ---------------------------------------------------------------------------------------------------------------
# Rich instances: every optional part filled in, so that a round trip has something to lose.


def rich_scenario() -> Scenario:
    return Scenario(
        id="rich-01",
        family="smoke",
        task="What does Sofia earn?",
        tools=["salary_by_name", "find_ids", "salaries_by_ids"],
        hidden_tools=["payroll_export"],
        disclosure=[
            DisclosureRule(tools=["payroll_export"], after_failure_of="salary_by_name"),
            DisclosureRule(tools=["payroll_export"], after_calls=4),
        ],
        faults=[
            FaultSpec(
                kind=FaultKind.unavailable,
                target="salary_by_name",
                persistence=Persistence(mode="temporary", after=2),
            ),
            FaultSpec(
                kind=FaultKind.transient,
                target=["find_ids", "salaries_by_ids"],
                persistence=Persistence(mode="temporary", after=1),
                params={"error": "rate_limit"},
            ),
            FaultSpec(kind=FaultKind.removed, target="@primary"),
            FaultSpec(kind=FaultKind.first_tried, target="@solution"),
        ],
        gold=Gold(
            answer=[{"name": "Sofia", "salary": 52000}],
            plans=[
                [PlannedCall(tool="salary_by_name", arguments={"name": "Sofia"})],
                [
                    PlannedCall(
                        tool="find_ids",
                        arguments={
                            "filters": {"department": "Sales", "limit": 3},
                            "ids": [1, 2, 3],
                            "limit": 7,
                            "near_miss": {"from_call": 0, "field": "id", "note": "extra key"},
                        },
                    ),
                    PlannedCall(
                        tool="salaries_by_ids",
                        arguments={"ids": ArgRef(from_call=0, field="id", many=True), "currency": "EUR"},
                    ),
                ],
            ],
            required_calls=[CallPattern(tool="salary_by_name", arguments={"name": "Sofia"})],
            forbidden_calls=[CallPattern(tool="payroll_export"), CallPattern(tool="find_ids", arguments={"ids": [0]})],
            checkpoints=[
                Checkpoint(trigger="salary_by_name", expect=["unavailable", "backup"], weight=2.5),
                Checkpoint(expect=["Sofia"]),
            ],
        ),
        metadata={"template": "salary", "tags": ["a", "b"], "nested": {"k": [1, 2.5, None]}},
    )


def rich_tool_spec() -> ToolSpec:
    return ToolSpec(
        name="salaries_by_ids",
        description="List salaries of the given employees.",
        parameters={
            "type": "object",
            "properties": {"ids": {"type": "array", "items": {"type": "integer"}}},
            "required": ["ids"],
            "additionalProperties": False,
        },
        binding={"sql": "SELECT salary FROM employees WHERE id IN (SELECT value FROM json_each(:ids))"},
    )


# The one episode that the rich trajectory and the rich result record
EPISODE: dict[str, Any] = {"episode_id": "ep-1", "scenario_id": "rich-01", "model": "m", "seed": 3}


def rich_trajectory() -> Trajectory:
    return Trajectory(
        **EPISODE,
        setting="first_tried",
        faults=[FaultSpec(kind=FaultKind.first_tried, target=["salary_by_name", "find_ids", "salaries_by_ids"])],
        turns=[
            Turn(index=0, content=None, latency_ms=12.5, usage=Usage(prompt_tokens=100, completion_tokens=7)),
            Turn(index=1, content="Trying the backup.", latency_ms=3.25, finish_reason="tool_calls"),
            Turn(index=2, content='[{"name": "Sofia", "salary": 52000}]', finish_reason="stop"),
        ],
        steps=[
            Step(
                turn=0,
                action=Action(
                    kind="tool_call", tool_call=ToolCall(id="c1", name="salary_by_name", arguments={"name": "Sofia"})
                ),
                observation=Observation(
                    call_id="c1",
                    tool="salary_by_name",
                    ok=False,
                    error=ToolError(type="unavailable", message="salary_by_name is currently unavailable."),
                    fault=FiredFault(kind=FaultKind.first_tried, index=0, detail="first tried"),
                    latency_ms=0.5,
                    disclosed=["payroll_export"],
                ),
            ),
            Step(
                turn=1,
                action=Action(
                    kind="tool_call", tool_call=ToolCall(id="c2", name="find_ids", unparsed_arguments="{oops")
                ),
                observation=Observation(
                    call_id="c2",
                    tool="find_ids",
                    ok=False,
                    error=ToolError(type="rate_limit", message="429", retryable=True),
                    fault=FiredFault(kind=FaultKind.transient, index=1),
                ),
            ),
            Step(
                turn=1,
                action=Action(kind="tool_call", tool_call=ToolCall(id="c3", name="find_ids", arguments={"ids": [1]})),
                observation=Observation(call_id="c3", tool="find_ids", ok=True, result=[{"id": 19, "score": 0.75}]),
            ),
            Step(turn=2, action=Action(kind="final_answer", content='[{"name": "Sofia", "salary": 52000}]')),
        ],
        final_answer='[{"name": "Sofia", "salary": 52000}]',
        outcome=Outcome.scored,
    )


def rich_result() -> EpisodeResult:
    return EpisodeResult(
        **EPISODE,
        shard_id="shard-0003",
        suite="smoke",
        family="smoke",
        setting="impossible",
        outcome=Outcome.budget_exhausted,
        error="no answer after 4 turns",
        n_turns=4,
        n_tool_calls=3,
        n_tool_errors=2,
        faults_fired=2,
        gave_up=True,
        expected_give_up=True,
        missing_required=1,
        checkpoint_score=0.75,
        score=0.75,
        correct=True,
        prompt_tokens=1000,
        completion_tokens=50,
        wall_ms=1234.5,
        model_ms=1000.25,
        tool_ms=3.5,
    )


def json_round_trip(model: BaseModel) -> BaseModel:
    return type(model).model_validate_json(model.model_dump_json())


def json_dict_round_trip(model: BaseModel) -> BaseModel:
    return type(model).model_validate(json.loads(json.dumps(model.model_dump(mode="json"))))


def yaml_round_trip(model: BaseModel) -> BaseModel:
    return type(model).model_validate(yaml.safe_load(yaml.safe_dump(model.model_dump(mode="json"))))


ROUND_TRIPS = pytest.mark.parametrize(
    "round_trip", [json_round_trip, json_dict_round_trip, yaml_round_trip], ids=["json", "json-dict", "yaml"]
)


# ---------------------------------------------------------------------------------------------------------------
# Round trips


@ROUND_TRIPS
@pytest.mark.parametrize(
    "make",
    [rich_scenario, rich_tool_spec, rich_trajectory, rich_result],
    ids=["scenario", "tool_spec", "trajectory", "episode_result"],
)
def test_model_round_trip_gives_an_equal_model(make: Callable[[], BaseModel], round_trip) -> None:
    original = make()
    restored = round_trip(original)
    assert restored == original
    assert restored.model_dump(mode="json") == original.model_dump(mode="json")


@ROUND_TRIPS
def test_round_trip_keeps_enum_and_nested_types(round_trip) -> None:
    trajectory = round_trip(rich_trajectory())
    fired = trajectory.steps[0].observation.fault
    assert isinstance(fired, FiredFault)
    assert fired.kind is FaultKind.first_tried
    assert fired.detail == "first tried"
    assert trajectory.steps[1].observation.error == ToolError(type="rate_limit", message="429", retryable=True)
    assert trajectory.steps[1].action.tool_call.unparsed_arguments == "{oops"
    assert trajectory.outcome is Outcome.scored
    assert round_trip(rich_result()).outcome is Outcome.budget_exhausted

    scenario = round_trip(rich_scenario())
    assert [f.kind for f in scenario.faults] == [
        FaultKind.unavailable,
        FaultKind.transient,
        FaultKind.removed,
        FaultKind.first_tried,
    ]
    assert scenario.faults[0].persistence == Persistence(mode="temporary", after=2)
    assert scenario.disclosure[1].after_calls == 4
    assert scenario.gold.checkpoints[0].weight == 2.5


@ROUND_TRIPS
def test_argref_arguments_survive_as_argref_and_literals_stay_literals(round_trip) -> None:
    scenario = round_trip(rich_scenario())
    lookup, chained = scenario.gold.plans[1]

    ref = chained.arguments["ids"]
    assert isinstance(ref, ArgRef)
    assert ref == ArgRef(from_call=0, field="id", many=True)
    assert chained.arguments["currency"] == "EUR"

    literals = lookup.arguments
    assert type(literals["filters"]) is dict
    assert literals["filters"] == {"department": "Sales", "limit": 3}
    assert type(literals["ids"]) is list
    assert literals["ids"] == [1, 2, 3]
    assert type(literals["limit"]) is int
    assert literals["limit"] == 7
    # A dict with more keys than an ArgRef has is a literal, not a reference.
    assert type(literals["near_miss"]) is dict
    assert literals["near_miss"] == {"from_call": 0, "field": "id", "note": "extra key"}


def test_argref_written_as_plain_dict_is_read_as_argref() -> None:
    call = PlannedCall.model_validate({"tool": "t", "arguments": {"ids": {"from_call": 1, "field": "id"}, "n": 2}})
    assert call.arguments["ids"] == ArgRef(from_call=1, field="id", many=False)
    assert call.arguments["n"] == 2


def test_argref_from_call_must_not_be_negative() -> None:
    with pytest.raises(ValidationError) as excinfo:
        ArgRef(from_call=-1, field="id")
    assert excinfo.value.errors()[0]["loc"] == ("from_call",)
    assert "greater than or equal to 0" in str(excinfo.value)


def test_every_smoke_scenario_round_trips_through_yaml(smoke) -> None:
    for scenario in smoke.scenarios:
        assert yaml_round_trip(scenario) == scenario, scenario.id


# ---------------------------------------------------------------------------------------------------------------
# schema_version


@pytest.mark.parametrize("loader", ["python", "json"])
def test_scenario_with_newer_schema_version_is_refused_naming_both_versions(loader: str) -> None:
    data = rich_scenario().model_dump(mode="json")
    data["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(ValidationError) as excinfo:
        if loader == "json":
            Scenario.model_validate_json(json.dumps(data))
        else:
            Scenario.model_validate(data)
    message = str(excinfo.value)
    assert f"schema_version {SCHEMA_VERSION + 1} is newer than this undertow understands ({SCHEMA_VERSION})" in message
    assert excinfo.value.errors()[0]["loc"] == ("schema_version",)


def test_scenario_with_current_schema_version_is_accepted() -> None:
    data = rich_scenario().model_dump(mode="json")
    assert data["schema_version"] == SCHEMA_VERSION
    assert Scenario.model_validate(data).schema_version == SCHEMA_VERSION


@pytest.mark.parametrize("make", [rich_trajectory, rich_result], ids=["trajectory", "episode_result"])
def test_results_with_newer_schema_version_are_refused(make: Callable[[], BaseModel]) -> None:
    data = make().model_dump(mode="json")
    data["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(ValidationError, match=f"schema_version {SCHEMA_VERSION + 1} is newer"):
        type(make()).model_validate(data)


# ---------------------------------------------------------------------------------------------------------------
# FaultSpec and Persistence


def test_an_unknown_fault_kind_is_refused_listing_every_kind() -> None:
    with pytest.raises(ValidationError) as excinfo:
        FaultSpec(kind="flaky", target="t")
    message = str(excinfo.value)
    assert all(f"'{kind.value}'" in message for kind in FaultKind)


@pytest.mark.parametrize(
    ("data", "loc", "fragments"),
    [
        pytest.param(
            {"kind": "removed", "target": "t", "persistence": {"mode": "temporary", "after": 1}},
            (),
            ["a 'removed' tool is absent for the whole episode", "use persistence 'permanent'"],
            id="removed-temporary",
        ),
        pytest.param(
            {"kind": "transient", "target": "t"},
            (),
            ["a 'transient' fault heals by definition", "mode 'temporary' with 'after'"],
            id="transient-permanent",
        ),
        pytest.param(
            {"kind": "unavailable", "target": "t", "persistence": {"mode": "temporary"}},
            ("persistence",),
            ["temporary persistence needs 'after'"],
            id="temporary-without-after",
        ),
        pytest.param(
            {"kind": "unavailable", "target": "t", "persistence": {"mode": "permanent", "after": 2}},
            ("persistence",),
            ["'after' is only meaningful with mode 'temporary'"],
            id="permanent-with-after",
        ),
        pytest.param(
            {"kind": "unavailable", "target": "t", "persistence": {"mode": "temporary", "after": 0}},
            ("persistence", "after"),
            ["greater than or equal to 1"],
            id="after-zero",
        ),
        pytest.param(
            {"kind": "unavailable", "target": "t", "persistence": {"mode": "sometimes", "after": 1}},
            ("persistence", "mode"),
            ["'permanent' or 'temporary'", "sometimes"],
            id="unknown-mode",
        ),
        pytest.param(
            {"kind": "exploding", "target": "t"},
            ("kind",),
            ["Input should be 'unavailable'", "exploding"],
            id="unknown-kind",
        ),
        pytest.param({"kind": "unavailable"}, ("target",), ["Field required"], id="missing-target"),
    ],
)
def test_invalid_fault_spec_is_refused_with_a_message(data: dict[str, Any], loc: tuple, fragments: list[str]) -> None:
    with pytest.raises(ValidationError) as excinfo:
        FaultSpec.model_validate(data)
    errors = excinfo.value.errors()
    assert len(errors) == 1
    assert errors[0]["loc"] == loc
    message = str(excinfo.value)
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize(
    "persistence",
    [Persistence(), Persistence(mode="temporary", after=3)],
    ids=["permanent", "temporary"],
)
def test_valid_persistence_is_accepted(persistence: Persistence) -> None:
    spec = FaultSpec(kind="unavailable", target=["a", "b"], persistence=persistence)
    assert spec.persistence == persistence
    assert spec.targets == ["a", "b"]


def test_fault_spec_targets_wraps_a_single_tool_name() -> None:
    assert FaultSpec(kind="unavailable", target="a").targets == ["a"]


# ---------------------------------------------------------------------------------------------------------------
# Unknown fields, tool specs, actions, scenarios


def _insert(data: Any, path: tuple, key: str, value: Any) -> None:
    for part in path:
        data = data[part]
    data[key] = value


@pytest.mark.parametrize(
    ("make", "path"),
    [
        pytest.param(rich_scenario, (), id="scenario"),
        pytest.param(rich_scenario, ("gold",), id="scenario.gold"),
        pytest.param(rich_scenario, ("faults", 0, "persistence"), id="scenario.faults.persistence"),
        pytest.param(rich_scenario, ("gold", "plans", 0, 0), id="scenario.planned_call"),
        pytest.param(rich_scenario, ("gold", "checkpoints", 1), id="scenario.checkpoint"),
        pytest.param(rich_scenario, ("disclosure", 0), id="scenario.disclosure"),
        pytest.param(rich_tool_spec, (), id="tool_spec"),
        pytest.param(rich_trajectory, ("steps", 0, "observation", "fault"), id="trajectory.fired_fault"),
        pytest.param(rich_trajectory, ("steps", 0, "action", "tool_call"), id="trajectory.tool_call"),
        pytest.param(rich_trajectory, ("turns", 0, "usage"), id="trajectory.usage"),
        pytest.param(rich_result, (), id="episode_result"),
    ],
)
def test_unknown_field_is_refused(make: Callable[[], BaseModel], path: tuple) -> None:
    data = make().model_dump(mode="json")
    _insert(data, path, "surprise_field", "x")
    with pytest.raises(ValidationError) as excinfo:
        type(make()).model_validate(data)
    errors = excinfo.value.errors()
    assert [e["type"] for e in errors] == ["extra_forbidden"]
    assert errors[0]["loc"] == (*path, "surprise_field")
    assert "surprise_field" in str(excinfo.value)
    assert "Extra inputs are not permitted" in str(excinfo.value)


@pytest.mark.parametrize(
    "parameters",
    [{"type": "array", "items": {}}, {}, {"properties": {"x": {"type": "string"}}}, {"type": "string"}],
    ids=["array", "empty", "no-type", "string"],
)
def test_tool_spec_parameters_must_be_an_object_schema(parameters: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as excinfo:
        ToolSpec(name="t", description="d", parameters=parameters)
    assert excinfo.value.errors()[0]["loc"] == ("parameters",)
    assert "parameters must be a JSON schema with type 'object'" in str(excinfo.value)


@pytest.mark.parametrize("name", ["has space", "1starts_with_digit", "", "x" * 65, "dotted.name"])
def test_tool_spec_name_must_be_an_identifier(name: str) -> None:
    with pytest.raises(ValidationError) as excinfo:
        ToolSpec(name=name, description="d")
    assert excinfo.value.errors()[0]["loc"] == ("name",)
    assert "String should match pattern" in str(excinfo.value)


def test_tool_spec_default_parameters_are_an_empty_object_schema() -> None:
    assert ToolSpec(name="t", description="d").parameters == {"type": "object", "properties": {}}


def test_tool_spec_openai_format_hides_the_binding() -> None:
    spec = rich_tool_spec()
    assert spec.openai() == {
        "type": "function",
        "function": {"name": spec.name, "description": spec.description, "parameters": spec.parameters},
    }
    assert "binding" not in json.dumps(spec.openai())


@pytest.mark.parametrize(
    ("kind", "with_call"),
    [("tool_call", False), ("final_answer", True), ("give_up", True)],
)
def test_action_kind_and_tool_call_must_agree(kind: str, with_call: bool) -> None:
    tool_call = ToolCall(id="c", name="t") if with_call else None
    with pytest.raises(ValidationError) as excinfo:
        Action(kind=kind, tool_call=tool_call, content="x")
    assert "tool_call is required for kind 'tool_call' and only then" in str(excinfo.value)


@pytest.mark.parametrize(
    ("kind", "with_call"),
    [("tool_call", True), ("final_answer", False), ("give_up", False)],
)
def test_consistent_actions_are_accepted(kind: str, with_call: bool) -> None:
    tool_call = ToolCall(id="c", name="t") if with_call else None
    action = Action(kind=kind, tool_call=tool_call)
    assert action.kind == kind
    assert (action.tool_call is not None) == with_call


def test_action_kind_must_be_known() -> None:
    with pytest.raises(ValidationError) as excinfo:
        Action(kind="think")
    assert excinfo.value.errors()[0]["loc"] == ("kind",)
    assert "'tool_call', 'code', 'final_answer' or 'give_up'" in str(excinfo.value)


def test_disclosure_rule_may_only_reveal_hidden_tools() -> None:
    data = rich_scenario().model_dump(mode="json")
    data["disclosure"].append({"tools": ["payroll_export", "ghost_tool"]})
    with pytest.raises(ValidationError) as excinfo:
        Scenario.model_validate(data)
    assert "disclosure rule reveals tools that are not in hidden_tools: ['ghost_tool']" in str(excinfo.value)


def rich_scenario_with(**changes: Any) -> dict[str, Any]:
    """The rich scenario as data, with ``changes``."""
    return rich_scenario().model_dump(mode="json") | changes


@pytest.mark.parametrize(
    ("model", "data", "loc", "fragment"),
    [
        (Scenario, rich_scenario_with(id=""), ("id",), "at least 1 character"),
        (Scenario, rich_scenario_with(task=""), ("task",), "at least 1 character"),
        (Scenario, rich_scenario_with(tools="salary_by_name"), ("tools",), "valid list"),
        (Checkpoint, {"expect": ["x"], "weight": 0}, ("weight",), "greater than"),
        (DisclosureRule, {"tools": ["x"], "after_calls": 0}, ("after_calls",), "greater than"),
    ],
    ids=["scenario-id", "scenario-task", "scenario-tools", "checkpoint-weight", "disclosure-after-calls"],
)
def test_field_constraints_are_enforced(
    model: type[BaseModel], data: dict[str, Any], loc: tuple, fragment: str
) -> None:
    with pytest.raises(ValidationError) as excinfo:
        model.model_validate(data)
    assert excinfo.value.errors()[0]["loc"] == loc
    assert fragment in str(excinfo.value)


# ---------------------------------------------------------------------------------------------------------------
# Small behaviours of the models


def test_gold_solution_tools_are_unique_in_plan_order() -> None:
    assert rich_scenario().gold.solution_tools() == ["salary_by_name", "find_ids", "salaries_by_ids"]
    assert Gold().solution_tools() == []


def test_trajectory_tool_steps_leave_out_answers() -> None:
    trajectory = rich_trajectory()
    assert [s.action.tool_call.id for s in trajectory.tool_steps()] == ["c1", "c2", "c3"]


def test_observation_content_of_a_result_is_its_json() -> None:
    observation = Observation(call_id="c", tool="t", ok=True, result=[{"name": "Zoë", "salary": 52000}])
    assert json.loads(observation.content()) == [{"name": "Zoë", "salary": 52000}]
    assert "Zoë" in observation.content()  # not escaped


def test_observation_content_of_an_error_shows_type_and_message_and_disclosed_tools() -> None:
    observation = rich_trajectory().steps[0].observation
    first_line, second_line = observation.content().split("\n")
    assert json.loads(first_line) == {
        "error": {"type": "unavailable", "message": "salary_by_name is currently unavailable."}
    }
    assert second_line == "[new tools are now available: payroll_export]"
