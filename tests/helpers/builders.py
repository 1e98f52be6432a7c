"""Episode and trajectory pieces written by hand: a tool call taken in a real environment, and the records the
scorers and summaries read (a step, a stored result). Scorer tests build trajectories from these and play them
through the real loop where the label matters; summaries only need results."""

from __future__ import annotations

from typing import Any

from undertow.env_core.environment import Environment
from undertow.env_core.model import Action, EpisodeResult, Observation, Outcome, Step, ToolCall, ToolError


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


def tool_step(
    turn: int, name: str, arguments: dict[str, Any] | None = None, *, ok: bool = True, result: Any = None
) -> Step:
    """A recorded tool call and what it returned (``result`` when ``ok``, an unavailable error otherwise)."""
    call_id = f"c{turn}-{name}"
    error = None if ok else ToolError(type="unavailable", message=f"{name} is currently unavailable.")
    return Step(
        turn=turn,
        action=tool_call(name, arguments, call_id),
        observation=Observation(call_id=call_id, tool=name, ok=ok, result=result if ok else None, error=error),
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
