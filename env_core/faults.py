"""The fault layer: named settings, resolving a setting against a scenario, and faults firing at run time.

A *setting* is a named list of faults applied to every scenario of a suite (``clean``, ``first_tried``,
``impossible``, ...), and whether the agent sees each scenario's hint (``posed``). Its fault targets may be
symbolic (``@solution``, ``@primary``); ``resolve_faults`` turns them into tool names for one scenario.
``FaultRuntime`` holds one episode's fault state: call counts and which tool ``first_tried`` disabled.

What the agent observes of each kind is listed on :class:`~undertow.env_core.model.FaultKind`. Two kinds reach beyond
this module: a ``stale`` call runs on the world as it was ``age_days`` ago where the family's tool box keeps one
(``ToolBox.snapshot``, run by the environment), so its values are older, and ``alter`` adds the staleness signals; a
family without one serves today's values with the signals only. A ``transient`` error says the failure is momentary
and that the same request should work again (marked retryable); an ``unavailable`` error describes an outage or a
denial and never advises a retry.
"""

from __future__ import annotations

import copy
import hashlib
import random
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import Field

from undertow.env_core.model import (
    TARGET_PRIMARY,
    TARGET_SOLUTION,
    Condition,
    FaultKind,
    FaultSpec,
    FiredFault,
    HelperModel,
    Mask,
    Persistence,
    PlannedCall,
    Scenario,
    Strict,
    ToolError,
    ToolSpec,
)

Harness = Literal["none", "preamble", "schema_notes", "few_shot"]
Awareness = Literal["none", "info", "tool", "both"]  # both: FAIL-TaLMs' Perfect asks the tool question, then info


