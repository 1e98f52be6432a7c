"""Arguments a model sends are the model's: whatever they hold, they come back as an observation it reads (a tool
error of type ``invalid_arguments`` or ``tool_error``), never as an infrastructure failure of the episode."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from helpers.builders import step
from helpers.endpoint import answer, scripted_server, tool_calls
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from undertow.env_core.environment import Environment
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import Observation, Outcome
from undertow.env_core.suites import Suite, SuiteRef
from undertow.env_core.tools import MAX_DEPTH, MAX_ITEMS, MAX_STRING, SqliteToolBox, ToolExecutionError
from undertow.workers.agent import AgentConfig, Protocol
from undertow.workers.clients import EndpointModel
from undertow.workers.runner import EpisodePlan, ShardSpec, run_shard

BIG = 10**30  # past SQLite's signed 64-bit integers: binding it raised OverflowError out of the tool box


@pytest.fixture(scope="module")
def env(smoke: Suite) -> Iterator[Environment]:
    """A clean episode of the first smoke scenario, which shows every smoke tool."""
    scenario = smoke.scenarios[0]
    assert sorted(scenario.tools) == sorted(smoke.toolbox.specs)
    environment = smoke.environment(scenario, 0, PRESET_SETTINGS["clean"])
    environment.reset()
    yield environment
    environment.close()


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


# ---------------------------------------------------------------------------------------------------------------
# Values no tool can take, through Environment.step


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        pytest.param(
            "employees_paid_above",
            {"min_salary": BIG},
            f"{BIG} is outside the signed 64-bit integer range (at 'min_salary')",
            id="int-too-large",
        ),
        pytest.param(
            "employees_paid_above",
            {"min_salary": -(2**63) - 1},
            "-9223372036854775809 is outside the signed 64-bit integer range (at 'min_salary')",
            id="int-too-small",
        ),
        pytest.param(
            "employees_paid_above",
            {"min_salary": 2**4000},
            "an integer of 4001 bits is outside the signed 64-bit integer range (at 'min_salary')",
            id="int-past-str-limit",
        ),
        pytest.param(
            "employees_paid_above",
            {"x": BIG},
            f"{BIG} is outside the signed 64-bit integer range (at 'x')",
            id="unknown-argument",
        ),
        pytest.param(
            "list_reports_with_salary",
            {"manager_ids": [1, 2**64]},
            "18446744073709551616 is outside the signed 64-bit integer range (at 'manager_ids.1')",
            id="int-in-array",
        ),
        pytest.param(
            "employees_paid_above", {"min_salary": math.nan}, "nan is not a finite number (at 'min_salary')", id="nan"
        ),
        pytest.param(
            "employees_paid_above", {"min_salary": math.inf}, "inf is not a finite number (at 'min_salary')", id="inf"
        ),
        pytest.param(
            "employees_paid_above",
            {"min_salary": -math.inf},
            "-inf is not a finite number (at 'min_salary')",
            id="minus-inf",
        ),
        pytest.param(
            "find_employee_ids",
            {"first_name": "No\ud800r", "last_name": "Schmidt"},
            "a string is not valid Unicode text (it holds a lone surrogate) (at 'first_name')",
            id="lone-surrogate",
        ),
        pytest.param(
            "find_employee_ids",
            {"first_name": "Noor", "\udfff": "Schmidt"},
            "a name is not valid Unicode text (it holds a lone surrogate) (at '\\udfff')",
            id="lone-surrogate-name",
        ),
        pytest.param(
            "find_employee_ids",
            {"first_name": "x" * (MAX_STRING + 1), "last_name": "Schmidt"},
            f"a string of {MAX_STRING + 1} characters is longer than the {MAX_STRING} allowed (at 'first_name')",
            id="long-string",
        ),
        pytest.param(
            "list_reports_with_salary",
            {"manager_ids": [1] * (MAX_ITEMS + 1)},
            f"an array of {MAX_ITEMS + 1} elements is longer than the {MAX_ITEMS} allowed (at 'manager_ids')",
            id="long-array",
        ),
        pytest.param(
            "list_reports_with_salary",
            {"manager_ids": nested(MAX_DEPTH + 1)},
            f"values nested deeper than {MAX_DEPTH} levels are not accepted (at 'manager_ids{'.0' * MAX_DEPTH}')",
            id="deep",
        ),
    ],
)
def test_values_no_tool_can_take_are_invalid_arguments_naming_the_argument(
    env: Environment, tool: str, arguments: dict[str, Any], message: str
) -> None:
    observation = step(env, tool, arguments)
    assert (observation.ok, observation.result, observation.fault) == (False, None, None)
    assert observation.error is not None
    assert (observation.error.type, observation.error.retryable) == ("invalid_arguments", False)
    assert observation.error.message == f"Invalid arguments for {tool}: {message}"
    observation.content().encode("utf-8")  # the message can be sent to the model (no lone surrogate in it)


@pytest.mark.parametrize(("salary", "everyone"), [(2**63 - 1, False), (1.5e308, False), (-(2**63), True), (-0.0, True)])
def test_the_extremes_that_fit_are_taken(smoke: Suite, env: Environment, salary: float, everyone: bool) -> None:
    observation = step(env, "employees_paid_above", {"min_salary": salary})
    assert observation.ok, observation.error
    assert isinstance(smoke.toolbox, SqliteToolBox)
    employees = smoke.toolbox.query("SELECT COUNT(*) AS n FROM employees")[0]["n"]
    assert len(observation.result) == (employees if everyone else 0)


def test_nesting_up_to_the_limit_reaches_the_schema(env: Environment) -> None:
    observation = step(env, "list_reports_with_salary", {"manager_ids": nested(MAX_DEPTH)})
    assert observation.error is not None
    assert observation.error.message == (
        "Invalid arguments for list_reports_with_salary: "
        f"{'[' * (MAX_DEPTH - 1)}{']' * (MAX_DEPTH - 1)} is not of type 'integer' (at 'manager_ids.0')"
    )


# ---------------------------------------------------------------------------------------------------------------
# SqliteToolBox.run_sql on its own: a parameter SQLite cannot bind is a ToolExecutionError


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param(
            {"min_salary": BIG},
            "employees_paid_above failed: Python int too large to convert to SQLite INTEGER",
            id="overflow",
        ),
        pytest.param(
            {"min_salary": "\ud800"},
            "employees_paid_above failed: 'utf-8' codec can't encode character '\\ud800' in position 0: "
            "surrogates not allowed",
            id="lone-surrogate",
        ),
        pytest.param(
            {"min_salary": {"a": 1}},
            "employees_paid_above failed: Error binding parameter 1: type 'dict' is not supported",
            id="object",
        ),
    ],
)
def test_run_sql_turns_unbindable_parameters_into_tool_errors(
    smoke: Suite, arguments: dict[str, Any], message: str
) -> None:
    toolbox = smoke.toolbox
    assert isinstance(toolbox, SqliteToolBox)
    state = toolbox.new_state()
    try:
        with pytest.raises(ToolExecutionError) as excinfo:
            toolbox.run_sql(state.connection(), toolbox.specs["employees_paid_above"], arguments)
        assert str(excinfo.value) == message
        # the episode's database is still usable after the failed call
        rows = toolbox.run_sql(state.connection(), toolbox.specs["employees_paid_above"], {"min_salary": 100000})
        assert rows and all(row["salary"] > 100000 for row in rows)
    finally:
        toolbox.close_state(state)


# ---------------------------------------------------------------------------------------------------------------
# Whole episodes: a model over real HTTP sends such arguments, reads the error, and answers


def run_one(ref: SuiteRef, base_url: str, scenario_id: str, protocol: Protocol = "function_calling") -> Any:
    shard = ShardSpec(
        shard_id="arguments",
        model=EndpointModel(name="scripted", base_url=base_url, timeout_s=10.0, max_retries=0),
        suite=ref,
        setting=PRESET_SETTINGS["clean"],
        agent=AgentConfig(protocol=protocol, max_turns=4),
        episodes=[EpisodePlan(episode_id="e", scenario_id=scenario_id, seed=0)],
    )
    output = run_shard(shard)
    ((result,), (trajectory,)) = output.results, output.trajectories
    return result, trajectory


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param(
            '{"min_salary": 1000000000000000000000000000000}',
            f"{BIG} is outside the signed 64-bit integer range (at 'min_salary')",
            id="int-too-large",
        ),
        pytest.param('{"min_salary": NaN}', "nan is not a finite number (at 'min_salary')", id="nan"),
        pytest.param('{"min_salary": -1e999}', "-inf is not a finite number (at 'min_salary')", id="overflowing-float"),
        pytest.param(
            '{"min_salary": ' + "[" * 40 + "]" * 40 + "}",
            f"values nested deeper than {MAX_DEPTH} levels are not accepted (at 'min_salary{'.0' * MAX_DEPTH}')",
            id="deep",
        ),
    ],
)
def test_an_episode_with_an_unusable_argument_is_scored(
    smoke: Suite, smoke_ref: SuiteRef, raw: str, message: str
) -> None:
    scenario = smoke.scenarios[0]
    script = [tool_calls(("employees_paid_above", raw)), answer(json.dumps(scenario.gold.answer))]
    with scripted_server(script) as server:
        result, trajectory = run_one(smoke_ref, server.base_url, scenario.id)

    assert (result.outcome, result.error, result.correct) == (Outcome.scored, None, True)
    assert (result.n_turns, result.n_tool_calls, result.n_tool_errors) == (2, 1, 1)
    (tool_step,) = trajectory.tool_steps()
    assert tool_step.observation is not None and tool_step.observation.error is not None
    assert tool_step.observation.error.type == "invalid_arguments"
    full = f"Invalid arguments for employees_paid_above: {message}"
    assert tool_step.observation.error.message == full
    # what the model read as the tool's reply
    tool_message = server.chat_requests[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert json.loads(tool_message["content"]) == {"error": {"type": "invalid_arguments", "message": full}}


def test_a_direct_sequence_with_an_unusable_argument_is_scored(smoke: Suite, smoke_ref: SuiteRef) -> None:
    scenario = smoke.scenarios[0]
    plan = f'[{{"name": "employees_paid_above", "arguments": {{"min_salary": {BIG}}}, "label": "a"}}]'
    with scripted_server([answer(plan)]) as server:
        result, trajectory = run_one(smoke_ref, server.base_url, scenario.id, protocol="direct")

    assert (result.outcome, result.error, result.correct) == (Outcome.scored, None, False)
    (tool_step,) = trajectory.tool_steps()
    assert tool_step.observation is not None and tool_step.observation.error is not None
    assert tool_step.observation.error.message == (
        f"Invalid arguments for employees_paid_above: {BIG} is outside the signed 64-bit integer range "
        "(at 'min_salary')"
    )


# ---------------------------------------------------------------------------------------------------------------
# Property: any JSON value as any argument of any smoke tool gives an observation

SURROGATES = st.sampled_from(["\ud800", "a\udfffb", "\udbff"])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.integers()
    | st.integers(min_value=2**63 - 2, max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=10)
    | SURROGATES
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5) | SURROGATES, inner, max_size=3),
    max_leaves=10,
)


def schema_shaped(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values of the type an argument's schema asks for (so that valid calls are generated too)."""
    kind = schema.get("type")
    if kind == "string":
        return st.text(max_size=10) | st.sampled_from(["Noor", "Schmidt", "Berlin", "Engineering"])
    if kind == "integer":
        return st.integers(min_value=-(2**63), max_value=2**63 - 1)
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**63), 2**63 - 1)
    if kind == "array":
        return st.lists(schema_shaped(schema.get("items", {})), max_size=4)
    return VALUES


