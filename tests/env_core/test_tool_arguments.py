"""Arguments a model sends are the model's: whatever they hold, they come back as an observation it reads (a tool
error of type ``invalid_arguments`` or ``tool_error``), never as an infrastructure failure of the episode."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from helpers.builders import step
from helpers.endpoint import answer, scripted_server, tool_calls
from helpers.runs import scripted_episode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from undertow.env_core.environment import Environment
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import Gold, Observation, Outcome, Scenario, ToolSpec
from undertow.env_core.suites import Suite, SuiteRef
from undertow.env_core.tools import (
    MAIN,
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_MESSAGE,
    MAX_STRING,
    QUERY_TIMEOUT_S,
    QUOTE_CHARS,
    SqliteToolBox,
    ToolExecutionError,
    shorten_quotes,
)
from undertow.env_core.untrusted import clean_arguments
from undertow.workers.agent import Protocol

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
            {"first_name": "x" * (MAX_STRING + 1), "last_name": "Schmidt"},
            f"a string of {MAX_STRING + 1} characters is longer than the {MAX_STRING} allowed (at 'first_name')",
            id="long-string",
        ),
        pytest.param(
            "list_reports_with_salary",
            {"manager_ids": [1] * (MAX_ITEMS + 1)},
            "the arguments are 300,020 characters of JSON, more than the 100,000 a call may carry; they began: "
            + json.dumps({"manager_ids": [1] * (MAX_ITEMS + 1)})[:200]
            + "… (300,020 characters)",
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


def test_a_lone_surrogate_is_replaced_before_the_tool_sees_it(env: Environment) -> None:
    """The call's arguments are cleaned as they enter the trajectory (env_core.untrusted), and the tool runs on
    what was recorded: a lone surrogate becomes U+FFFD, in a value or in a name."""
    observation = step(env, "find_employee_ids", {"first_name": "No\ud800r", "last_name": "Schmidt"})
    assert observation.ok and observation.result == [], observation.error  # nobody is called "No\ufffdr"
    observation = step(env, "find_employee_ids", {"first_name": "Noor", "last_name": "Schmidt", "\udfff": 1})
    assert observation.error is not None and observation.error.type == "invalid_arguments"
    assert observation.error.message == (
        "Invalid arguments for find_employee_ids: Additional properties are not allowed ('\ufffd' was unexpected)"
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param(
            {"manager_ids": [1] * (MAX_ITEMS + 1)},
            f"an array of {MAX_ITEMS + 1} elements is longer than the {MAX_ITEMS} allowed (at 'manager_ids')",
            id="long-array",
        ),
        pytest.param(
            {"first_name": "No\ud800r", "last_name": "Schmidt"},
            "a string is not valid Unicode text (it holds a lone surrogate) (at 'first_name')",
            id="lone-surrogate",
        ),
        pytest.param(
            {"first_name": "Noor", "\udfff": "Schmidt"},
            "a name is not valid Unicode text (it holds a lone surrogate) (at '\\udfff')",
            id="lone-surrogate-name",
        ),
    ],
)
def test_a_tool_box_called_directly_refuses_what_the_cleaning_would_have_changed(
    smoke: Suite, arguments: dict[str, Any], message: str
) -> None:
    """Tool boxes are also called without the environment (policies, plan walks): they check for themselves."""
    spec = smoke.toolbox.specs["find_employee_ids" if "first_name" in arguments else "list_reports_with_salary"]
    error = smoke.toolbox.argument_error(spec, arguments)
    assert error == f"Invalid arguments for {spec.name}: {message}"


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
    output = scripted_episode(ref, base_url, scenario_id, protocol=protocol, max_turns=4)
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
    # the tool runs on the arguments as the trajectory records them: cleaned (lone surrogates replaced, ...)
    recorded = clean_arguments(arguments)
    schema_valid = Draft202012Validator(smoke.toolbox.specs[tool].parameters).is_valid(recorded)
    if not schema_valid or not bindable(recorded):
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


# ---------------------------------------------------------------------------------------------------------------
# Long arguments and slow queries (issue 29): a refusal quotes an argument short, a query is bounded in time

MEGABYTE = "x" * 1_000_000


def test_a_refusal_quotes_a_long_argument_short(smoke: Suite, env: Environment) -> None:
    # 3,000 characters pass the length check; jsonschema's message would repeat them whole
    spec = smoke.toolbox.specs["employees_paid_above"]
    assert smoke.toolbox.argument_error(spec, {"min_salary": "x" * 3000}) == (
        f"Invalid arguments for employees_paid_above: '{'x' * QUOTE_CHARS}… (3,000 characters)' is not of type "
        "'number' (at 'min_salary')"
    )
    unexpected = smoke.toolbox.argument_error(spec, {"min_salary": 1, "k" * 3000: 1})
    assert unexpected == (
        "Invalid arguments for employees_paid_above: Additional properties are not allowed "
        f"('{'k' * QUOTE_CHARS}… (3,000 characters)' was unexpected)"
    )
    # past the cap: refused before anything else looks at it, the name in the path quoted short too
    assert smoke.toolbox.argument_error(spec, {"k" * 1_000_000: 1}) == (
        f"Invalid arguments for employees_paid_above: a name of 1000000 characters is longer than the {MAX_STRING} "
        f"allowed (at '{'k' * QUOTE_CHARS}… (1,000,000 characters)')"
    )
    for arguments in ({"min_salary": "x" * 3000}, {"min_salary": MEGABYTE}, {MEGABYTE: 1}):
        observation = step(env, "employees_paid_above", arguments)
        assert observation.error is not None and observation.error.type == "invalid_arguments"
        assert len(observation.error.message) < 2 * QUOTE_CHARS + 200, observation.error.message[:300]


def test_an_unknown_tool_with_a_long_name_is_quoted_short(env: Environment) -> None:
    observation = step(env, "t" * 5000, {})
    assert observation.error is not None and observation.error.type == "unknown_tool"
    assert observation.error.message.startswith(f"Unknown tool '{'t' * QUOTE_CHARS}… (5,000 characters)'. ")


NEWLINES = "\n" * 300  # Python and JSON write it as 600 characters
ACCENTS = "é" * 300  # JSON in ASCII writes it as 1,800 characters


@pytest.mark.parametrize(
    ("message", "shortened"),
    [
        pytest.param("no row for " + "y" * 500, "no row for " + "y" * QUOTE_CHARS + "… (500 characters)", id="as-is"),
        pytest.param(repr(NEWLINES), "'" + "\\n" * (QUOTE_CHARS // 2) + "… (600 characters)'", id="escaped"),
        pytest.param(json.dumps(ACCENTS), '"' + ("\\u00e9" * 34)[:QUOTE_CHARS] + '… (1,800 characters)"', id="json"),
        # a quotation no argument matches (the tool changed it) is cut with the whole message
        pytest.param("z" * 5000, "z" * MAX_MESSAGE + "… (5,000 characters)", id="cut"),
    ],
)
def test_shorten_quotes(message: str, shortened: str) -> None:
    arguments = {"a": "y" * 500, "b": [NEWLINES, {"c": ACCENTS}]}
    assert shorten_quotes(message, arguments) == shortened


def count_to(timeout_s: float, smoke: Suite) -> SqliteToolBox:
    """A tool whose query runs as long as its argument says (a recursive count), over the smoke database."""
    spec = ToolSpec(
        name="count_to",
        description="Count from 1 to n.",
        parameters={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        binding={
            "sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < :n) "
            "SELECT count(*) AS n FROM c"
        },
    )
    assert isinstance(smoke.toolbox, SqliteToolBox)
    return SqliteToolBox([spec], smoke.toolbox.sources[MAIN], timeout_s=timeout_s)


def test_a_query_past_the_time_limit_is_a_tool_error_and_the_episode_goes_on(smoke: Suite) -> None:
    assert isinstance(smoke.toolbox, SqliteToolBox) and smoke.toolbox.timeout_s == QUERY_TIMEOUT_S
    scenario = Scenario(id="count", family="smoke", task="count", tools=["count_to"], gold=Gold())
    environment = Environment(scenario, count_to(0.3, smoke))
    environment.reset()
    try:
        started = time.monotonic()
        observation = step(environment, "count_to", {"n": 2**62})  # hours of counting without the limit
        assert time.monotonic() - started < 10
        assert observation.error is not None
        assert (observation.error.type, observation.error.message) == (
            "tool_error",
            "count_to failed: the query ran past the 0.3 s time limit and was stopped",
        )
        # the episode's connection is usable again, without the limit's handler left behind
        assert step(environment, "count_to", {"n": 1000}).result == [{"n": 1000}]
    finally:
        environment.close()