class Setting(Strict):
    """A named fault condition. ``scenario_faults`` keeps the scenario's own fault plan (off for ``clean``)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    faults: list[FaultSpec] = Field(default_factory=list)
    scenario_faults: bool = True
    hints: bool = Field(default=False, description="show each scenario's hint (Scenario.hint) after its task")
    harness: Harness = Field(
        default="none",
        description="a prompting harness layer (Failing Tools, Table 2): none (H0), preamble (H1: a system-prompt "
        "block on verifying and recovering), schema_notes (H2: each tool's failure hint in its description), "
        "few_shot (H3: three worked recoveries on invented APIs)",
    )
    condition: Condition = Field(
        default="none",
        description="a FAIL-TaLMs transformation of each scenario: underspecified (a value the task needs is left "
        "out, from the scenario's masks or found in its gold plan), replaceable / non_replaceable (a gold tool a "
        "person could / could not stand in for is removed), no_tools (every tool is removed); a scenario it cannot "
        "apply to is left out of the setting",
    )
    ask_human: bool = Field(
        default=False,
        description="offer ask_human (Ask-and-Help): a simulated person, scripted unless human_model is set: it "
        "gives the value the task left out to a question about it, does a removed human-replaceable tool's work by "
        "hand when asked for it by name, and declines anything else",
    )
    human_model: HelperModel | None = Field(
        default=None,
        description="with ask_human: a model plays the person, with what the task left out (and the tools a "
        "person can stand in for) in its prompt",
    )
    awareness: Awareness = Field(
        default="none",
        description="before acting, ask the agent whether it has the information (info) or the tools (tool) it "
        "needs, or both questions (both: the tool answer counts when readable, else the info answer): Yes / IDK / "
        "No, and No skips the task (FAIL-TaLMs §3.4.2)",
    )
    description: str = ""


PRESET_SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in [
        Setting(name="clean", scenario_faults=False, description="no faults at all"),
        Setting(
            name="base",
            description="each scenario's own fault plan and nothing added (the injected condition of Failing Tools, "
            "whose base and relaxed rubrics both score these episodes)",
        ),
        Setting(
            name="first_tried",
            faults=[FaultSpec(kind=FaultKind.first_tried, target=TARGET_SOLUTION)],
            description="the first solution tool the agent calls becomes unavailable",
        ),
        Setting(
            name="impossible",
            faults=[FaultSpec(kind=FaultKind.unavailable, target=TARGET_SOLUTION)],
            description="every solution tool is listed but fails as unavailable when called: the right answer is "
            "to give up (compare distractors_only, where they are not there at all)",
        ),
        Setting(
            name="distractors_only",
            faults=[FaultSpec(kind=FaultKind.removed, target=TARGET_SOLUTION)],
            description="the solution tools are taken away (not listed, never returned by search), so only "
            "distractors are offered: the right answer is to give up (HoHW's impossible condition)",
        ),
        Setting(
            name="unavailable",
            faults=[FaultSpec(kind=FaultKind.unavailable, target=TARGET_PRIMARY)],
            description="the primary plan's tools are unavailable",
        ),
        Setting(
            name="removed",
            faults=[FaultSpec(kind=FaultKind.removed, target=TARGET_PRIMARY)],
            description="the primary plan's tools are absent from the tool list",
        ),
        Setting(
            name="transient",
            faults=[
                FaultSpec(
                    kind=FaultKind.transient,
                    target=TARGET_PRIMARY,
                    persistence=Persistence(mode="temporary", after=2),
                    params={"error": "service_unavailable"},
                )
            ],
            description="the primary plan's tools fail twice (503), then work",
        ),
        Setting(
            name="hinted",
            scenario_faults=False,
            hints=True,
            description="no faults; each scenario's hint follows its task (HoHW Table 4)",
        ),
        Setting(
            name="hinted_first_tried",
            faults=[FaultSpec(kind=FaultKind.first_tried, target=TARGET_SOLUTION)],
            hints=True,
            description="first_tried, with each scenario's hint after its task (HoHW Table 4)",
        ),
        Setting(
            name="perfect",
            scenario_faults=False,
            awareness="info",
            description="FAIL-TaLMs' perfect setting: the full request and every tool, after an information-awareness "
            "question",
        ),
        Setting(
            name="underspecified",
            scenario_faults=False,
            condition="underspecified",
            awareness="info",
            description="FAIL-TaLMs' under-specified setting: a value the task needs is left out of the request; "
            "information-awareness question first",
        ),
        Setting(
            name="replaceable",
            scenario_faults=False,
            condition="replaceable",
            awareness="tool",
            description="FAIL-TaLMs' replaceable setting: a needed tool a person could stand in for is removed; "
            "tool-awareness question first",
        ),
        Setting(
            name="non_replaceable",
            scenario_faults=False,
            condition="non_replaceable",
            awareness="tool",
            description="FAIL-TaLMs' non-replaceable setting: a needed tool no person could stand in for is removed; "
            "tool-awareness question first",
        ),
        Setting(
            name="no_tools",
            scenario_faults=False,
            condition="no_tools",
            description="FAIL-TaLMs' no-tools setting: the request alone, no tool at all (what the model knows)",
        ),
    ]
}


def resolve_faults(scenario: Scenario, setting: Setting) -> list[FaultSpec]:
    """The concrete fault plan of one episode: symbolic targets replaced by the scenario's tool names; a setting's
    condition that takes tools away adds the ``removed`` fault that does it."""
    specs = (list(scenario.faults) if setting.scenario_faults else []) + list(setting.faults)
    taken = [] if scenario.condition is not None else condition_removes(scenario, setting.condition)
    if taken:
        specs.append(FaultSpec(kind=FaultKind.removed, target=taken))
    solution = scenario.gold.solution_tools()
    primary = [c.tool for c in scenario.gold.plans[0]] if scenario.gold.plans else []
    resolved = []
    for spec in specs:
        names: list[str] = []
        for target in spec.targets:
            expanded = {TARGET_SOLUTION: solution, TARGET_PRIMARY: primary}.get(target, [target])
            names.extend(n for n in expanded if n not in names)
        if names:
            resolved.append(spec.model_copy(update={"target": names}))
    return resolved


HINT_PREFIX = "\n\nHint: "


def posed(scenario: Scenario, setting: Setting) -> Scenario:
    """The scenario as the agent is asked it under ``setting``: with ``hints``, its hint follows its task (a
    scenario without a hint is unchanged); under the ``underspecified`` condition its task leaves a value out, which
    ``metadata["masked"]`` keeps as the hidden ground truth (what ``ask_human`` answers with)."""
    if setting.condition == "underspecified" and scenario.condition is None:
        mask = mask_of(scenario)
        if mask is not None:
            scenario = with_mask(scenario, mask)
    if not setting.hints or not scenario.hint:
        return scenario
    return scenario.model_copy(update={"task": f"{scenario.task}{HINT_PREFIX}{scenario.hint}"})


def with_mask(scenario: Scenario, mask: Mask) -> Scenario:
    """``scenario`` asked with ``mask``'s task, the value it leaves out kept in ``metadata["masked"]`` (what the
    person of Ask-and-Help answers with); its gold stays the full request's."""
    hidden = {"tool": mask.tool, "argument": mask.argument, "value": mask.value, "phrase": mask.phrase}
    return scenario.model_copy(update={"task": mask.task, "metadata": {**scenario.metadata, "masked": hidden}})


def _words(name: str) -> str:
    return " ".join(re.findall(r"[A-Za-z][a-z]*|\d+", name)).lower() or name


