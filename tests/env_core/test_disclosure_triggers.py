"""Staged disclosure triggers on the toy family's tools: a fallback tool hidden until a failed call (of a named tool
or of any), a named call, or N calls / attempts / failures; faults are what make calls fail."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.builders import step as call
from pydantic import ValidationError
from toy_family import build as toy_build  # type: ignore[import-not-found]  # tests/ is on the path

from undertow.env_core.environment import Environment
from undertow.env_core.model import (
    DisclosureRule,
    FaultKind,
    FaultSpec,
    Persistence,
    Scenario,
)
from undertow.env_core.scenarios import validation_problems
from undertow.env_core.suites import read_tools
from undertow.env_core.tools import ToolBox

LOOKUP, MIRROR, BACKUP = "lookup_capital", "capital_mirror", "capital_backup"
GOOD, BAD = {"country": "France"}, {"country": "Atlantis"}  # the toy tool fails on a country it does not know


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Scenario, ToolBox]:
    folder = tmp_path_factory.mktemp("toy")
    toy_build.build(toy_build.ToySuite(), folder)
    (lookup,) = read_tools(folder)
    specs = [lookup] + [lookup.model_copy(update={"name": n}) for n in (MIRROR, BACKUP)]
    scenario = Scenario.model_validate_json((folder / "scenarios.jsonl").read_text().splitlines()[0])
    return scenario, toy_build.toolbox(specs, {})


def staged(toy: tuple[Scenario, ToolBox], *rules: DisclosureRule, faults: list[FaultSpec] | None = None) -> Environment:
    scenario, toolbox = toy
    scenario = scenario.model_copy(
        update={"tools": [LOOKUP, MIRROR], "hidden_tools": [BACKUP], "disclosure": list(rules)}
    )
    env = Environment(scenario, toolbox, faults=faults or [])
    env.reset()
    return env


def visible(env: Environment) -> set[str]:
    return {t.name for t in env.tools()}


def revealed_at(env: Environment, calls: list[tuple[str, dict[str, Any]]]) -> int | None:
    """The 1-based number of the call that revealed the backup tool (it must be announced in that observation)."""
    for number, (tool, arguments) in enumerate(calls, start=1):
        assert BACKUP not in visible(env)
        observation = call(env, tool, arguments)
        if observation.disclosed:
            assert observation.disclosed == [BACKUP] and BACKUP in visible(env)
            assert "[new tools are now available: capital_backup]" in observation.content()
            return number
    return None


def test_a_failed_call_of_the_named_tool_reveals(toy: tuple[Scenario, ToolBox]) -> None:
    env = staged(toy, DisclosureRule(tools=[BACKUP], after_failure_of=LOOKUP))
    # a success of it, or a failure of another tool, does not
    assert revealed_at(env, [(LOOKUP, GOOD), (MIRROR, BAD), (LOOKUP, BAD)]) == 3


def test_a_failed_call_of_any_tool_reveals_by_default(toy: tuple[Scenario, ToolBox]) -> None:
    env = staged(toy, DisclosureRule(tools=[BACKUP]))
    assert revealed_at(env, [(LOOKUP, GOOD), (MIRROR, GOOD), (MIRROR, BAD)]) == 3


def test_a_named_call_reveals_whatever_it_returned(toy: tuple[Scenario, ToolBox]) -> None:
    env = staged(toy, DisclosureRule(tools=[BACKUP], after_call_of=MIRROR))
    assert revealed_at(env, [(LOOKUP, GOOD), (LOOKUP, BAD), (MIRROR, GOOD)]) == 3


def test_n_calls_of_any_tool_reveal(toy: tuple[Scenario, ToolBox]) -> None:
    env = staged(toy, DisclosureRule(tools=[BACKUP], after_calls=3))
    assert revealed_at(env, [(LOOKUP, GOOD), (MIRROR, GOOD), (LOOKUP, GOOD)]) == 3


def test_n_attempts_at_the_named_tool_reveal(toy: tuple[Scenario, ToolBox]) -> None:
    env = staged(toy, DisclosureRule(tools=[BACKUP], after_call_of=LOOKUP, after_calls=2))
    assert revealed_at(env, [(LOOKUP, GOOD), (MIRROR, GOOD), (MIRROR, BAD), (LOOKUP, BAD)]) == 4


def test_n_failures_of_the_named_tool_reveal(toy: tuple[Scenario, ToolBox]) -> None:
    env = staged(toy, DisclosureRule(tools=[BACKUP], after_failure_of=LOOKUP, after_calls=2))
    assert revealed_at(env, [(LOOKUP, BAD), (LOOKUP, GOOD), (MIRROR, BAD), (LOOKUP, BAD)]) == 4


def test_a_rule_that_never_fires_keeps_the_tool_hidden(toy: tuple[Scenario, ToolBox]) -> None:
    env = staged(toy, DisclosureRule(tools=[BACKUP], after_call_of=LOOKUP, after_calls=5))
    assert revealed_at(env, [(LOOKUP, GOOD)] * 4) is None
    observation = call(env, BACKUP, GOOD)
    assert observation.error is not None and observation.error.type == "unknown_tool"


def test_a_loud_fault_is_a_failure_that_reveals_and_a_silent_one_is_not(toy: tuple[Scenario, ToolBox]) -> None:
    rule = DisclosureRule(tools=[BACKUP], after_failure_of=LOOKUP)
    transient = FaultSpec(kind=FaultKind.transient, target=LOOKUP, persistence=Persistence(mode="temporary", after=1))
    assert revealed_at(staged(toy, rule, faults=[transient]), [(LOOKUP, GOOD)]) == 1
    stale = FaultSpec(kind=FaultKind.stale, target=LOOKUP)
    assert revealed_at(staged(toy, rule, faults=[stale]), [(LOOKUP, GOOD)] * 3) is None


def test_a_rule_names_one_trigger_tool() -> None:
    with pytest.raises(ValidationError) as excinfo:
        DisclosureRule(tools=[BACKUP], after_failure_of=LOOKUP, after_call_of=MIRROR)
    assert validation_problems(excinfo.value) == ["give after_failure_of or after_call_of, not both"]


def test_disclosure_rules_round_trip() -> None:
    rule = DisclosureRule(tools=[BACKUP], after_call_of=LOOKUP, after_calls=3)
    assert DisclosureRule.model_validate_json(rule.model_dump_json()) == rule
