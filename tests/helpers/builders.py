"""Episode and trajectory pieces written by hand: a tool call (or a whole gold plan) taken in a real environment,
and the records the scorers and summaries read (a step, a trajectory, a stored result). Scorer tests build
trajectories from these and play them through the real loop where the label matters; summaries only need results."""

from __future__ import annotations

from typing import Any

from undertow.env_core.environment import Environment
from undertow.env_core.model import (
    Action,
    ArgRef,
    EpisodeResult,
    Observation,
    Outcome,
    PlannedCall,
    Step,
    ToolCall,
    ToolError,
    Trajectory,
    Turn,
)


def tool_call(name: str, arguments: dict[str, Any] | None = None, call_id: str = "c") -> Action:
    """The action of calling ``name``."""
    return Action(kind="tool_call", tool_call=ToolCall(id=call_id, name=name, arguments=arguments or {}))


def step(env: Environment, tool: str, arguments: dict[str, Any] | None = None, *, call_id: str = "c") -> Observation:
    """Call ``tool`` in the episode; its observation (a tool call always has one)."""
    observation = env.step(tool_call(tool, arguments, call_id))
    assert observation is not None
    return observation


def call(env: Environment, tool: str, /, **arguments: Any) -> Observation:
    """:func:`step` with the arguments as keywords (positional-only parameters: a tool argument may be named
    ``env`` or ``tool``)."""
    return step(env, tool, arguments)


def follow_plan(env: Environment, plan: list[PlannedCall]) -> list[Observation]:
    """Call a gold plan's tools in order by hand; a reference to an earlier call's result is resolved from what that
    call returned (the column, or its first value). The observations, whether the calls worked or not."""
    observations: list[Observation] = []
    for index, planned in enumerate(plan):
        arguments = {}
        for name, value in planned.arguments.items():
            if isinstance(value, ArgRef):
                column = [row[value.field] for row in observations[value.from_call].result]
                value = column if value.many else column[0]
            arguments[name] = value
        observations.append(step(env, planned.tool, arguments, call_id=f"plan-{index}"))
    return observations


def tool_step(
    turn: int,
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    result: Any = None,
    error: ToolError | None = None,
    ok: bool = True,
) -> Step:
    """A recorded tool call and what it returned: ``result`` when ``ok``, otherwise ``error`` (by default the tool
    was unavailable)."""
    call_id = f"c{turn}-{name}"
    error = None if ok else error or ToolError(type="unavailable", message=f"{name} is currently unavailable.")
    return Step(
        turn=turn,
        action=tool_call(name, arguments, call_id),
        observation=Observation(call_id=call_id, tool=name, ok=ok, result=result if ok else None, error=error),
    )


def trajectory(
    *steps: Step,
    final: str | None = None,
    gave_up: bool = False,
    outcome: Outcome = Outcome.scored,
    texts: dict[int, str] | None = None,
    **fields: Any,
) -> Trajectory:
    """An episode's record written by hand: ``steps``, then, when it was scored, the answer (``final``, given as
    giving up where ``gave_up``) in a turn of its own. The turns are those of the steps plus the answer's, which
    has the answer as its content; ``texts`` gives the others theirs. ``fields`` override the ids (episode e,
    scenario s, model m, setting s, seed 0) or set others (faults)."""
    last = max((s.turn for s in steps), default=-1) + 1
    all_steps = list(steps)
    if outcome == Outcome.scored:
        all_steps.append(Step(turn=last, action=Action(kind="give_up" if gave_up else "final_answer", content=final)))
    turns = [Turn(index=i, content=(texts or {}).get(i)) for i in range(last)]
    turns.append(Turn(index=last, content=final))
    ids: dict[str, Any] = {"episode_id": "e", "scenario_id": "s", "model": "m", "setting": "s", "seed": 0}
    return Trajectory(
        **(ids | fields), turns=turns, steps=all_steps, final_answer=final, gave_up=gave_up, outcome=outcome
    )


def episode_result(
    number: int | str = 0,
    *,
    model: str = "m1",
    suite: str = "smoke",
    family: str | None = None,
    setting: str = "clean",
    seed: int = 0,
    scenario_id: str | None = None,
    outcome: Outcome | str = Outcome.scored,
    **fields: Any,
) -> EpisodeResult:
    """One stored episode result; the family defaults to the suite's name, the ids to ``number``."""
    return EpisodeResult(
        episode_id=f"e{number}",
        model=model,
        suite=suite,
        family=family or suite,
        setting=setting,
        seed=seed,
        scenario_id=scenario_id or f"s{number}",
        outcome=Outcome(outcome),
        **fields,
    )