@st.composite
def calls(draw: st.DrawFn, suite: Suite) -> tuple[str, dict[str, Any]]:
    tool = draw(st.sampled_from(sorted(suite.toolbox.specs)))
    properties: dict[str, Any] = suite.toolbox.specs[tool].parameters.get("properties", {})
    names = list(properties)
    arguments: dict[str, Any] = {}
    for name in names:
        if draw(st.integers(0, 9)) > 0:  # now and then a required argument is missing
            arguments[name] = draw(schema_shaped(properties[name]) if draw(st.booleans()) else VALUES)
    others = st.dictionaries(st.sampled_from(["x", "ids", "name", "city"]) | st.text(max_size=5), VALUES, max_size=2)
    if draw(st.integers(0, 4)) == 0:
        arguments.update(draw(others))
    return tool, arguments


def bindable(value: Any) -> bool:
    """JSON that SQLite can bind: strict JSON (no NaN/inf, valid UTF-8) whose integers are 64-bit."""
    try:
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return False

    def ints(v: Any) -> Iterator[int]:
        if isinstance(v, int) and not isinstance(v, bool):
            yield v
        elif isinstance(v, list):
            for item in v:
                yield from ints(item)
        elif isinstance(v, dict):
            for item in v.values():
                yield from ints(item)

    return all(-(2**63) <= i < 2**63 for i in ints(value))


@settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_arguments_give_an_observation(smoke: Suite, env: Environment, data: st.DataObject) -> None:
    tool, arguments = data.draw(calls(smoke))
    observation = step(env, tool, arguments)  # never raises
    assert isinstance(observation, Observation)
    assert observation.ok == (observation.error is None)
    observation.content().encode("utf-8")  # what the model reads can always be sent to it
    schema_valid = Draft202012Validator(smoke.toolbox.specs[tool].parameters).is_valid(arguments)
    if not schema_valid or not bindable(arguments):
        assert not observation.ok
        assert observation.error is not None and observation.error.type == "invalid_arguments"
        assert observation.error.message.startswith(f"Invalid arguments for {tool}: ")
    else:
        assert observation.ok, observation.error  # clean setting, valid arguments: the query runs
        assert isinstance(observation.result, list)


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(lambda: tool_calls(("employees_paid_above", "[" * 5000 + "]" * 5000)), id="args-nested-5000"),
        pytest.param(lambda: tool_calls(("employees_paid_above", '{"min_salary": "\\ud800"}')), id="args-surrogate"),
        pytest.param(lambda: tool_calls(("employees_\ud800", "{}")), id="name-surrogate"),
        pytest.param(lambda: answer("the answer is \ud800"), id="content-surrogate"),
    ],
)
def test_whatever_native_reply_a_model_sends_is_never_an_infra_error(
    smoke: Suite, smoke_ref: SuiteRef, reply: Callable[[], Any]
) -> None:
    scenario = smoke.scenarios[0]
    with scripted_server([reply(), answer(json.dumps(scenario.gold.answer))]) as server:
        result, trajectory = run_one(smoke_ref, server.base_url, scenario.id)
    assert result.outcome != Outcome.infra_error, result.error
    assert result.outcome in (Outcome.scored, Outcome.parse_error, Outcome.budget_exhausted)
    type(trajectory).model_validate_json(trajectory.model_dump_json())  # it can be stored and read back
