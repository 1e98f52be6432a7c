"""One episode's world: the scenario's tools over fresh state, with the episode's faults and disclosure rules."""

from __future__ import annotations

import time
from dataclasses import dataclass

from env_core.disclosure import Disclosure
from env_core.faults import FaultRuntime
from env_core.model import Action, FaultSpec, Observation, Scenario, ToolError, ToolSpec
from env_core.tools import ToolBox, ToolExecutionError


@dataclass(frozen=True)
class EpisodeStart:
    task: str
    tools: list[ToolSpec]


class Environment:
    """``reset()`` gives the task and the tool list; ``step(action)`` runs one action and returns its observation.

    ``faults`` is the episode's resolved fault plan (see ``env_core.faults.resolve_faults``); by default the
    scenario's own plan. ``seed`` is kept for tool boxes and faults that draw random choices: every such choice
    must derive from (scenario id, seed).
    """

    def __init__(self, scenario: Scenario, toolbox: ToolBox, seed: int = 0, faults: list[FaultSpec] | None = None):
        self.scenario = scenario
        self.toolbox = toolbox
        self.seed = seed
        self.faults = list(scenario.faults if faults is None else faults)
        self._state = None
        self._fault_runtime = FaultRuntime(self.faults)
        self._disclosure = Disclosure(scenario.hidden_tools, scenario.disclosure)
        self.done = False

    def reset(self) -> EpisodeStart:
        if self._state is not None:
            self.toolbox.close_state(self._state)
        self._state = self.toolbox.new_state()
        self._fault_runtime = FaultRuntime(self.faults)
        self._disclosure = Disclosure(self.scenario.hidden_tools, self.scenario.disclosure)
        self.done = False
        return EpisodeStart(task=self.scenario.task, tools=self.tools())

    def tools(self) -> list[ToolSpec]:
        """The tools the agent can see now: visible plus disclosed, minus removed."""
        removed = self._fault_runtime.removed_tools()
        names = [t for t in self.scenario.tools if t not in removed]
        names += [t for t in self.scenario.hidden_tools if t not in self._disclosure.hidden and t not in removed]
        return [self.toolbox.specs[n] for n in names]

    def step(self, action: Action) -> Observation | None:
        """Run a tool call and return its observation; an answer or a give-up ends the episode (returns None)."""
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        if self.done:
            raise RuntimeError("the episode is over")
        if action.kind != "tool_call":
            self.done = True
            return None
        assert action.tool_call is not None
        call = action.tool_call
        started = time.perf_counter()
        fault = None
        visible = {spec.name for spec in self.tools()}
        result = None
        error: ToolError | None = None
        if call.name not in visible:
            fault = self._fault_runtime.removed_call(call.name)
            error = ToolError(
                type="unknown_tool",
                message=f"Unknown tool '{call.name}'. Available tools: {', '.join(sorted(visible))}.",
            )
        elif (intercepted := self._fault_runtime.intercept(call.name)) is not None:
            # A down tool fails before its arguments are looked at, as a real service would.
            error, fault = intercepted
        elif call.unparsed_arguments is not None:
            error = ToolError(
                type="invalid_arguments",
                message=f"Arguments for {call.name} are not a JSON object: {call.unparsed_arguments[:200]!r}",
            )
        else:
            spec = self.toolbox.specs[call.name]
            message = self.toolbox.argument_error(spec, call.arguments)
            if message is not None:
                error = ToolError(type="invalid_arguments", message=message)
            else:
                try:
                    result = self.toolbox.execute(self._state, spec, call.arguments)
                except ToolExecutionError as exc:
                    error = ToolError(type="tool_error", message=str(exc))
        disclosed = self._disclosure.after_call(call.name, failed=error is not None)
        return Observation(
            call_id=call.id,
            tool=call.name,
            ok=error is None,
            result=result,
            error=error,
            fault=fault,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            disclosed=disclosed,
        )

    def first_tried_tools(self) -> set[str]:
        """Tools a permanent ``first_tried`` fault disabled in this episode (for judging whether giving up was
        right)."""
        return self._fault_runtime.first_tried_tools()

    def close(self) -> None:
        if self._state is not None:
            self.toolbox.close_state(self._state)
            self._state = None
