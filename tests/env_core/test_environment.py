"""Episodes (env_core.environment): argument checks, faults as they fire, staged disclosure and isolation."""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import ValidationError

from undertow.env_core.environment import Environment
from undertow.env_core.faults import (
    _TRANSIENT_MESSAGES,
    PRESET_SETTINGS,
    FaultRuntime,
    Setting,
    expects_give_up,
    resolve_faults,
)
from undertow.env_core.model import (
    TRANSIENT_ERRORS,
    Action,
    DisclosureRule,
    FaultKind,
    FaultSpec,
    FiredFault,
    Gold,
    Observation,
    Persistence,
    PlannedCall,
    Scenario,
    ToolCall,
    ToolSpec,
)
from undertow.env_core.scenarios import validation_problems
from undertow.env_core.suites import Suite
from undertow.env_core.tools import SqliteToolBox, ToolBox, ToolExecutionError

_CALL_IDS = itertools.count(1)
UNAVAILABLE = "{tool} is currently unavailable. Please try a different function."


def call(
    env: Environment, name: str, arguments: dict[str, Any] | None = None, *, raw: str | None = None
) -> Observation:
    call_id = f"call-{next(_CALL_IDS)}"
    tool_call = ToolCall(id=call_id, name=name, arguments=arguments or {}, unparsed_arguments=raw)
    observation = env.step(Action(kind="tool_call", tool_call=tool_call))
    assert observation is not None
    assert observation.call_id == call_id
    assert observation.tool == name
    assert observation.latency_ms >= 0
    assert observation.ok == (observation.error is None)
    return observation


def names(specs: list[ToolSpec]) -> list[str]:
    return [s.name for s in specs]


def temporary(after: int) -> Persistence:
    return Persistence(mode="temporary", after=after)


class Reports:
    """The first 'reports' scenario of the smoke suite and its three solution tools.

    ``direct`` is the primary plan (one call); ``lookup`` then ``chained`` is the tool-disjoint backup plan.
    """

    def __init__(self, suite: Suite):
        self.suite = suite
        self.scenario = next(s for s in suite.scenarios if s.metadata["template"] == "reports")
        (primary,), (lookup, chained) = self.scenario.gold.plans
        self.direct, self.lookup, self.chained = primary.tool, lookup.tool, chained.tool
        self.name_args = dict(primary.arguments)
        manager = suite.toolbox.query(
            "SELECT id FROM employees WHERE first_name = :first_name AND last_name = :last_name", self.name_args
        )
        self.manager_ids = [row["id"] for row in manager]
        self.answer = self.scenario.gold.answer

    def arguments(self, tool: str) -> dict[str, Any]:
        return {"manager_ids": list(self.manager_ids)} if tool == self.chained else dict(self.name_args)

    def env(self, faults: list[FaultSpec] | None = None, scenario: Scenario | None = None) -> Environment:
        env = Environment(scenario or self.scenario, self.suite.toolbox, faults=faults or [])
        env.reset()
        return env

    def setting_env(self, setting: str) -> Environment:
        env = self.suite.environment(self.scenario, 0, PRESET_SETTINGS[setting])
        env.reset()
        return env

    def run_backup(self, env: Environment) -> Observation:
        looked_up = call(env, self.lookup, self.arguments(self.lookup))
        assert looked_up.ok, looked_up.error
        ids = [row["employee_id"] for row in looked_up.result]
        return call(env, self.chained, {"manager_ids": ids})


@pytest.fixture(scope="module")
def reports(smoke: Suite) -> Reports:
    return Reports(smoke)


# ---------------------------------------------------------------------------------------------------------------
# Arguments, unknown tools and what an observation records


def test_reset_gives_the_task_and_all_visible_tools(reports: Reports) -> None:
    env = Environment(reports.scenario, reports.suite.toolbox)
    start = env.reset()
    assert start.task == reports.scenario.task
    assert names(start.tools) == reports.scenario.tools
    assert names(env.tools()) == reports.scenario.tools


def test_successful_call_records_result_and_no_error(reports: Reports) -> None:
    env = reports.env()
    arguments = reports.arguments(reports.direct)
    observation = call(env, reports.direct, arguments)
    assert observation.ok
    assert observation.result == reports.answer
    assert observation.error is None
    assert observation.fault is None
    assert observation.disclosed == []
    assert arguments == reports.arguments(reports.direct)  # the call's arguments are not modified