def automatic_mask(scenario: Scenario) -> Mask | None:
    """A value of the primary plan's literal arguments that the task states word for word, left out: replaced by
    "a certain <argument>" (our stand-in for the paper's hand edits; a scenario's own ``masks`` come first)."""
    for call in scenario.gold.plans[0] if scenario.gold.plans else []:
        for argument, value in call.arguments.items():
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                continue
            text = str(value)
            if len(text) < 2:
                continue  # a one-character value would match inside other words' places
            found = re.search(rf"(?<![\w]){re.escape(text)}(?![\w])", scenario.task, re.IGNORECASE)
            if found is None:
                continue
            task = scenario.task[: found.start()] + f"a certain {_words(argument)}" + scenario.task[found.end() :]
            return Mask(task=task, tool=call.tool, argument=argument, value=value, phrase=found.group(0))
    return None


def mask_of(scenario: Scenario) -> Mask | None:
    """The under-specified variant a scenario is run as: its first hand-written mask, else an automatic one (a
    library with several masks per request ships the others as scenarios of their own, already in the
    underspecified condition: FAIL-TaLMs' offline library does)."""
    return scenario.masks[0] if scenario.masks else automatic_mask(scenario)


def condition_removes(scenario: Scenario, condition: Condition) -> list[str]:
    """The tools a condition takes away from a scenario: the first primary-plan tool of the wanted kind
    (replaceable / non_replaceable, as the scenario flags them), or every tool it lists (no_tools). A tool has one
    flag, so a (scenario, tool) pair lies in one unavailable-tool split only; a scenario with tools of both kinds is
    in both, each time with another tool removed (as 102 requests of the released files are)."""
    if condition == "no_tools":
        return list(dict.fromkeys([*scenario.tools, *scenario.hidden_tools]))
    if condition in ("replaceable", "non_replaceable"):
        wanted = condition == "replaceable"
        primary = [c.tool for c in scenario.gold.plans[0]] if scenario.gold.plans else []
        return next(([tool] for tool in primary if scenario.replaceable.get(tool) is wanted), [])
    return []


def not_applicable(scenario: Scenario, setting: Setting) -> str | None:
    """Why a setting's condition cannot be applied to a scenario (it is then left out of that setting), or None.
    A scenario already in a condition (``Scenario.condition``) belongs to the settings of that condition only."""
    if scenario.condition is not None:
        if scenario.condition == setting.condition:
            return None
        return f"it is already in condition {scenario.condition}, and the setting's is {setting.condition}"
    if setting.condition == "underspecified" and mask_of(scenario) is None:
        return "no value of its request to leave out (no mask, and no gold argument stated word for word)"
    if setting.condition in ("replaceable", "non_replaceable") and not condition_removes(scenario, setting.condition):
        kind = "a person could" if setting.condition == "replaceable" else "no person could"
        return f"no gold tool flagged as one {kind} stand in for"
    if setting.condition == "no_tools" and not scenario.tools:
        return "no tool to take away"
    return None


def expects_give_up(scenario: Scenario, faults: list[FaultSpec], first_tried: Iterable[str] | None = None) -> bool:
    """True when the fault plan leaves no gold plan that can work, so giving up is the right behaviour.

    Only permanent loud faults block a plan: ``unavailable`` and ``removed`` block their tools, and a ``cascade``
    blocks every plan that calls both its upstream tool and one of its targets while the upstream carries a fault of
    its own (that fault fires on the plan's call, and the dependent then fails). Silent faults (stale, silent_noop,
    corrupted, schema_drift, ambiguous) never block a plan: the agent can verify, repair or retry, so giving up is
    wrong there. A ``first_tried`` fault blocks the tool the agent happened to call first: pass the tools it actually
    disabled (``Environment.first_tried_tools()``) once the episode has run. Without them the answer is the worst
    case: giving up is right if some first choice leaves no plan, i.e. one target tool lies in every surviving plan.
    A scenario without gold plans is judged on its answer alone (False).
    """
    plans = [{c.tool for c in plan} for plan in scenario.gold.plans]
    if not plans:
        return False
    blockers = _Blockers.of(faults)
    if first_tried is not None:
        disabled = {t for t in first_tried if t in blockers.first_tried}
        return all(blockers.block(p, disabled) for p in plans)
    alive = [p for p in plans if not blockers.block(p)]
    return not alive or any(all(t in p for p in alive) for t in blockers.first_tried)


def usable_plans(scenario: Scenario, faults: list[FaultSpec], disabled: Iterable[str] = ()) -> list[list[PlannedCall]]:
    """The gold plans a finished episode's faults left working, by the rule of :func:`expects_give_up` (permanent
    ``unavailable`` / ``removed`` faults, and cascades whose upstream carries a fault of its own); ``disabled``:
    the tools a permanent ``first_tried`` fault disabled (``Environment.first_tried_tools()``)."""
    blockers = _Blockers.of(faults)
    gone = set(disabled)
    return [plan for plan in scenario.gold.plans if not blockers.block({c.tool for c in plan}, gone)]


