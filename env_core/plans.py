"""Walking a scenario's gold plans: the logic of the built-in oracle and naive policies, free of any model client.

:class:`PlanWalker` decides the next call (or the answer) from the results read so far, exactly as a policy that
reads tool messages would: the oracle (``recover``) follows the primary plan, retries errors marked retryable,
checks each result a plan step says to check (a silent fault fails the check), and moves to the next plan when a
step fails for good; the naive walker follows the primary plan only, skips its confirmation steps (``verify``),
checks nothing and reports whatever came back. ``undertow.workers.policies`` drives a walker through the model-client
interface; :func:`play` drives one straight through an :class:`~env_core.environment.Environment`, which is how a
family validates its scenarios when it builds them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from undertow.env_core.environment import Environment
from undertow.env_core.model import (
    Action,
    ArgRef,
    Outcome,
    PlannedCall,
    Scenario,
    Step,
    ToolCall,
    Trajectory,
    Turn,
)

MAX_RETRIES = 3
RETRYABLE = ("timeout", "rate_limit", "service_unavailable", "dependency_failed")
GIVE_UP_MARKER = "CANNOT_SOLVE"  # the text that declares a task unsolvable (workers.prompts offers it to models)


@dataclass(frozen=True)
class NextCall:
    tool: str
    arguments: dict[str, Any]
    say: str | None = None  # the plan step's narration (PlannedCall.say), said in the turn that makes the call


@dataclass(frozen=True)
class NextAnswer:
    text: str


Next = NextCall | NextAnswer


def read_tool_message(content: str) -> Any:
    """The JSON value at the start of a tool message (disclosure notes may follow it)."""
    try:
        value, _ = json.JSONDecoder().raw_decode(content or "")
    except json.JSONDecodeError:
        return {"error": {"type": "unparseable", "message": content}}
    return value


def error_of(result: Any) -> dict[str, Any] | None:
    error = result.get("error") if isinstance(result, dict) else None
    return error if isinstance(error, dict) else None


def retryable(error: dict[str, Any]) -> bool:
    """Whether retrying the same call may help: the error's own ``retryable`` flag where the tool message carries
    one (Observation.content), else its type (a message without the flag: a CodeAct traceback read back)."""
    flag = error.get("retryable")
    return flag if isinstance(flag, bool) else error.get("type") in RETRYABLE


def _resolve(call: PlannedCall, results: list[Any]) -> dict[str, Any]:
    arguments = {}
    for name, value in call.arguments.items():
        if isinstance(value, ArgRef):
            earlier = results[value.from_call]
            rows = earlier if isinstance(earlier, list) else [earlier] if isinstance(earlier, dict) else []
            column = [row.get(value.field) for row in rows if isinstance(row, dict)]
            value = column if value.many else (column[0] if column else None)
        arguments[name] = value
    return arguments


class PlanWalker:
    """One episode's walk through the gold plans (see the module docstring). Feed it with :meth:`start`, then
    :meth:`on_result` with each tool result (the JSON the tool message carries)."""

    def __init__(self, scenario: Scenario, recover: bool):
        gold = scenario.gold
        self.recover = recover
        self.plans = gold.plans if recover else gold.plans[:1]
        self.reports = gold.reports
        self.failed: set[int] = set()
        self.plan: int | None = None
        self.results: list[Any] = []
        self.retries = 0

    def _next_plan(self, visible: set[str], open_world: bool) -> int | None:
        for i, plan in enumerate(self.plans):
            # a plan is tried once all its tools can be called (open world: any tool of the universe)
            if i not in self.failed and (open_world or all(c.tool in visible for c in plan)):
                return i
        return None

    def _skips(self, call: PlannedCall) -> bool:
        return not self.recover and call.verify

    def _answer(self) -> NextAnswer:
        assert self.plan is not None
        if self.reports:
            return NextAnswer(self.reports[self.plan])
        last = next((r for r in reversed(self.results) if r is not None), None)
        return NextAnswer(json.dumps(last, default=str))

    def _advance(self) -> Next:
        """The plan's next call, skipping the steps this walker leaves out, or its answer when it is done."""
        assert self.plan is not None
        plan = self.plans[self.plan]
        while len(self.results) < len(plan) and self._skips(plan[len(self.results)]):
            self.results.append(None)  # keeps later steps' references to earlier calls aligned
        if len(self.results) == len(plan):
            return self._answer()
        planned = plan[len(self.results)]
        return NextCall(planned.tool, _resolve(planned, self.results), planned.say)

    def start(self, visible: set[str], open_world: bool = False) -> Next:
        self.plan = self._next_plan(visible, open_world)
        self.results, self.retries = [], 0
        if self.plan is None:
            if not self.recover and self.plans:
                return NextAnswer("I could not find the tool I planned to use.")
            tried = len(self.failed)
            return NextAnswer(f"{GIVE_UP_MARKER}: every way I know to answer this failed ({tried} plan(s) tried).")
        return self._advance()

    def _plan_failed(self, visible: set[str], open_world: bool) -> Next:
        assert self.plan is not None
        self.failed.add(self.plan)
        return self.start(visible, open_world)

    def on_result(self, result: Any, visible: set[str], open_world: bool = False) -> Next:
        assert self.plan is not None
        planned = self.plans[self.plan][len(self.results)]
        error = error_of(result)
        if error is not None:
            if not self.recover:
                return NextAnswer(f"The tool returned an error: {error.get('message')}")
            if retryable(error) and self.retries < MAX_RETRIES:
                self.retries += 1
                return NextCall(planned.tool, _resolve(planned, self.results))
            return self._plan_failed(visible, open_world)
        if self.recover and planned.check is not None and not planned.check.passes(result):
            return self._plan_failed(visible, open_world)  # a success that is not what it should be
        self.results.append(result)
        self.retries = 0
        return self._advance()


def play(env: Environment, scenario: Scenario, recover: bool, model: str = "", setting: str = "") -> Trajectory:
    """Play one episode with a plan walker straight through ``env`` (no model client, no agent loop): one turn per
    call, the answer in the last turn. The walker reads each observation as a policy reads a tool message."""
    start = env.reset()
    walker = PlanWalker(scenario, recover)
    trajectory = Trajectory(
        episode_id=f"{scenario.id}:{'oracle' if recover else 'naive'}",
        scenario_id=scenario.id,
        model=model or ("oracle" if recover else "naive"),
        setting=setting,
        seed=env.seed,
        faults=env.faults,
    )

    def visible() -> set[str]:
        return {spec.name for spec in env.tools()}

    step = walker.start({spec.name for spec in start.tools})
    for index in range(200):  # plans are short; a bound keeps a looping plan from hanging a build
        if isinstance(step, NextAnswer):
            gave_up = step.text.startswith(GIVE_UP_MARKER)
            trajectory.turns.append(Turn(index=index, content=step.text))
            action = Action(kind="give_up" if gave_up else "final_answer", content=step.text)
            env.step(action)
            trajectory.steps.append(Step(turn=index, action=action))
            trajectory.final_answer, trajectory.gave_up = step.text, gave_up
            return trajectory
        call = ToolCall(id=f"call_{index}", name=step.tool, arguments=step.arguments)
        trajectory.turns.append(Turn(index=index, content=step.say, tool_calls=[call]))
        action = Action(kind="tool_call", tool_call=call)
        observation = env.step(action)
        assert observation is not None
        trajectory.steps.append(Step(turn=index, action=action, observation=observation))
        step = walker.on_result(read_tool_message(observation.content()), visible())
    trajectory.outcome = Outcome.budget_exhausted
    trajectory.error = "the plan walk did not end"
    return trajectory