@pytest.mark.parametrize(
    ("tool", "arguments", "fragments"),
    [
        pytest.param("find_employee_ids", {"first_name": "Noor"}, ["'last_name' is a required property"], id="missing"),
        pytest.param(
            "find_employee_ids",
            {"first_name": "Noor", "last_name": 3},
            ["3 is not of type 'string'", "(at 'last_name')"],
            id="wrong-type",
        ),
        pytest.param(
            "find_employee_ids",
            {"first_name": "Noor", "last_name": "Kim", "nickname": "N"},
            ["Additional properties are not allowed ('nickname' was unexpected)"],
            id="extra",
        ),
        pytest.param(
            "list_reports_with_salary",
            {"manager_ids": ["a"]},
            ["'a' is not of type 'integer'", "(at 'manager_ids.0')"],
            id="list-item-type",
        ),
        pytest.param(
            "list_reports_with_salary", {"manager_ids": 7}, ["7 is not of type 'array'"], id="scalar-for-list"
        ),
        pytest.param(
            "employees_paid_above", {"min_salary": "lots"}, ["'lots' is not of type 'number'"], id="not-a-number"
        ),
    ],
)
def test_invalid_arguments_are_reported_naming_tool_and_problem(
    reports: Reports, tool: str, arguments: dict[str, Any], fragments: list[str]
) -> None:
    env = reports.env()
    observation = call(env, tool, arguments)
    assert not observation.ok
    assert observation.result is None
    assert observation.fault is None
    assert observation.error.type == "invalid_arguments"
    assert not observation.error.retryable
    assert observation.error.message.startswith(f"Invalid arguments for {tool}: ")
    for fragment in fragments:
        assert fragment in observation.error.message
    # The episode goes on: a valid call afterwards works.
    assert call(env, reports.direct, reports.arguments(reports.direct)).result == reports.answer


def test_unparsed_arguments_are_invalid_arguments_mentioning_json(reports: Reports) -> None:
    env = reports.env()
    raw = '{"first_name": "No'
    observation = call(env, reports.lookup, raw=raw)
    assert not observation.ok
    assert observation.result is None
    assert observation.error.type == "invalid_arguments"
    message = observation.error.message
    assert message.startswith(f"Arguments for {reports.lookup} ")
    assert "JSON" in message
    assert message.endswith(repr(raw))


def test_unparsed_arguments_are_quoted_at_most_200_characters(reports: Reports) -> None:
    env = reports.env()
    observation = call(env, reports.lookup, raw="x" * 500)
    assert "x" * 200 in observation.error.message
    assert "x" * 201 not in observation.error.message


def test_unknown_tool_lists_the_available_tools(reports: Reports, smoke: Suite) -> None:
    env = reports.env()
    observation = call(env, "teleport", {"where": "home"})
    assert not observation.ok
    assert observation.error.type == "unknown_tool"
    assert observation.error.message == (
        f"Unknown tool 'teleport'. Available tools: {', '.join(sorted(smoke.toolbox.specs))}."
    )
    assert observation.fault is None


def test_sql_error_is_a_tool_error_naming_the_tool() -> None:
    broken = ToolSpec(name="broken", description="d", binding={"sql": "SELECT * FROM missing_table"})
    toolbox = SqliteToolBox([broken], sqlite3.connect(":memory:"))
    scenario = Scenario(id="s", family="f", task="t", tools=["broken"], gold=Gold())
    env = Environment(scenario, toolbox)
    env.reset()
    observation = call(env, "broken")
    assert observation.error.type == "tool_error"
    assert observation.error.message == "broken failed: no such table: missing_table"


# ---------------------------------------------------------------------------------------------------------------
# Faults at run time


def test_permanent_unavailable_always_fails_and_leaves_other_tools_working(reports: Reports) -> None:
    env = reports.env([FaultSpec(kind="unavailable", target=reports.direct)])
    for _ in range(3):
        observation = call(env, reports.direct, reports.arguments(reports.direct))
        assert not observation.ok
        assert observation.error.type == "unavailable"
        assert observation.error.message == UNAVAILABLE.format(tool=reports.direct)
        assert "currently unavailable" in observation.content()
        assert observation.fault == FiredFault(kind=FaultKind.unavailable, index=0)
    backup = reports.run_backup(env)
    assert backup.ok
    assert backup.result == reports.answer
    assert backup.fault is None


def test_temporary_unavailable_fails_n_times_then_returns_the_real_rows(reports: Reports) -> None:
    faults = [
        FaultSpec(kind="unavailable", target="projects_in_city"),
        FaultSpec(kind="unavailable", target=reports.direct, persistence=temporary(2)),
    ]
    env = reports.env(faults)
    for _ in range(2):
        failed = call(env, reports.direct, reports.arguments(reports.direct))
        assert failed.error.type == "unavailable"
        assert failed.fault == FiredFault(kind=FaultKind.unavailable, index=1)
    healed = call(env, reports.direct, reports.arguments(reports.direct))
    assert healed.ok
    assert healed.result == reports.answer
    assert healed.fault is None


def test_temporary_fault_counts_each_tool_separately(reports: Reports) -> None:
    env = reports.env(
        [FaultSpec(kind="unavailable", target=[reports.direct, reports.lookup], persistence=temporary(1))]
    )
    assert not call(env, reports.direct, reports.arguments(reports.direct)).ok
    assert not call(env, reports.lookup, reports.arguments(reports.lookup)).ok
    assert call(env, reports.direct, reports.arguments(reports.direct)).ok
    assert call(env, reports.lookup, reports.arguments(reports.lookup)).ok