@dataclass(frozen=True)
class _Blockers:
    """What in a fault plan can stop a gold plan from working (see :func:`expects_give_up`)."""

    dead: frozenset[str]  # targets of permanent unavailable / removed faults
    first_tried: frozenset[str]  # targets of permanent first_tried faults: the one the agent calls first dies
    faulted: frozenset[str]  # tools with a fault that fires on their first call, whatever its persistence
    cascades: tuple[tuple[str, frozenset[str]], ...]  # (upstream, dependents) of permanent cascades

    @classmethod
    def of(cls, faults: list[FaultSpec]) -> _Blockers:
        dead: set[str] = set()
        targets: set[str] = set()
        faulted: set[str] = set()
        cascades: list[tuple[str, frozenset[str]]] = []
        for f in faults:
            if f.kind not in (FaultKind.first_tried, FaultKind.cascade):
                faulted.update(f.targets)
            if f.persistence.mode != "permanent":
                continue
            if f.kind in (FaultKind.unavailable, FaultKind.removed):
                dead.update(f.targets)
            elif f.kind == FaultKind.first_tried:
                targets.update(f.targets)
            elif f.kind == FaultKind.cascade:
                cascades.append((f.params["on"], frozenset(f.targets)))
        return cls(frozenset(dead), frozenset(targets), frozenset(faulted), tuple(cascades))

    def block(self, plan: set[str], disabled: Collection[str] = ()) -> bool:
        """Whether a plan (its tools) cannot work: it calls a dead or ``disabled`` tool, or both ends of a cascade
        whose upstream carries a fault."""
        return bool(plan & self.dead or plan & set(disabled)) or any(
            on in plan and on in self.faulted and plan & hit for on, hit in self.cascades
        )


# A transient error is a momentary failure: its message says so and that repeating the same request should work
# (the error is marked retryable). An unavailable tool's error describes an outage or a denial and gives no advice
# to retry (not retryable), whichever error it names and however long it lasts: the two never read alike.
_TRANSIENT_MESSAGES = {
    "timeout": (
        "timeout",
        "Request to {tool} timed out after 30 s: a momentary network glitch, and nothing was processed. Retry the "
        "same request; it should go through.",
    ),
    "rate_limit": (
        "rate_limit",
        "429 Too Many Requests: a momentary burst of calls to {tool} hit its rate limit. Retry the same request in a "
        "moment; it should go through.",
    ),
    "service_unavailable": (
        "service_unavailable",
        "503 Service Unavailable: {tool} failed momentarily (a brief hiccup; nothing was processed). Retry the same "
        "request; it should succeed.",
    ),
}
_UNAVAILABLE_MESSAGES = {
    "unavailable": ("unavailable", "{tool} is currently unavailable. Please try a different function."),
    "timeout": ("timeout", "Request to {tool} timed out after 30 s: its service is down and not answering requests."),
    "rate_limit": (
        "rate_limit",
        "429 Too Many Requests: this account's request quota for {tool} is used up; further calls are refused.",
    ),
    "service_unavailable": ("service_unavailable", "503 Service Unavailable: {tool} is out of service (an outage)."),
    "auth": ("auth", "401 Unauthorized: the access token for {tool} has expired or was rejected."),
    "forbidden": ("auth", "403 Forbidden: this account is not authorized to call {tool}."),
}


def unavailable_error(tool: str, error: str = "unavailable") -> ToolError:
    """The error of an unavailable tool: an outage or a denial of the kind ``error`` names, never marked
    retryable."""
    error_type, template = _UNAVAILABLE_MESSAGES[error]
    return ToolError(type=error_type, message=template.format(tool=tool))


def transient_error(tool: str, error: str = "service_unavailable") -> ToolError:
    """The error of a transient fault: a momentary failure of the kind ``error`` names, marked retryable."""
    error_type, template = _TRANSIENT_MESSAGES[error]
    return ToolError(type=error_type, message=template.format(tool=tool), retryable=True)


# The fault layer's clock: stale timestamps count back from it. A fixed instant, not the wall clock, so that an
# episode replays to the same trace; a family with a simulated clock passes its own ``now``.
REFERENCE_NOW = datetime(2026, 3, 20, 6, 0, tzinfo=UTC)
STALE_AGE_DAYS = 4
AMBIGUOUS_COUNT = 2
# Kinds that let the tool run and then act on its result (schema_drift in its response modes only).
_RESULT_KINDS = (
    FaultKind.stale,
    FaultKind.silent_noop,
    FaultKind.corrupted,
    FaultKind.schema_drift,
    FaultKind.ambiguous,
)


