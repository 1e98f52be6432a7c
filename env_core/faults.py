"""The fault layer: named settings, resolving a setting against a scenario, and faults firing at run time.

A *setting* is a named list of faults applied to every scenario of a suite (``clean``, ``first_tried``,
``impossible``, ...), and whether the agent sees each scenario's hint (``posed``). Its fault targets may be
symbolic (``@solution``, ``@primary``); ``resolve_faults`` turns them into tool names for one scenario.
``FaultRuntime`` holds one episode's fault state: call counts and which tool ``first_tried`` disabled.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import Field

from env_core.model import (
    TARGET_PRIMARY,
    TARGET_SOLUTION,
    FaultKind,
    FaultSpec,
    FiredFault,
    Persistence,
    Scenario,
    Strict,
    ToolError,
)


class Setting(Strict):
    """A named fault condition. ``scenario_faults`` keeps the scenario's own fault plan (off for ``clean``)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    faults: list[FaultSpec] = Field(default_factory=list)
    scenario_faults: bool = True
    hints: bool = Field(default=False, description="show each scenario's hint (Scenario.hint) after its task")
    description: str = ""


PRESET_SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in [
        Setting(name="clean", scenario_faults=False, description="no faults at all"),
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
    ]
}


def resolve_faults(scenario: Scenario, setting: Setting) -> list[FaultSpec]:
    """The concrete fault plan of one episode: symbolic targets replaced by the scenario's tool names."""
    specs = (list(scenario.faults) if setting.scenario_faults else []) + list(setting.faults)
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
    scenario without a hint is unchanged)."""
    if not setting.hints or not scenario.hint:
        return scenario
    return scenario.model_copy(update={"task": f"{scenario.task}{HINT_PREFIX}{scenario.hint}"})


def expects_give_up(scenario: Scenario, faults: list[FaultSpec], first_tried: Iterable[str] | None = None) -> bool:
    """True when the fault plan leaves no gold plan that can work, so giving up is the right behaviour.

    Only permanent faults block a plan. A ``first_tried`` fault blocks the tool the agent happened to call first:
    pass the tools it actually disabled (``Environment.first_tried_tools()``) once the episode has run. Without
    them the answer is the worst case: giving up is right if some first choice leaves no plan, i.e. one target tool
    lies in every surviving plan. A scenario without gold plans is judged on its answer alone (False).
    """
    plans = [{c.tool for c in plan} for plan in scenario.gold.plans]
    if not plans:
        return False
    dead: set[str] = set()
    targets: set[str] = set()
    for f in faults:
        if f.persistence.mode != "permanent":
            continue
        if f.kind in (FaultKind.unavailable, FaultKind.removed):
            dead.update(f.targets)
        elif f.kind == FaultKind.first_tried:
            targets.update(f.targets)
    if first_tried is not None:
        dead.update(t for t in first_tried if t in targets)
        return not any(not p & dead for p in plans)
    alive = [p for p in plans if not p & dead]
    return not alive or any(all(t in p for p in alive) for t in targets)


_TRANSIENT_MESSAGES = {
    "timeout": ("timeout", "Request to {tool} timed out after 30 s. Please retry."),
    "rate_limit": ("rate_limit", "429 Too Many Requests: rate limit exceeded for {tool}. Retry after a short wait."),
    "service_unavailable": (
        "service_unavailable",
        "503 Service Unavailable: {tool} is temporarily down. Please retry.",
    ),
}


def unavailable_error(tool: str) -> ToolError:
    return ToolError(type="unavailable", message=f"{tool} is currently unavailable. Please try a different function.")


class FaultRuntime:
    """One episode's faults as they fire. Pure given the sequence of calls: no clocks, no randomness."""

    def __init__(self, faults: list[FaultSpec]):
        self.faults = faults
        self._fired_on: dict[tuple[int, str], int] = {}  # (fault index, tool) -> times fired
        self._first_tried: dict[int, str] = {}  # first_tried fault index -> the tool it disabled
        # FaultSpec has checked every parameter (model.FAULT_PARAMS); _TRANSIENT_MESSAGES words each allowed error

    def removed_tools(self) -> set[str]:
        return {t for f in self.faults if f.kind == FaultKind.removed for t in f.targets}

    def _lasts(self, index: int, spec: FaultSpec, tool: str) -> bool:
        """Whether the fault still fires on this call (temporary faults heal after ``after`` firings)."""
        if spec.persistence.mode == "permanent":
            return True
        return self._fired_on.get((index, tool), 0) < (spec.persistence.after or 0)

    def _fire(self, index: int, spec: FaultSpec, tool: str, detail: str = "") -> FiredFault:
        self._fired_on[(index, tool)] = self._fired_on.get((index, tool), 0) + 1
        return FiredFault(kind=spec.kind, index=index, detail=detail)

    def intercept(self, tool: str) -> tuple[ToolError, FiredFault] | None:
        """Called before a visible tool runs: the error and fault record if a fault fires, else None."""
        for index, spec in enumerate(self.faults):
            if tool not in spec.targets:
                continue
            if spec.kind == FaultKind.unavailable and self._lasts(index, spec, tool):
                return unavailable_error(tool), self._fire(index, spec, tool)
            if spec.kind == FaultKind.first_tried:
                chosen = self._first_tried.setdefault(index, tool)
                if chosen == tool and self._lasts(index, spec, tool):
                    return unavailable_error(tool), self._fire(index, spec, tool, detail="first tried")
            if spec.kind == FaultKind.transient and self._lasts(index, spec, tool):
                error_type, template = _TRANSIENT_MESSAGES[spec.params.get("error", "service_unavailable")]
                error = ToolError(type=error_type, message=template.format(tool=tool), retryable=True)
                return error, self._fire(index, spec, tool)
        return None

    def removed_call(self, tool: str) -> FiredFault | None:
        """The fault record when the agent calls a tool that a ``removed`` fault took away."""
        for index, spec in enumerate(self.faults):
            if spec.kind == FaultKind.removed and tool in spec.targets:
                return self._fire(index, spec, tool)
        return None

    def first_tried_tools(self) -> set[str]:
        """The tools that permanent ``first_tried`` faults disabled in this episode so far."""
        return {tool for i, tool in self._first_tried.items() if self.faults[i].persistence.mode == "permanent"}