@pytest.mark.parametrize("first", ["direct", "lookup", "chained"])
def test_first_tried_disables_whichever_solution_tool_is_called_first(reports: Reports, first: str) -> None:
    env = reports.setting_env("first_tried")
    solution = [reports.direct, reports.lookup, reports.chained]
    disabled = getattr(reports, first)

    observation = call(env, disabled, reports.arguments(disabled))
    assert not observation.ok
    assert observation.error.message == UNAVAILABLE.format(tool=disabled)
    assert observation.fault == FiredFault(kind=FaultKind.first_tried, index=0, detail="first tried")

    for other in solution:
        if other != disabled:
            working = call(env, other, reports.arguments(other))
            assert working.ok, (other, working.error)
            assert working.fault is None
    assert not call(env, disabled, reports.arguments(disabled)).ok  # permanent


def test_first_tried_ignores_tools_outside_its_targets(reports: Reports) -> None:
    env = reports.setting_env("first_tried")
    assert call(env, "projects_in_city", {"city": "Berlin"}).ok
    assert call(env, "projects_in_city", {"city": "Oslo"}).ok
    disabled = call(env, reports.lookup, reports.arguments(reports.lookup))
    assert disabled.fault == FiredFault(kind=FaultKind.first_tried, index=0, detail="first tried")
    assert call(env, reports.direct, reports.arguments(reports.direct)).result == reports.answer


def test_temporary_first_tried_heals_after_n_calls(reports: Reports) -> None:
    fault = FaultSpec(kind="first_tried", target=[reports.direct, reports.lookup], persistence=temporary(2))
    env = reports.env([fault])
    assert call(env, reports.direct, reports.arguments(reports.direct)).fault.kind == FaultKind.first_tried
    assert call(env, reports.lookup, reports.arguments(reports.lookup)).ok  # not the first tried
    assert not call(env, reports.direct, reports.arguments(reports.direct)).ok
    healed = call(env, reports.direct, reports.arguments(reports.direct))
    assert healed.ok
    assert healed.result == reports.answer


def test_reset_starts_the_fault_state_afresh(reports: Reports) -> None:
    env = reports.setting_env("first_tried")
    assert not call(env, reports.direct, reports.arguments(reports.direct)).ok
    env.reset()
    assert not call(env, reports.lookup, reports.arguments(reports.lookup)).ok  # a new first choice
    assert call(env, reports.direct, reports.arguments(reports.direct)).ok


def test_removed_tool_is_absent_and_calling_it_records_the_fault(reports: Reports) -> None:
    env = reports.suite.environment(reports.scenario, 0, PRESET_SETTINGS["removed"])
    start = env.reset()
    expected_tools = sorted(t for t in reports.scenario.tools if t != reports.direct)
    assert sorted(names(start.tools)) == expected_tools  # the closed list is shuffled (env_core.search)
    assert sorted(names(env.tools())) == expected_tools

    observation = call(env, reports.direct, reports.arguments(reports.direct))
    assert not observation.ok
    assert observation.error.type == "unknown_tool"
    assert observation.error.message.startswith(f"Unknown tool '{reports.direct}'. Available tools: ")
    assert f" {reports.direct}," not in observation.error.message
    assert observation.fault == FiredFault(kind=FaultKind.removed, index=0)
    assert reports.run_backup(env).result == reports.answer


TRANSIENT_MESSAGES = {
    "timeout": "Request to {tool} timed out after 30 s: a momentary network glitch, and nothing was processed. Retry "
    "the same request; it should go through.",
    "rate_limit": "429 Too Many Requests: a momentary burst of calls to {tool} hit its rate limit. Retry the same "
    "request in a moment; it should go through.",
    "service_unavailable": "503 Service Unavailable: {tool} failed momentarily (a brief hiccup; nothing was "
    "processed). Retry the same request; it should succeed.",
}


@pytest.mark.parametrize("error", sorted(TRANSIENT_MESSAGES))
def test_transient_fault_fails_n_times_with_a_retryable_error_then_works(reports: Reports, error: str) -> None:
    fault = FaultSpec(kind="transient", target=reports.direct, persistence=temporary(2), params={"error": error})
    env = reports.env([fault])
    for _ in range(2):
        observation = call(env, reports.direct, reports.arguments(reports.direct))
        assert not observation.ok
        assert observation.error.type == error
        assert observation.error.retryable
        assert observation.error.message == TRANSIENT_MESSAGES[error].format(tool=reports.direct)
        assert observation.fault == FiredFault(kind=FaultKind.transient, index=0)
    assert call(env, reports.direct, reports.arguments(reports.direct)).result == reports.answer


@pytest.mark.parametrize("error", sorted(TRANSIENT_MESSAGES))
def test_a_transient_error_and_an_unavailable_one_of_the_same_kind_read_apart(reports: Reports, error: str) -> None:
    """The same error type, told apart by what the agent reads: a transient failure says it is momentary and that
    the same request should work again (retryable), an outage says nothing of retrying (not retryable)."""
    passing = FaultSpec(kind="transient", target=reports.direct, persistence=temporary(1), params={"error": error})
    outage = FaultSpec(kind="unavailable", target=reports.direct, persistence=temporary(1), params={"error": error})
    blip = call(reports.env([passing]), reports.direct, reports.arguments(reports.direct))
    down = call(reports.env([outage]), reports.direct, reports.arguments(reports.direct))
    assert blip.error.type == down.error.type == error
    assert (blip.error.retryable, down.error.retryable) == (True, False)
    assert "momentar" in blip.error.message and "same request" in blip.error.message
    assert "retry" not in down.error.message.lower() and "momentar" not in down.error.message
    # the tool message itself carries the flag, so an agent reading JSON need not parse the wording
    assert json.loads(blip.content())["error"]["retryable"] is True
    assert json.loads(down.content())["error"]["retryable"] is False