class FaultRuntime:
    """One episode's faults as they fire. Pure given the sequence of calls and ``key``: no clocks, and every random
    choice (which value a corruption alters, where a phantom record goes) is seeded by (``key``, fault, tool, call
    number), where ``key`` names the scenario and the seed.

    Each call gets at most one fault: the first in plan order that applies. Loud faults fire in ``intercept`` before
    the tool runs; argument drift in ``drift_arguments`` before the arguments are checked; silent faults after the
    tool ran (``result_fault`` picks one, ``alter`` applies it). Every kind honours persistence: a temporary fault
    fires on its first ``after`` firings per tool, then the tool behaves normally.
    """

    def __init__(self, faults: list[FaultSpec], key: str = "", now: datetime = REFERENCE_NOW):
        self.faults = faults
        self.key = key
        self.now = now
        self._fired_on: dict[tuple[int, str], int] = {}  # (fault index, tool) -> times fired
        self._first_tried: dict[int, str] = {}  # first_tried fault index -> the tool it disabled
        self._faulted: set[str] = set()  # tools on which some fault fired: what a cascade waits for
        self._calls = 0  # calls that reached a tool, numbering the per-call random choices
        # FaultSpec has checked every parameter (model.FAULT_PARAMS); the message tables word each allowed error

    def removed_tools(self) -> set[str]:
        return {t for f in self.faults if f.kind == FaultKind.removed for t in f.targets}

    def _lasts(self, index: int, spec: FaultSpec, tool: str) -> bool:
        """Whether the fault still fires on this call (temporary faults heal after ``after`` firings)."""
        if spec.persistence.mode == "permanent":
            return True
        return self._fired_on.get((index, tool), 0) < (spec.persistence.after or 0)

    def _fire(self, index: int, spec: FaultSpec, tool: str, detail: str = "") -> FiredFault:
        self._fired_on[(index, tool)] = self._fired_on.get((index, tool), 0) + 1
        self._faulted.add(tool)
        return FiredFault(kind=spec.kind, index=index, detail=detail)

    def _rng(self, index: int, tool: str) -> random.Random:
        digest = hashlib.sha256(f"{self.key}\x00{index}\x00{tool}\x00{self._calls}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def intercept(self, tool: str) -> tuple[ToolError, FiredFault] | None:
        """Called before a visible tool runs: the error and fault record if a loud fault fires, else None."""
        self._calls += 1
        for index, spec in enumerate(self.faults):
            if tool not in spec.targets:
                continue
            if spec.kind == FaultKind.unavailable and self._lasts(index, spec, tool):
                return unavailable_error(tool, spec.params.get("error", "unavailable")), self._fire(index, spec, tool)
            if spec.kind == FaultKind.first_tried:
                chosen = self._first_tried.setdefault(index, tool)
                if chosen == tool and self._lasts(index, spec, tool):
                    return unavailable_error(tool), self._fire(index, spec, tool, detail="first tried")
            if spec.kind == FaultKind.transient and self._lasts(index, spec, tool):
                error = transient_error(tool, spec.params.get("error", "service_unavailable"))
                return error, self._fire(index, spec, tool)
            upstream = spec.params.get("on")
            if spec.kind == FaultKind.cascade and upstream in self._faulted and self._lasts(index, spec, tool):
                error = ToolError(
                    type="dependency_failed",
                    message=f"502 Bad Gateway: {tool} could not complete the request because a service it depends "
                    f"on ({upstream}) is failing.",
                    retryable=spec.persistence.mode == "temporary",
                )
                return error, self._fire(index, spec, tool, detail=f"upstream {upstream} faulted")
        return None

    def drift_arguments(
        self, tool: str, spec: ToolSpec, arguments: dict[str, Any]
    ) -> tuple[dict[str, Any], ToolError | None, FiredFault | None]:
        """Argument drift (``schema_drift`` with mode ``arguments``): the tool now expects ``field`` (by default its
        first required argument) under the name ``to``. A call with the old name fails with a message naming the
        new one; a call with the new name runs, mapped back. The tool's listed schema stays as documented: that
        mismatch is the fault. Returns the arguments to run with, an error, and the fault record."""
        for index, f in enumerate(self.faults):
            if f.kind != FaultKind.schema_drift or f.params.get("mode") != "arguments" or tool not in f.targets:
                continue
            old = f.params.get("field") or _first_argument(spec)
            if old is None or not self._lasts(index, f, tool):
                continue  # a tool without arguments has none to drift
            new = f.params.get("to") or drifted_name(old)
            if old in arguments:
                error = ToolError(
                    type="invalid_arguments",
                    message=f"Invalid arguments for {tool}: parameter '{old}' is not accepted by this API version; "
                    f"it was renamed to '{new}'.",
                )
                return arguments, error, self._fire(index, f, tool, detail=f"argument {old} renamed to {new}")
            if new in arguments:
                mapped = {(old if k == new else k): v for k, v in arguments.items()}
                return mapped, None, self._fire(index, f, tool, detail=f"argument {old} renamed to {new}")
        return arguments, None, None

    def result_fault(self, tool: str) -> tuple[int, FaultSpec] | None:
        """The silent fault that acts on this call's result if the tool succeeds (first in plan order), else None.
        A ``silent_noop`` one tells the caller to run the call on a throwaway copy of the state."""
        for index, f in enumerate(self.faults):
            if tool not in f.targets or f.kind not in _RESULT_KINDS or not self._lasts(index, f, tool):
                continue
            if f.kind == FaultKind.schema_drift and f.params.get("mode") == "arguments":
                continue
            return index, f
        return None

    def alter(self, index: int, spec: FaultSpec, tool: str, result: Any) -> tuple[Any, FiredFault]:
        """Apply a silent fault to a successful result: the result the agent sees, and the fault record."""
        rng = self._rng(index, tool)
        value = copy.deepcopy(result)
        if spec.kind == FaultKind.stale:
            value, detail = _stale(value, self.now, spec.params.get("age_days", STALE_AGE_DAYS))
        elif spec.kind == FaultKind.silent_noop:
            # the write ran on a throwaway copy (Environment); "ok" hides even its echo behind a bare success
            returns, applied = spec.params.get("returns", "result"), spec.params.get("apply", "none")
            if returns == "ok":
                value = {"status": "success"}
            detail = f"write not applied to the episode state (apply: {applied}, returns: {returns})"
        elif spec.kind == FaultKind.corrupted:
            value, detail = _corrupt(value, spec.params.get("mode", "decimal_shift"), rng, spec.params)
        elif spec.kind == FaultKind.schema_drift:
            value, detail = _drift_response(value, spec.params.get("mode", "rename"), spec.params, rng)
        else:
            value, detail = _ambiguous(value, spec.params.get("count", AMBIGUOUS_COUNT), rng)
        return value, self._fire(index, spec, tool, detail=detail)

    def removed_call(self, tool: str) -> FiredFault | None:
        """The fault record when the agent calls a tool that a ``removed`` fault took away."""
        for index, spec in enumerate(self.faults):
            if spec.kind == FaultKind.removed and tool in spec.targets:
                return self._fire(index, spec, tool)
        return None

    def first_tried_tools(self) -> set[str]:
        """The tools that permanent ``first_tried`` faults disabled in this episode so far."""
        return {tool for i, tool in self._first_tried.items() if self.faults[i].persistence.mode == "permanent"}


def partial_arguments(arguments: dict[str, Any]) -> dict[str, Any] | None:
    """A partial write (``silent_noop`` with ``apply: partial``): the call with every list argument cut to its first
    half, so only part of a batch lands. None when the call has no list argument (then nothing is applied)."""
    if not any(isinstance(v, list) and v for v in arguments.values()):
        return None
    return {k: v[: len(v) // 2] if isinstance(v, list) else v for k, v in arguments.items()}


# ---------------------------------------------------------------------------------------------------------------
# How silent faults alter a result. Results are JSON values: usually a list of records (a family's rows) or one
# record. Each helper returns the altered value and a detail for the trace; the caller passes a private copy.


def _first_argument(spec: ToolSpec) -> str | None:
    required = spec.parameters.get("required") or []
    if required:
        return str(required[0])
    properties = spec.parameters.get("properties") or {}
    return next(iter(properties), None)


def drifted_name(name: str) -> str:
    """The name a field or argument drifts to: camelCase of its words (``Singer_ID`` -> ``singerId``), or with a
    ``Value`` suffix when that changes nothing (``capital`` -> ``capitalValue``)."""
    words = [w for w in re.split(r"[^0-9A-Za-z]+", name) if w]
    camel = words[0].lower() + "".join(w.capitalize() for w in words[1:]) if words else name
    return camel if camel != name else f"{name}Value"


def _records(value: Any) -> list[dict[str, Any]]:
    """The records a result holds: a list's dict items, or the result itself when it is one record, followed by the
    records of the first list of records it holds (``{"location": ..., "days": [{...}]}``)."""
    if isinstance(value, dict):
        nested = _record_list(value)
        return [value, *(r for r in nested or () if isinstance(r, dict) and r is not value)]
    if isinstance(value, list):
        return [r for r in value if isinstance(r, dict)]
    return []


def _record_list(value: Any) -> list[Any] | None:
    """The list of records a result is, or the first such list a record holds (``{"items": [...]}``)."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return next((v for v in value.values() if isinstance(v, list) and v and isinstance(v[0], dict)), None)
    return None


def _numbers(value: Any) -> list[tuple[dict[str, Any], str]]:
    """(record, key) of every number (not a bool) in the result's records."""
    return [
        (r, k) for r in _records(value) for k, v in r.items() if isinstance(v, int | float) and not isinstance(v, bool)
    ]


def _stale(value: Any, now: datetime, age_days: int) -> tuple[Any, str]:
    """Staleness signals, as the paper's weather card shows them: an old ``generated_at`` and a ``_stale_warning``.
    A record gets the two fields; a list of records gets them on every record (so the list and each record's own
    keys stay as the tool returns them); anything else is wrapped as ``{"data": value, ...}``. The values are what
    the call returned: the world of ``age_days`` ago where the tool box keeps one (the environment ran it there)."""
    generated = (now - timedelta(days=age_days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    signals = {"generated_at": generated, "_stale_warning": f"Data generated {age_days} days ago."}
    if isinstance(value, dict):
        return {**value, **signals}, f"generated_at {generated}"
    if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
        return [{**r, **signals} for r in value], f"generated_at {generated} on {len(value)} records"
    return {"data": value, **signals}, f"generated_at {generated} (wrapped)"


_YEAR_IN_TEXT = re.compile(r"\b([12]\d{3})(-\d{2}-\d{2})")
_YEAR_TEXT = re.compile(r"[12]\d{3}")
_TOTAL_KEY = re.compile(r"total|sum|count|amount|avg|average|balance", re.IGNORECASE)
_PHANTOM_TEXT = ("Northwind Ltd", "Orla Brandt", "ZXQ", "Vela Systems", "Harbin Quay", "Mistral Row")


def _duplicate(value: Any, rng: random.Random) -> tuple[Any, str] | None:
    rows = _record_list(value)
    if not rows:
        return None
    i = rng.randrange(len(rows))
    rows.insert(i + 1, copy.deepcopy(rows[i]))
    return value, f"duplicate: record {i} repeated"


def _phantom(value: Any, rng: random.Random) -> tuple[Any, str] | None:
    rows = _record_list(value)
    if not rows or not isinstance(rows[0], dict):
        return None
    ghost = copy.deepcopy(rng.choice([r for r in rows if isinstance(r, dict)]))
    for k, v in ghost.items():
        if isinstance(v, str):
            ghost[k] = rng.choice(_PHANTOM_TEXT)
        elif isinstance(v, int | float) and not isinstance(v, bool):
            ghost[k] = v + rng.randint(7, 97)
    at = rng.randrange(len(rows) + 1)
    rows.insert(at, ghost)
    return value, f"phantom: record inserted at {at}"


def _corrupt(value: Any, mode: str, rng: random.Random, params: dict[str, Any] | None = None) -> tuple[Any, str]:
    """Wrong values, chosen by ``rng``: ``decimal_shift`` (one number x10 or /10), ``wrong_year`` (one date's or
    year field's year off by one), ``duplicate`` (a record repeated), ``phantom`` (a made-up record inserted),
    ``bad_total`` (a total, count or sum that no longer adds up; any number if none is named so), ``set`` (``field``
    takes ``value`` in every record that has it: a scenario's exact wrong value). With ``field``, the numeric and
    year modes alter that field only. A mode that finds nothing to alter falls back to a duplicated record, else the
    result goes through unchanged (said in the detail)."""
    params = params or {}
    only = params.get("field")
    if mode == "set":
        assert isinstance(only, str)  # FaultSpec requires 'field' with mode 'set'
        hits = [r for r in _records(value) if only in r]
        for record in hits:
            record[only] = params["value"]
        if hits:
            return value, f"set: {only} -> {params['value']!r} in {len(hits)} record(s)"
        return value, f"set: no record has {only}"
    numbers = [(r, k) for r, k in _numbers(value) if only is None or k == only]
    if mode == "decimal_shift" and numbers:
        record, key = rng.choice(numbers)
        old = record[key]
        record[key] = old * 10 if rng.random() < 0.5 or old == 0 else old / 10
        return value, f"decimal_shift: {key} {old} -> {record[key]}"
    if mode == "wrong_year":
        places = [(r, k) for r, k in numbers if "year" in k.lower() and 1000 <= r[k] <= 2999]
        places += [
            (r, k)
            for r in _records(value)
            for k, v in r.items()
            if (only is None or k == only)
            and isinstance(v, str)
            and (_YEAR_IN_TEXT.search(v) or ("year" in k.lower() and _YEAR_TEXT.fullmatch(v)))
        ]
        if places:
            record, key = rng.choice(places)
            old, step = record[key], rng.choice((-1, 1))
            if isinstance(old, str) and _YEAR_TEXT.fullmatch(old):
                record[key] = str(int(old) + step)
            elif isinstance(old, str):
                record[key] = _YEAR_IN_TEXT.sub(lambda m: f"{int(m.group(1)) + step}{m.group(2)}", old, count=1)
            else:
                record[key] = old + step
            return value, f"wrong_year: {key} {old} -> {record[key]}"
    if mode == "bad_total" and numbers:
        named = [(r, k) for r, k in numbers if _TOTAL_KEY.search(k)]
        record, key = rng.choice(named) if named else numbers[-1]
        old = record[key]
        off = max(1, round(abs(old) * rng.uniform(0.05, 0.3)))
        record[key] = old + off if isinstance(old, int) else round(old + off, 2)
        return value, f"bad_total: {key} {old} -> {record[key]}"
    if mode == "phantom" and (done := _phantom(value, rng)) is not None:
        return done
    if (done := _duplicate(value, rng)) is not None:
        return done[0], done[1] if mode == "duplicate" else f"{mode} found nothing to alter; {done[1]}"
    return value, f"{mode}: nothing in the result to alter"


def _drift_response(value: Any, mode: str, params: dict[str, Any], rng: random.Random) -> tuple[Any, str]:
    """Response drift: ``rename`` renames ``field`` to ``to`` (by default every field of every record, each to
    ``drifted_name``); ``retype`` changes ``field``'s type (by default every field's): numbers become strings,
    strings one-element lists, booleans the strings "true"/"false"."""
    field = params.get("field")
    changed: set[str] = set()
    for record in _records(value):
        keys = [field] if field is not None else list(record)
        for key in keys:
            if key not in record:
                continue
            if mode == "rename":
                new = params.get("to") or drifted_name(key)
                record[new] = record.pop(key)
            else:
                old = record[key]
                if isinstance(old, bool):
                    record[key] = "true" if old else "false"
                elif isinstance(old, int | float):
                    record[key] = str(old)
                elif isinstance(old, str):
                    record[key] = [old]
            changed.add(key)
    what = ", ".join(sorted(changed)) or "no field (not in the result)"
    return value, f"{mode}: {what}"


_ID_KEY = re.compile(r"(^|_)(id|ID|Id)$|[a-z]Id$")
_QUALIFIERS = (" (2)", " II", " North", " Annex", " Jr.", " (old)", " - copy", " East")


def _near_duplicate(record: dict[str, Any], qualifier: str, k: int) -> dict[str, Any]:
    twin = copy.deepcopy(record)
    texts = [key for key, v in twin.items() if isinstance(v, str)]
    for key, v in twin.items():
        if isinstance(v, str):
            twin[key] = v + qualifier
        # ids must differ between candidates; with no text to tell them apart, every number does
        elif isinstance(v, int | float) and not isinstance(v, bool) and (_ID_KEY.search(key) or not texts):
            twin[key] = v + (1000 if texts else 1) * (k + 1)
    return twin


def _ambiguous(value: Any, count: int, rng: random.Random) -> tuple[Any, str]:
    """Several candidates where one was expected: every record comes with ``count`` near-duplicates (text with a
    qualifier, other ids), in an order ``rng`` shuffles, so that taking the first match is a guess. A list of matches
    wrapped with at most one text field beside it (a search's ``{"query": ..., "restaurants": [...]}``) has its
    matches doubled; any other single record (an order with its items, a fare quote for a trip) becomes
    ``{"candidates": [...]}``; a bare value a list of variants."""

    def group(record: dict[str, Any]) -> list[dict[str, Any]]:
        qualifiers = rng.sample(_QUALIFIERS, count) if count <= len(_QUALIFIERS) else list(_QUALIFIERS)
        members = [record] + [_near_duplicate(record, q, k) for k, q in enumerate(qualifiers)]
        rng.shuffle(members)
        return members

    rows = _record_list(value) if isinstance(value, dict) else None
    beside = [v for v in value.values() if v is not rows] if isinstance(value, dict) else []
    if rows and all(isinstance(r, dict) for r in rows) and len(beside) <= 1 and all(isinstance(v, str) for v in beside):
        assert isinstance(value, dict)
        key = next(k for k, v in value.items() if v is rows)
        value[key] = [member for record in rows for member in group(record)]
        return value, f"{count} near-duplicates of each of {len(rows)} records in {key}"
    if isinstance(value, dict):
        return {"candidates": group(value)}, f"{count} near-duplicates of the record"
    if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
        out = [member for record in value for member in group(record)]
        return out, f"{count} near-duplicates of each of {len(value)} records"
    if isinstance(value, str):
        return [value, *(value + q for q in rng.sample(_QUALIFIERS, min(count, len(_QUALIFIERS))))], "variants"
    return value, "nothing in the result to duplicate"
