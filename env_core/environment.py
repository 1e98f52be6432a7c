"""One episode's world: the scenario's tools over fresh state, with the episode's faults and disclosure rules."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass
from typing import Any

from undertow.env_core.disclosure import Disclosure
from undertow.env_core.errors import ConfigError
from undertow.env_core.faults import STALE_AGE_DAYS, FaultRuntime, partial_arguments
from undertow.env_core.model import (
    ASK_HUMAN,
    ASK_USER,
    Action,
    ArgRef,
    FaultKind,
    FaultSpec,
    Observation,
    Scenario,
    ToolError,
    ToolSpec,
)
from undertow.env_core.search import MAX_RESULTS, SEARCH_SPECS, SEARCH_TOOLS, Searcher, search_error
from undertow.env_core.simulated import (
    EMULATED,
    HUMAN_DECLINES,
    STAND_IN_REPLY,
    Helper,
    emulation_messages,
    human_reply,
    names_tool,
    person_messages,
    read_emulated,
)
from undertow.env_core.tools import ToolBox, ToolExecutionError, ToolOutput, shorten_quotes
from undertow.env_core.untrusted import ARGUMENTS_CUT, capped

ASK_USER_SPEC = ToolSpec(
    name=ASK_USER,
    description="Ask the user a question (to clarify the request, or to confirm before acting) and get their reply.",
    parameters={
        "type": "object",
        "properties": {"question": {"type": "string", "description": "what to ask the user"}},
        "required": ["question"],
        "additionalProperties": False,
    },
)
# What the scripted user says to a question the scenario did not script an answer for.
NO_USER_ANSWER = "I don't have anything to add to my request; please go ahead as you judge best."

ASK_HUMAN_SPEC = ToolSpec(
    name=ASK_HUMAN,
    description="Ask a person for help: a detail the request is missing, or something you cannot do with your tools. "
    "Returns their reply.",
    parameters={
        "type": "object",
        "properties": {"question": {"type": "string", "description": "your question to the person"}},
        "required": ["question"],
        "additionalProperties": False,
    },
)


def user_reply(scenario: Scenario, question: str) -> str:
    """The scripted user's answer: the first reply whose ``about`` words the question mentions (any question when
    it names none), else a reply that adds nothing."""
    asked = question.casefold()
    for reply in scenario.user_replies:
        if not reply.about or any(word.casefold() in asked for word in reply.about):
            return reply.say
    return NO_USER_ANSWER


@dataclass(frozen=True)
class EpisodeStart:
    task: str
    tools: list[ToolSpec]


class Environment:
    """``reset()`` gives the task and the tool list; ``step(action)`` runs one action and returns its observation.

    ``faults`` is the episode's resolved fault plan (see ``undertow.env_core.faults.resolve_faults``); by default the
    scenario's own plan. ``seed`` is kept for tool boxes and faults that draw random choices: every such choice
    must derive from (scenario id, seed).

    With ``search``, the episode is open-world: ``search_tools`` and ``get_info`` serve the whole tool universe
    (never a removed tool, never a hidden tool before its disclosure), any tool of the universe can be called, and
    the tools a search or ``get_info`` returned join the tool list.

    ``emulator`` answers the tools marked emulated, ``person`` plays the Ask-and-Help person (scripted without one):
    helper models (``env_core.simulated``). A call that needs one runs in a thread under :meth:`astep`, so that an
    episode waiting for a helper does not hold up the others.
    """

    def __init__(
        self,
        scenario: Scenario,
        toolbox: ToolBox,
        seed: int = 0,
        faults: list[FaultSpec] | None = None,
        search: Searcher | None = None,
        max_results: int = MAX_RESULTS,
        tool_notes: bool = False,
        ask_human: bool = False,
        emulator: Helper | None = None,
        person: Helper | None = None,
    ):
        self.scenario = scenario
        self.toolbox = toolbox
        self.seed = seed
        self.faults = list(scenario.faults if faults is None else faults)
        self.search = search
        self.max_results = max_results
        self._meta = {spec.name: spec for spec in SEARCH_SPECS} if search is not None else {}
        if scenario.user_replies:
            self._meta[ASK_USER] = ASK_USER_SPEC
        if ask_human:
            self._meta[ASK_HUMAN] = ASK_HUMAN_SPEC
        self.tool_notes = tool_notes
        self.emulator = emulator
        self.person = person
        self._state = None
        self._fault_runtime = FaultRuntime(self.faults, key=f"{scenario.id}\x00{seed}")
        self._disclosure = Disclosure(scenario.hidden_tools, scenario.disclosure)
        self._discovered: dict[str, None] = {}
        self._specs: dict[str, ToolSpec] = {}
        self.done = False
        self.answer_result: Any = None  # what the final answer denotes (ToolBox.answer_result), once given

    def reset(self) -> EpisodeStart:
        if self._state is not None:
            self.toolbox.close_state(self._state)
        self._state = self.toolbox.new_state()
        self.toolbox.start(self._state, self.scenario)
        self._fault_runtime = FaultRuntime(self.faults, key=f"{self.scenario.id}\x00{self.seed}")
        self._disclosure = Disclosure(self.scenario.hidden_tools, self.scenario.disclosure)
        self._discovered = {}
        self.done = False
        self.answer_result = None
        return EpisodeStart(task=self.scenario.task, tools=self.tools())

    def _spec(self, name: str) -> ToolSpec:
        meta = self._meta.get(name)
        if meta is not None:
            return meta
        spec = self._specs.get(name)
        if spec is None:  # the scenario's view of a universe tool, made once per episode
            spec = self._specs[name] = self.toolbox.episode_spec(self.toolbox.specs[name], self.scenario)
        return spec

    def _shown(self, spec: ToolSpec) -> ToolSpec:
        """The spec as the agent reads it: with ``tool_notes`` (the schema-annotation harness layer), its failure
        hint (``binding.failure_hint``) follows the description."""
        hint = spec.binding.get("failure_hint") if self.tool_notes else None
        return spec.model_copy(update={"description": f"{spec.description} Note: {hint}"}) if hint else spec

    def findable(self, name: str) -> bool:
        """A universe tool that search may return now: not removed, not hidden before its disclosure."""
        return (
            name in self.toolbox.specs
            and name not in self._fault_runtime.removed_tools()
            and name not in self._disclosure.hidden
        )

    def tools(self) -> list[ToolSpec]:
        """The tools the agent can see now: visible, disclosed and discovered by search, minus removed."""
        removed = self._fault_runtime.removed_tools()
        names = dict.fromkeys(t for t in self.scenario.tools if t not in removed)
        names.update(dict.fromkeys(t for t in self.scenario.hidden_tools if self.findable(t)))
        names.update(dict.fromkeys(t for t in self._discovered if self.findable(t)))
        for meta in (ASK_USER, ASK_HUMAN):
            if meta in self._meta:
                names[meta] = None
        return [self._shown(self._spec(n)) for n in names]

    def _callable(self, name: str) -> bool:
        return any(spec.name == name for spec in self.tools()) or (self.search is not None and self.findable(name))

    def _search(self, name: str, arguments: dict[str, Any]) -> Any:
        """Serve ``search_tools`` / ``get_info``; raises ToolExecutionError with a message the agent can act on."""
        assert self.search is not None
        if name == SEARCH_TOOLS:
            problem = search_error(arguments, self.max_results)
            if problem is not None:
                raise ToolExecutionError(problem)
            k = arguments.get("num_results", self.max_results)
            # ask for extra so that filtering out removed / undisclosed tools still leaves k results
            hidden = len(self._fault_runtime.removed_tools()) + len(self._disclosure.hidden)
            names = [n for n in self.search.search(arguments["query"], k + hidden) if self.findable(n)][:k]
            self._discovered.update(dict.fromkeys(names))
            return [{"name": n, "description": self.toolbox.specs[n].description} for n in names]
        tool = arguments.get("tool_name")
        if not isinstance(tool, str) or not self.findable(tool):
            raise ToolExecutionError(f"No tool named {tool!r}. Use search_tools to find tools.")
        self._discovered[tool] = None
        return self._shown(self._spec(tool)).openai()["function"]

    def needs_helper(self, action: Action) -> bool:
        """Whether running ``action`` asks a helper model (an emulated tool, or a person played by a model)."""
        call = action.tool_call
        if action.kind != "tool_call" or call is None:
            return False
        if call.name == ASK_HUMAN:
            return self.person is not None and ASK_HUMAN in self._meta
        spec = self.toolbox.specs.get(call.name)
        return spec is not None and bool(spec.binding.get(EMULATED))

    async def astep(self, action: Action) -> Observation | None:
        """:meth:`step` for an agent loop on an event loop: a call that waits for a helper model runs in a thread."""
        if self.needs_helper(action):
            return await asyncio.to_thread(self.step, action)
        return self.step(action)

    def step(self, action: Action) -> Observation | None:
        """Run a tool call and return its observation; an answer or a give-up ends the episode (returns None)."""
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        if self.done:
            raise RuntimeError("the episode is over")
        if action.kind != "tool_call":
            self.done = True
            if action.kind == "final_answer":
                self.answer_result = self.toolbox.answer_result(self._state, action.content or "")
            return None
        assert action.tool_call is not None
        call = action.tool_call
        started = time.perf_counter()
        fault = None
        result = None
        emulated = False
        notes: list[str] = []
        error: ToolError | None = None
        if not self._callable(call.name):
            fault = self._fault_runtime.removed_call(call.name)
            listed = sorted(spec.name for spec in self.tools())
            hint = f"Available tools: {', '.join(listed)}." if len(listed) <= 30 else "Use search_tools to find tools."
            error = ToolError(type="unknown_tool", message=f"Unknown tool '{capped(call.name)}'. {hint}")
        elif (intercepted := self._fault_runtime.intercept(call.name)) is not None:
            # A down tool fails before its arguments are looked at, as a real service would.
            error, fault = intercepted
        elif ARGUMENTS_CUT in call.arguments:  # too large to record, so not run either: what ran is what is recorded
            error = ToolError(
                type="invalid_arguments", message=f"Invalid arguments for {call.name}: {call.arguments[ARGUMENTS_CUT]}"
            )
        elif call.unparsed_arguments is not None:
            error = ToolError(
                type="invalid_arguments",
                message=f"Arguments for {call.name} are not a JSON object: {call.unparsed_arguments[:200]!r}",
            )
        else:
            spec = self._spec(call.name)
            arguments, error, fault = self._fault_runtime.drift_arguments(call.name, spec, call.arguments)
            message = None if error is not None else self.toolbox.argument_error(spec, arguments)
            if message is not None:
                error = ToolError(type="invalid_arguments", message=shorten_quotes(message, arguments))
            elif error is None:
                # at most one fault per call: a drifted argument already is this call's fault
                silent = (
                    None
                    if fault is not None or call.name in self._meta
                    else self._fault_runtime.result_fault(call.name)
                )
                try:
                    if call.name == ASK_USER:
                        result = {"reply": user_reply(self.scenario, str(arguments.get("question", "")))}
                    elif call.name == ASK_HUMAN:
                        result = {"reply": self._human(str(arguments.get("question", "")))}
                    elif call.name in self._meta:
                        result = self._search(call.name, arguments)
                    elif silent is not None and silent[1].kind == FaultKind.silent_noop:
                        result = self._silent_write(spec, arguments, silent[1])
                    elif spec.binding.get(EMULATED):
                        result, emulated = self._emulate(spec, arguments), True
                    elif silent is not None and silent[1].kind == FaultKind.stale:
                        result = self._stale_read(spec, arguments, silent[1])
                    else:
                        result = self.toolbox.execute(self._state, spec, arguments)
                except ToolExecutionError as exc:
                    # a refusal quotes the model's arguments short, however long they are
                    error = ToolError(type=exc.error_type, message=shorten_quotes(str(exc), arguments))
                if isinstance(result, ToolOutput):
                    result, notes = result.value, [shorten_quotes(note, arguments) for note in result.notes]
                if error is None and silent is not None:
                    result, fault = self._fault_runtime.alter(silent[0], silent[1], call.name, result)
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
            notes=notes,
            emulated=emulated,
        )

    def _human(self, question: str) -> str:
        """The Ask-and-Help person's reply: the model playing it, or the scripted one."""
        # taken away by the setting, or already absent from an imported scenario (its metadata names them)
        names = self._fault_runtime.removed_tools() | set(self.scenario.metadata.get("removed") or [])
        removed = [self.toolbox.specs[t] for t in sorted(names) if t in self.toolbox.specs]
        if self.person is not None:
            return self.person(person_messages(self.scenario, question, removed)).strip()
        reply = human_reply(self.scenario, question, self._masked_description())
        if reply != HUMAN_DECLINES:
            return reply
        for spec in removed:
            if self.scenario.replaceable.get(spec.name) is True and names_tool(question, spec.name):
                return self._by_hand(spec) or HUMAN_DECLINES
        return HUMAN_DECLINES

    def _by_hand(self, spec: ToolSpec) -> str | None:
        """A removed tool's work done by the scripted person: its result for the gold plan's call of it (what the
        request needs), or None when no gold call gives its arguments outright."""
        for plan in self.scenario.gold.plans:
            for call in plan:
                if call.tool == spec.name and not any(isinstance(v, ArgRef) for v in call.arguments.values()):
                    try:
                        result = self.toolbox.execute(self._state, spec, dict(call.arguments))
                    except ToolExecutionError:
                        return None
                    value = result.value if isinstance(result, ToolOutput) else result
                    return STAND_IN_REPLY.format(json.dumps(value, ensure_ascii=False, default=str))
        return None

    def _emulate(self, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        """An emulated tool's result: the emulator's reading of the call against the tool's documentation."""
        if self.emulator is None:
            raise ConfigError(f"tool '{spec.name}' is emulated (its API is out of reach): the suite needs an emulator")
        return read_emulated(self.emulator(emulation_messages(spec, arguments)))

    def _silent_write(self, spec: ToolSpec, arguments: dict[str, Any], fault: FaultSpec) -> Any:
        """A ``silent_noop`` call: run on a throwaway copy of the state, so the agent reads a genuine success while
        the episode's state keeps none of it; with ``apply: partial`` the first half of each list argument is
        written for real (a partial write reported as whole)."""
        scratch = self.toolbox.fork_state(self._state)
        try:
            result = self.toolbox.execute(scratch, spec, arguments)
        finally:
            self.toolbox.close_state(scratch)
        part = partial_arguments(arguments) if fault.params.get("apply") == "partial" else None
        if part is not None:
            # the agent was told the whole write succeeded; what landed is what it must find out
            with contextlib.suppress(ToolExecutionError):
                self.toolbox.execute(self._state, spec, part)
        return result

    def _stale_read(self, spec: ToolSpec, arguments: dict[str, Any], fault: FaultSpec) -> Any:
        """A ``stale`` call: run on the world as it was ``age_days`` ago where the tool box keeps one
        (``ToolBox.snapshot``), the episode's state untouched; today's result where it keeps none, or where the call
        fails there (what it names did not exist then). The fault's signals are added afterwards (``alter``)."""
        past = self.toolbox.snapshot(self._state, fault.params.get("age_days", STALE_AGE_DAYS))
        if past is not None:
            try:
                return self.toolbox.execute(past, spec, arguments)
            except ToolExecutionError:
                pass
            finally:
                self.toolbox.close_state(past)
        return self.toolbox.execute(self._state, spec, arguments)

    def _masked_description(self) -> str:
        """The description of the argument the request left out (what a question about it may mention)."""
        masked = self.scenario.metadata.get("masked")
        if not isinstance(masked, dict) or masked.get("tool") not in self.toolbox.specs:
            return ""
        spec = self.toolbox.specs[masked["tool"]]
        return str(spec.parameters.get("properties", {}).get(masked["argument"], {}).get("description", ""))

    def valid_actions(self) -> list[tuple[str, dict[str, Any]]] | None:
        """The calls the tool box's rules allow now (``ToolBox.valid_actions`` on this episode's state) among the
        tools shown (``tools()``), or None when the tool box cannot list them. An agent loop with decoupled
        generation (FUXI §3.2, Figure 2(b)) offers them as the candidate actions for the model's thought; without
        them it reads the action from the model's own text."""
        if self._state is None:
            raise RuntimeError("call reset() before valid_actions()")
        actions = self.toolbox.valid_actions(self._state)
        if actions is None:
            return None
        shown = {spec.name for spec in self.tools()}
        return [(tool, arguments) for tool, arguments in actions if tool in shown]

    def first_tried_tools(self) -> set[str]:
        """Tools a permanent ``first_tried`` fault disabled in this episode (for judging whether giving up was
        right)."""
        return self._fault_runtime.first_tried_tools()

    def close(self) -> None:
        if self._state is not None:
            self.toolbox.close_state(self._state)
            self._state = None