@pytest.mark.parametrize("error", ["unavailable", "timeout", "rate_limit", "service_unavailable", "auth", "forbidden"])
@pytest.mark.parametrize("persistence", [Persistence(), temporary(2)], ids=["permanent", "temporary"])
def test_an_unavailable_tool_never_advises_a_retry(reports: Reports, error: str, persistence: Persistence) -> None:
    env = reports.env(
        [FaultSpec(kind="unavailable", target=reports.direct, persistence=persistence, params={"error": error})]
    )
    observation = call(env, reports.direct, reports.arguments(reports.direct))
    assert not observation.ok and not observation.error.retryable
    assert reports.direct in observation.error.message
    assert "retry" not in observation.error.message.lower() and "try again" not in observation.error.message.lower()


def test_an_error_of_no_retryable_kind_reads_as_before(reports: Reports) -> None:
    """Only errors of a kind a client might retry state ``retryable``: an invalid call's message is unchanged."""
    observation = call(reports.env(), reports.direct, {"nonsense": 1})
    assert observation.error.type == "invalid_arguments"
    assert json.loads(observation.content()) == {
        "error": {"type": "invalid_arguments", "message": observation.error.message}
    }


def test_transient_error_kinds_have_different_messages() -> None:
    messages = set()
    for error in TRANSIENT_MESSAGES:
        runtime = FaultRuntime(
            [FaultSpec(kind="transient", target="t", persistence=temporary(1), params={"error": error})]
        )
        tool_error, _ = runtime.intercept("t")
        messages.add(tool_error.message)
    assert len(messages) == len(TRANSIENT_MESSAGES)


def test_preset_transient_setting_gives_two_503s_on_the_primary_tool(reports: Reports) -> None:
    env = reports.setting_env("transient")
    errors = [call(env, reports.direct, reports.arguments(reports.direct)).error for _ in range(3)]
    assert [e.type if e else None for e in errors] == ["service_unavailable", "service_unavailable", None]


def test_transient_fault_without_error_param_is_a_503() -> None:
    runtime = FaultRuntime([FaultSpec(kind="transient", target="t", persistence=temporary(1))])
    tool_error, fired = runtime.intercept("t")
    assert tool_error.type == "service_unavailable"
    assert fired == FiredFault(kind=FaultKind.transient, index=0)
    assert runtime.intercept("t") is None


def test_invalid_transient_error_kind_is_refused_when_the_fault_is_read(reports: Reports) -> None:
    with pytest.raises(ValidationError) as excinfo:
        FaultSpec(kind="transient", target=reports.direct, persistence=temporary(1), params={"error": "meteor"})
    assert validation_problems(excinfo.value) == [
        "params.error: unknown value 'meteor'; expected one of: service_unavailable, rate_limit, timeout"
    ]


def test_every_transient_error_a_fault_accepts_has_its_wording() -> None:
    assert set(TRANSIENT_ERRORS) == set(_TRANSIENT_MESSAGES)


class Ledger(ToolBox):
    """A tool box that keeps history: prices by item, today's and those of ``age_days`` ago (``snapshot``)."""

    TODAY: ClassVar[dict[str, float]] = {"tea": 4.5, "jam": 6.0}  # jam was first sold in the last few days
    EARLIER: ClassVar[dict[str, float]] = {"tea": 3.9}

    def __init__(self, history: bool = True):
        specs = [
            ToolSpec(name="price", description="An item's price.", parameters=ITEM),
            ToolSpec(name="restock", description="Set an item's price.", parameters=ITEM),
        ]
        super().__init__(specs)
        self.history = history
        self.snapshots: list[int] = []  # the ages asked for

    def new_state(self) -> dict[str, float]:
        return dict(self.TODAY)

    def snapshot(self, state: dict[str, float], age_days: int) -> dict[str, float] | None:
        if not self.history:
            return super().snapshot(state, age_days)
        self.snapshots.append(age_days)
        return dict(self.EARLIER)

    def execute(self, state: dict[str, float], spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        item = arguments["item"]
        if item not in state:
            raise ToolExecutionError(f"no item {item!r}")
        if spec.name == "restock":
            state[item] = 9.0
        return {"item": item, "price": state[item]}


ITEM = {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}


def ledger_env(box: Ledger, faults: list[FaultSpec]) -> Environment:
    scenario = Scenario(id="ledger", family="f", task="t", tools=["price", "restock"], gold=Gold())
    env = Environment(scenario, box, faults=faults)
    env.reset()
    return env


def stale_signals(age_days: int) -> dict[str, str]:
    # the fault layer's clock is 2026-03-20 06:00 UTC
    day = 20 - age_days
    return {"generated_at": f"2026-03-{day:02d}T06:00:00Z", "_stale_warning": f"Data generated {age_days} days ago."}


def test_stale_reads_the_world_of_age_days_ago_where_the_tool_box_keeps_one() -> None:
    box = Ledger()
    env = ledger_env(box, [FaultSpec(kind="stale", target="price", params={"age_days": 3})])
    old = call(env, "price", {"item": "tea"})
    assert old.ok and old.result == {"item": "tea", "price": 3.9, **stale_signals(3)}
    assert old.fault is not None and old.fault.kind == FaultKind.stale and box.snapshots == [3]
    # an item the earlier world did not have: today's value, still with the signals
    assert call(env, "price", {"item": "jam"}).result == {"item": "jam", "price": 6.0, **stale_signals(3)}


def test_a_stale_call_leaves_the_episode_state_untouched() -> None:
    env = ledger_env(Ledger(), [FaultSpec(kind="stale", target="restock", persistence=temporary(1))])
    ran_then = call(env, "restock", {"item": "tea"})
    assert ran_then.result == {"item": "tea", "price": 9.0, **stale_signals(4)}  # the default age: 4 days
    assert call(env, "price", {"item": "tea"}).result == {"item": "tea", "price": 4.5}  # today's, unchanged


def test_a_tool_box_without_history_keeps_the_signal_only_stale(reports: Reports) -> None:
    env = ledger_env(Ledger(history=False), [FaultSpec(kind="stale", target="price")])
    assert call(env, "price", {"item": "tea"}).result == {"item": "tea", "price": 4.5, **stale_signals(4)}
    # the same on a family's real tool box: today's rows, each with the signals
    stale = call(reports.env([FaultSpec(kind="stale", target=reports.direct)]), reports.direct, reports.name_args)
    assert stale.result == [{**row, **stale_signals(4)} for row in reports.answer]


def test_fault_runtime_reports_the_tool_first_tried_disabled() -> None:
    runtime = FaultRuntime(
        [FaultSpec(kind="unavailable", target="a"), FaultSpec(kind="first_tried", target=["b", "c"])]
    )
    assert runtime.first_tried_tools() == set()
    fired = [runtime.intercept(tool) for tool in ("a", "c", "b", "c")]
    assert [f is not None for f in fired] == [True, True, False, True]
    assert runtime.first_tried_tools() == {"c"}
    healing = FaultRuntime(
        [FaultSpec(kind="first_tried", target=["b"], persistence=Persistence(mode="temporary", after=1))]
    )
    healing.intercept("b")
    assert healing.first_tried_tools() == set()  # a temporary first_tried fault blocks no plan for good


def test_same_calls_in_two_environments_give_the_same_observations(reports: Reports) -> None:
    def play() -> list[dict[str, Any]]:
        env = reports.setting_env("first_tried")
        observations = [
            call(env, reports.lookup, reports.arguments(reports.lookup)),
            call(env, reports.direct, reports.arguments(reports.direct)),
            call(env, reports.direct, {}),
        ]
        return [o.model_dump(exclude={"latency_ms", "call_id"}) for o in observations]

    assert play() == play()


# ---------------------------------------------------------------------------------------------------------------
# Settings: resolving symbolic targets, and whether giving up is the right behaviour


def _with_own_fault(scenario: Scenario) -> Scenario:
    return scenario.model_copy(update={"faults": [FaultSpec(kind="unavailable", target="projects_in_city")]})


def test_resolve_faults_expands_symbolic_targets(reports: Reports) -> None:
    solution = [reports.direct, reports.lookup, reports.chained]
    (first_tried,) = resolve_faults(reports.scenario, PRESET_SETTINGS["first_tried"])
    assert first_tried.kind == FaultKind.first_tried
    assert first_tried.target == solution
    (unavailable,) = resolve_faults(reports.scenario, PRESET_SETTINGS["unavailable"])
    assert unavailable.target == [reports.direct]
    assert PRESET_SETTINGS["first_tried"].faults[0].target == "@solution"  # the preset is not modified


def test_resolve_faults_deduplicates_and_keeps_plain_names(reports: Reports) -> None:
    setting = Setting(
        name="mixed", faults=[FaultSpec(kind="unavailable", target=["@primary", reports.direct, "projects_in_city"])]
    )
    (fault,) = resolve_faults(reports.scenario, setting)
    assert fault.target == [reports.direct, "projects_in_city"]


def test_resolve_faults_drops_symbolic_faults_of_a_scenario_without_plans(reports: Reports) -> None:
    no_plans = reports.scenario.model_copy(update={"gold": Gold(answer=[{"x": 1}])})
    assert resolve_faults(no_plans, PRESET_SETTINGS["impossible"]) == []
    assert resolve_faults(no_plans, PRESET_SETTINGS["removed"]) == []


@pytest.mark.parametrize(
    ("setting", "added"),
    [
        ("clean", None),
        ("first_tried", FaultKind.first_tried),
        ("impossible", FaultKind.unavailable),
        ("removed", FaultKind.removed),
        ("transient", FaultKind.transient),
    ],
)
def test_clean_drops_the_scenarios_own_faults_other_settings_keep_them(
    reports: Reports, setting: str, added: FaultKind | None
) -> None:
    scenario = _with_own_fault(reports.scenario)
    resolved = resolve_faults(scenario, PRESET_SETTINGS[setting])
    if added is None:
        assert resolved == []
    else:
        assert [f.kind for f in resolved] == [FaultKind.unavailable, added]
        assert resolved[0].target == ["projects_in_city"]


def test_scenario_own_faults_fire_through_the_suite_environment(reports: Reports) -> None:
    scenario = _with_own_fault(reports.scenario)
    faulty = reports.suite.environment(scenario, 3, PRESET_SETTINGS["first_tried"])
    faulty.reset()
    assert faulty.seed == 3
    assert call(faulty, "projects_in_city", {"city": "Oslo"}).fault == FiredFault(kind=FaultKind.unavailable, index=0)
    clean = reports.suite.environment(scenario, 3, PRESET_SETTINGS["clean"])
    clean.reset()
    assert call(clean, "projects_in_city", {"city": "Oslo"}).ok


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("clean", False),
        ("first_tried", False),
        ("impossible", True),
        ("unavailable", False),
        ("removed", False),
        ("transient", False),
    ],
)
def test_expects_give_up_for_preset_settings_on_every_smoke_scenario(
    smoke: Suite, setting: str, expected: bool
) -> None:
    for scenario in smoke.scenarios:
        faults = resolve_faults(scenario, PRESET_SETTINGS[setting])
        assert expects_give_up(scenario, faults) is expected, scenario.id


def _single_plan(scenario: Scenario) -> Scenario:
    return scenario.model_copy(update={"gold": scenario.gold.model_copy(update={"plans": scenario.gold.plans[:1]})})


@pytest.mark.parametrize(
    ("setting", "expected"),
    [("clean", False), ("first_tried", True), ("removed", True), ("unavailable", True), ("transient", False)],
)
def test_expects_give_up_for_a_single_plan_scenario(reports: Reports, setting: str, expected: bool) -> None:
    scenario = _single_plan(reports.scenario)
    assert expects_give_up(scenario, resolve_faults(scenario, PRESET_SETTINGS[setting])) is expected


@pytest.mark.parametrize("kind", ["unavailable", "first_tried"])
def test_temporary_faults_never_block_a_plan(reports: Reports, kind: str) -> None:
    scenario = _single_plan(reports.scenario)
    faults = [FaultSpec(kind=kind, target=reports.scenario.gold.solution_tools(), persistence=temporary(5))]
    assert expects_give_up(scenario, faults) is False
    assert expects_give_up(reports.scenario, faults) is False


def test_a_dead_tool_in_every_plan_expects_give_up(reports: Reports) -> None:
    faults = [FaultSpec(kind="unavailable", target=reports.direct), FaultSpec(kind="removed", target=reports.chained)]
    assert expects_give_up(reports.scenario, faults) is True
    assert expects_give_up(reports.scenario, faults[:1]) is False


def test_a_scenario_without_plans_never_expects_give_up(reports: Reports) -> None:
    no_plans = reports.scenario.model_copy(update={"gold": Gold(answer=[{"x": 1}])})
    assert expects_give_up(no_plans, [FaultSpec(kind="unavailable", target=reports.direct)]) is False


def _plans_scenario(plans: list[list[str]]) -> Scenario:
    tools = sorted({t for plan in plans for t in plan})
    gold = Gold(plans=[[PlannedCall(tool=t) for t in plan] for plan in plans])
    return Scenario(id="plans", family="f", task="t", tools=tools, gold=gold)


def test_first_tried_with_disjoint_plans_leaves_the_task_solvable() -> None:
    scenario = _plans_scenario([["a", "b"], ["c"]])
    assert expects_give_up(scenario, resolve_faults(scenario, PRESET_SETTINGS["first_tried"])) is False


def test_first_tried_with_plans_sharing_a_tool_expects_give_up() -> None:
    scenario = _plans_scenario([["a", "shared"], ["b", "shared"]])
    # The agent may call the shared tool first, which leaves no plan.
    assert expects_give_up(scenario, resolve_faults(scenario, PRESET_SETTINGS["first_tried"])) is True


def test_first_tried_is_survivable_whenever_every_first_choice_leaves_a_plan() -> None:
    scenario = _plans_scenario([["a", "b"], ["b", "c"], ["a", "c"]])
    faults = resolve_faults(scenario, PRESET_SETTINGS["first_tried"])
    for first in "abc":  # the claim checked by hand: some plan avoids whichever tool is tried first
        assert any(first not in {c.tool for c in plan} for plan in scenario.gold.plans)
    assert expects_give_up(scenario, faults) is False


@pytest.mark.parametrize(
    ("plans", "tried", "expected"),
    [
        ([["a", "shared"], ["b", "shared"]], {"a"}, False),  # worst case was give-up; this agent kept a plan
        ([["a", "shared"], ["b", "shared"]], {"shared"}, True),
        ([["a"], ["b"]], {"a"}, False),
        ([["a"]], {"a"}, True),
        ([["a"]], set(), False),  # the agent never touched a solution tool: nothing was disabled
    ],
)
def test_expects_give_up_uses_the_tool_the_agent_actually_tried_first(
    plans: list[list[str]], tried: set[str], expected: bool
) -> None:
    scenario = _plans_scenario(plans)
    faults = resolve_faults(scenario, PRESET_SETTINGS["first_tried"])
    assert expects_give_up(scenario, faults, first_tried=tried) is expected


# ---------------------------------------------------------------------------------------------------------------
# Staged disclosure


def _staged(reports: Reports, rule: DisclosureRule, extra_visible: list[str] | None = None) -> Scenario:
    return reports.scenario.model_copy(
        update={
            "tools": [reports.direct, *(extra_visible or [])],
            "hidden_tools": [reports.lookup, reports.chained],
            "disclosure": [rule],
        }
    )


def test_hidden_tools_are_disclosed_after_the_trigger_tool_fails(reports: Reports) -> None:
    rule = DisclosureRule(tools=[reports.lookup, reports.chained], after_failure_of=reports.direct)
    scenario = _staged(reports, rule)
    env = reports.env([FaultSpec(kind="unavailable", target=reports.direct)], scenario=scenario)
    assert names(env.tools()) == [reports.direct]

    early = call(env, reports.lookup, reports.arguments(reports.lookup))
    assert early.error.type == "unknown_tool"
    assert early.error.message == f"Unknown tool '{reports.lookup}'. Available tools: {reports.direct}."
    assert early.disclosed == []

    failed = call(env, reports.direct, reports.arguments(reports.direct))
    assert failed.error.type == "unavailable"
    assert failed.disclosed == [reports.lookup, reports.chained]
    assert failed.content().endswith(f"\n[new tools are now available: {reports.lookup}, {reports.chained}]")
    assert names(env.tools()) == [reports.direct, reports.lookup, reports.chained]

    backup = reports.run_backup(env)
    assert backup.result == reports.answer
    assert backup.disclosed == []

    env.reset()
    assert names(env.tools()) == [reports.direct]


def test_disclosure_waits_for_a_failure_of_its_own_trigger(reports: Reports) -> None:
    rule = DisclosureRule(tools=[reports.lookup, reports.chained], after_failure_of=reports.direct)
    env = reports.env(scenario=_staged(reports, rule, extra_visible=["projects_in_city"]))
    assert call(env, reports.direct, reports.arguments(reports.direct)).disclosed == []  # succeeded
    other_failure = call(env, "projects_in_city", {"town": "Oslo"})
    assert other_failure.error.type == "invalid_arguments"
    assert other_failure.disclosed == []
    assert names(env.tools()) == [reports.direct, "projects_in_city"]
    assert call(env, reports.direct, {}).disclosed == [reports.lookup, reports.chained]


def test_after_calls_discloses_on_the_nth_call(reports: Reports) -> None:
    rule = DisclosureRule(tools=[reports.lookup], after_calls=2)
    env = reports.env(scenario=_staged(reports, rule))
    assert call(env, reports.direct, reports.arguments(reports.direct)).disclosed == []
    assert names(env.tools()) == [reports.direct]
    second = call(env, reports.direct, reports.arguments(reports.direct))
    assert second.ok
    assert second.disclosed == [reports.lookup]
    assert names(env.tools()) == [reports.direct, reports.lookup]
    assert call(env, reports.direct, reports.arguments(reports.direct)).disclosed == []


def test_rule_without_trigger_discloses_after_any_failed_call(reports: Reports) -> None:
    env = reports.env(scenario=_staged(reports, DisclosureRule(tools=[reports.chained])))
    assert call(env, reports.direct, reports.arguments(reports.direct)).disclosed == []
    assert call(env, reports.direct, {}).disclosed == [reports.chained]


# ---------------------------------------------------------------------------------------------------------------
# Isolation between episodes, and the episode life cycle


NOTES_TOOLS = [
    ToolSpec(
        name="add_note",
        description="Store a note.",
        parameters={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
        binding={"sql": "INSERT INTO notes (text) VALUES (:text)"},
    ),
    ToolSpec(
        name="rename_notes",
        description="Rename every note.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        binding={"sql": "UPDATE notes SET text = :text"},
    ),
    ToolSpec(
        name="list_notes",
        description="List notes, optionally only those starting with a prefix.",
        parameters={"type": "object", "properties": {"prefix": {"type": "string"}}},
        binding={"sql": "SELECT text FROM notes WHERE :prefix IS NULL OR text LIKE :prefix || '%' ORDER BY id"},
    ),
    ToolSpec(
        name="count_notes",
        description="Count the notes.",
        binding={"sql": "SELECT COUNT(*) AS n FROM notes"},
    ),
]
NOTES_SCENARIO = Scenario(
    id="notes",
    family="notes",
    task="Add a note.",
    tools=[t.name for t in NOTES_TOOLS],
    gold=Gold(),
)


def _notes_database(path: str = ":memory:") -> sqlite3.Connection:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
    db.execute("INSERT INTO notes (text) VALUES ('seed')")
    db.commit()
    return db


@pytest.fixture
def notes_toolbox() -> Iterator[SqliteToolBox]:
    db = _notes_database()
    yield SqliteToolBox(NOTES_TOOLS, db)
    db.close()


def _count(env: Environment) -> int:
    return call(env, "count_notes").result[0]["n"]


def test_writes_are_visible_within_the_episode(notes_toolbox: SqliteToolBox) -> None:
    env = Environment(NOTES_SCENARIO, notes_toolbox)
    env.reset()
    inserted = call(env, "add_note", {"text": "hello"})
    assert inserted.ok
    assert inserted.result == []
    assert _count(env) == 2
    assert call(env, "rename_notes", {"text": "same"}).ok
    assert call(env, "list_notes").result == [{"text": "same"}, {"text": "same"}]


def test_writes_do_not_leak_into_another_episode(notes_toolbox: SqliteToolBox) -> None:
    first = Environment(NOTES_SCENARIO, notes_toolbox)
    first.reset()
    call(first, "add_note", {"text": "secret"})
    call(first, "rename_notes", {"text": "overwritten"})

    second = Environment(NOTES_SCENARIO, notes_toolbox)
    second.reset()
    assert _count(second) == 1
    assert call(second, "list_notes").result == [{"text": "seed"}]
    assert _count(first) == 2  # the first episode still sees its own writes
    assert notes_toolbox.query("SELECT COUNT(*) AS n FROM notes") == [{"n": 1}]


def test_reset_discards_the_episodes_writes(notes_toolbox: SqliteToolBox) -> None:
    env = Environment(NOTES_SCENARIO, notes_toolbox)
    env.reset()
    call(env, "add_note", {"text": "temporary"})
    assert _count(env) == 2
    env.reset()
    assert _count(env) == 1


def test_episode_writes_never_reach_the_database_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    _notes_database(str(path)).close()
    before = path.read_bytes()
    env = Environment(NOTES_SCENARIO, SqliteToolBox(NOTES_TOOLS, str(path)))
    env.reset()
    call(env, "add_note", {"text": "x"})
    assert path.read_bytes() == before


def test_optional_arguments_default_to_null_without_changing_the_call(notes_toolbox: SqliteToolBox) -> None:
    env = Environment(NOTES_SCENARIO, notes_toolbox)
    env.reset()
    call(env, "add_note", {"text": "other"})
    arguments: dict[str, Any] = {}
    assert call(env, "list_notes", arguments).result == [{"text": "seed"}, {"text": "other"}]
    assert arguments == {}
    assert call(env, "list_notes", {"prefix": "ot"}).result == [{"text": "other"}]


@pytest.mark.parametrize(
    ("specs", "expected"),
    [
        (NOTES_TOOLS + NOTES_TOOLS[:1], "duplicate tool name 'add_note'"),
        ([ToolSpec(name="no_sql", description="d")], "tool 'no_sql' has no binding.sql"),
    ],
    ids=["duplicate", "no-sql"],
)
def test_bad_sqlite_toolbox_specs_are_refused(specs: list[ToolSpec], expected: str) -> None:
    with pytest.raises(ValueError) as excinfo:
        SqliteToolBox(specs, sqlite3.connect(":memory:"))
    assert str(excinfo.value) == expected


def test_step_before_reset_raises(notes_toolbox: SqliteToolBox) -> None:
    env = Environment(NOTES_SCENARIO, notes_toolbox)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step(Action(kind="tool_call", tool_call=ToolCall(id="c", name="count_notes")))


@pytest.mark.parametrize("kind", ["final_answer", "give_up"])
def test_answer_or_give_up_ends_the_episode(notes_toolbox: SqliteToolBox, kind: str) -> None:
    env = Environment(NOTES_SCENARIO, notes_toolbox)
    env.reset()
    assert not env.done
    assert env.step(Action(kind=kind, content="done")) is None
    assert env.done
    with pytest.raises(RuntimeError, match="the episode is over"):
        env.step(Action(kind="tool_call", tool_call=ToolCall(id="c", name="count_notes")))
    with pytest.raises(RuntimeError, match="the episode is over"):
        env.step(Action(kind="final_answer", content="again"))
    env.reset()
    assert not env.done
    assert _count(env) == 1


def test_step_after_close_raises(notes_toolbox: SqliteToolBox) -> None:
    env = Environment(NOTES_SCENARIO, notes_toolbox)
    env.reset()
    env.close()
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step(Action(kind="final_answer", content="x"))


@pytest.mark.parametrize("bad", [{"arguments": {}}, {"raw": '{"first_name": '}], ids=["invalid", "unparseable"])
def test_a_down_tool_fails_before_its_arguments_are_checked(reports: Reports, bad: dict[str, Any]) -> None:
    """A call with bad arguments still counts as the first try: the service is down, the request never lands."""
    env = reports.setting_env("first_tried")
    first = call(env, reports.direct, **bad)
    assert first.error is not None and first.error.type == "unavailable"
    assert first.fault is not None and first.fault.kind == "first_tried"
    assert env.first_tried_tools() == {reports.direct}
    again = call(env, reports.direct, reports.arguments(reports.direct))
    assert again.error is not None and again.error.type == "unavailable"
