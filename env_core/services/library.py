"""The template-generated part of the scenario library: service recipes x fault kind x persistence x task shape.

Every scenario has the paper's parts: the user's request, the faults the scenario injects (its own fault plan, on
under ``base``), the staged disclosure of the counterpart provider, the gold plans the oracle walks (the primary
plan, then retries, repairs or the fallback, each step's result checked against the true result computed on a
fresh world), the required calls as evidence obligations by tier (``task``: the request was served; ``recovery``:
the retry, repair or fallback the fault calls for; ``verify``: the readback that confirms a write), and checkpoint
rubrics on the final answer (the facts, and under faults what went wrong).

Task shapes: ``lookup`` (a read the user asks about) and ``write`` (a change the user asks for, confirmed by a
readback); ``write`` with upstream calls (a menu before an order) also carries the ``cascade`` faults.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from undertow.env_core.faults import FaultRuntime, drifted_name
from undertow.env_core.model import (
    CallPattern,
    Checkpoint,
    DisclosureRule,
    FaultKind,
    FaultSpec,
    Gold,
    Persistence,
    PlannedCall,
    ResultCheck,
    Scenario,
)
from undertow.env_core.services.base import Service, World
from undertow.env_core.services.recipes import Call, Lookup, Write
from undertow.env_core.services.tools import PristineWorld

FAMILY = "services"
PERMANENT = Persistence()


def temporary(after: int) -> Persistence:
    return Persistence(mode="temporary", after=after)


class Truth:
    """True results of calls on a fresh world: what the oracle checks a result against."""

    def __init__(self, services: Sequence[type[Service]]):
        self.services = {s.name: s for s in services}
        self.pristine = PristineWorld(services)

    def fresh(self) -> World:
        return self.pristine.copy()

    def run(self, service: type[Service], calls: Sequence[Call], world: World | None = None) -> list[Any]:
        """Results of ``calls`` made one after another on ``world`` (a fresh one by default)."""
        world = world or self.fresh()
        results = []
        for call in calls:
            world.tick()
            results.append(service(world).run(call.method, dict(call.arguments)))
        return results


@dataclass(frozen=True)
class Pair:
    """A recipe of a service and the same-topic recipe of a counterpart (the fallback)."""

    service: type[Service]
    recipe: Lookup | Write
    fallback_service: type[Service]
    fallback: Lookup | Write


def pairs(services: Sequence[type[Service]]) -> Iterator[Pair]:
    """Each service's recipes, each with the first counterpart (in the service's order) that has the same topic."""
    by_name = {s.name: s for s in services}
    for service in services:
        recipes: list[Lookup | Write] = [*service.lookups(), *service.writes()]
        for recipe in recipes:
            kind = type(recipe)
            for name in service.counterparts:
                other = by_name.get(name)
                if other is None:
                    continue
                theirs: list[Lookup | Write] = [*other.lookups(), *other.writes()]
                same = [r for r in theirs if type(r) is kind and r.topic == recipe.topic]
                if same:
                    yield Pair(service, recipe, other, same[0])
                    break


def tool_names(*services: type[Service]) -> list[str]:
    return sorted(spec.name for service in services for spec in service.specs())


def _planned(service: type[Service], call: Call, check: ResultCheck | None = None, verify: bool = False) -> PlannedCall:
    return PlannedCall(tool=service.tool_name(call.method), arguments=dict(call.arguments), check=check, verify=verify)


def _said(concepts: Sequence[str]) -> str:
    return "; ".join(concepts)


def stated(recipe: Lookup | Write) -> list[str]:
    """What a right final answer states: the recipe's answer and the conclusion its request asks for."""
    return [*recipe.answer, *recipe.concludes]


@dataclass(frozen=True)
class Variant:
    """One fault variant of a task shape: its id suffix and how it changes the scenario."""

    name: str
    kind: FaultKind
    persistence: Persistence


def _metadata(pair: Pair, variant: Variant, shape: str, state_changing: list[str]) -> dict[str, Any]:
    return {
        "domain": pair.service.domain,
        "category": pair.service.category,
        "service": pair.service.name,
        "fallback_service": pair.fallback_service.name,
        "topic": pair.recipe.topic,
        "shape": shape,
        "fault_kind": variant.kind.value,
        "persistence": variant.persistence.mode,
        "variant": variant.name,
        "state_changing": state_changing,
    }


def write_names(*services: type[Service]) -> list[str]:
    return sorted(spec.name for s in services for spec in s.specs() if spec.binding.get("kind") == "write")


# ---------------------------------------------------------------------------------------------------------------
# Lookups


LOOKUP_VARIANTS: list[tuple[str, FaultKind, Persistence, dict[str, Any]]] = [
    ("down", FaultKind.unavailable, PERMANENT, {"error": "service_unavailable"}),
    ("auth", FaultKind.unavailable, PERMANENT, {"error": "auth"}),
    ("blip", FaultKind.unavailable, temporary(2), {"error": "service_unavailable"}),
    ("timeout", FaultKind.transient, temporary(2), {"error": "timeout"}),
    ("throttled", FaultKind.transient, temporary(1), {"error": "rate_limit"}),
    ("stale", FaultKind.stale, PERMANENT, {"age_days": 4}),
    ("stale_once", FaultKind.stale, temporary(1), {"age_days": 6}),
    ("shifted", FaultKind.corrupted, PERMANENT, {"mode": "decimal_shift"}),
    ("duplicated", FaultKind.corrupted, temporary(1), {"mode": "duplicate"}),
    ("phantom", FaultKind.corrupted, PERMANENT, {"mode": "phantom"}),
    ("renamed", FaultKind.schema_drift, PERMANENT, {"mode": "rename"}),
    ("retyped_once", FaultKind.schema_drift, temporary(1), {"mode": "retype"}),
    ("argument_drift", FaultKind.schema_drift, PERMANENT, {"mode": "arguments"}),
    ("ambiguous", FaultKind.ambiguous, PERMANENT, {"count": 2}),
    ("ambiguous_once", FaultKind.ambiguous, temporary(1), {"count": 2}),
]

# What the final answer says went wrong, per fault kind (the recovery checkpoint's concept; the oracle's report
# states it in these words).
WHAT_WENT_WRONG = {
    FaultKind.unavailable: "was unavailable",
    FaultKind.transient: "failed at first",
    FaultKind.stale: "was out of date",
    FaultKind.corrupted: "returned inconsistent data",
    FaultKind.schema_drift: "had changed its format",
    FaultKind.ambiguous: "returned several matches",
    FaultKind.silent_noop: "did not keep the change",
    FaultKind.cascade: "failed because a service it depends on failed",
}
# Other ways an answer states the same thing (the checkpoint's synonyms): a model words it its own way, and an
# abstract phrase is where sentence similarity is weakest.
SAID_OTHERWISE = {
    FaultKind.unavailable: ["was down", "could not be reached", "was not available", "returned an error"],
    FaultKind.transient: ["failed the first time", "timed out at first", "was rate limited", "worked on a retry"],
    FaultKind.stale: ["outdated", "stale", "old data", "not current"],
    FaultKind.corrupted: ["inconsistent", "did not add up", "looked wrong", "corrupted", "duplicated"],
    FaultKind.schema_drift: ["changed its format", "renamed", "unexpected format", "different field names"],
    FaultKind.ambiguous: ["several matches", "multiple matches", "more than one match", "ambiguous"],
    FaultKind.silent_noop: ["did not save", "was not saved", "did not go through", "did not persist"],
    FaultKind.cascade: ["a service it depends on", "upstream service failed", "dependency failed"],
}


_SILENT = (FaultKind.stale, FaultKind.corrupted, FaultKind.schema_drift, FaultKind.ambiguous)


def _manifests(fault: FaultSpec, tool: str, result: Any) -> bool:
    """Whether a silent fault changes this result at all (a fault that cannot show is no scenario)."""
    if fault.params.get("mode") == "arguments":
        return True
    altered, _ = FaultRuntime([fault], key="probe").alter(0, fault, tool, result)
    return bool(altered != result)


def lookup_scenario(
    truth: Truth, pair: Pair, name: str, kind: FaultKind, persistence: Persistence, params: dict[str, Any]
) -> Scenario | None:
    """One lookup scenario, or None when the recipe cannot carry this fault (no pin for ambiguity, no number to
    shift, no argument to drift)."""
    recipe, service, other, fallback = pair.recipe, pair.service, pair.fallback_service, pair.fallback
    assert isinstance(recipe, Lookup) and isinstance(fallback, Lookup)
    primary = service.tool_name(recipe.call.method)
    backup = other.tool_name(fallback.call.method)
    [true] = truth.run(service, [recipe.call])
    [true_fallback] = truth.run(other, [fallback.call])
    check, check_fallback = ResultCheck(equals=true), ResultCheck(equals=true_fallback)
    params = dict(params)
    if kind == FaultKind.ambiguous and recipe.pin is None:
        return None
    if kind == FaultKind.schema_drift and params.get("mode") == "arguments":
        if not recipe.call.arguments:
            return None
        params["field"] = next(iter(recipe.call.arguments))  # the argument the recipe's call passes drifts
    if kind == FaultKind.corrupted and params.get("mode") == "decimal_shift":
        if recipe.value_field is None:
            return None
        params["field"] = recipe.value_field
    variant = Variant(name, kind, persistence)
    fault = FaultSpec(kind=kind, target=primary, persistence=persistence, params=params)
    if kind in _SILENT and not _manifests(fault, primary, true):
        return None  # e.g. a duplicate record in a result that holds no list of records
    loud = kind in (FaultKind.unavailable, FaultKind.transient) or params.get("mode") == "arguments"
    retried = persistence.mode == "temporary"
    said = _said(stated(recipe))
    wrong = f"{service.title} {WHAT_WENT_WRONG[kind]}"

    plans: list[list[PlannedCall]] = [[_planned(service, recipe.call, check)]]
    reports = [f"Here is what {service.title} shows: {said}."]
    required = [CallPattern(tool=[primary, backup], tier="task")]
    if kind == FaultKind.schema_drift and params.get("mode") == "arguments":
        # the repair: the same call under the argument's new name, which the error message gives
        old = next(iter(recipe.call.arguments))
        new = drifted_name(old)
        repaired = Call(recipe.call.method, {(new if k == old else k): v for k, v in recipe.call.arguments.items()})
        plans.append([_planned(service, repaired, check)])
        reports.append(
            f"{wrong}: the request needed '{new}' instead of '{old}'. Here is what {service.title} shows: {said}."
        )
        # the repair, or the counterpart (the gold plans list its answer too), after the call that failed
        required += [
            CallPattern(tool=primary, tier="recovery", attempted=True),
            CallPattern(tool=[primary, backup], tier="recovery", after=len(required)),
        ]
    elif kind == FaultKind.ambiguous:
        assert recipe.pin is not None
        pin = service.tool_name(recipe.pin.method)
        [true_pin] = truth.run(service, [recipe.pin])
        plans.append([_planned(service, recipe.pin, ResultCheck(equals=true_pin))])
        reports.append(f"{wrong}, so I looked the entry up by its id. Here is what {service.title} shows: {said}.")
        # the entry's own id, or the counterpart's answer (the gold plans offer both)
        required.append(CallPattern(tool=[pin, backup], tier="recovery"))
    elif retried and not loud:
        plans.append([_planned(service, recipe.call, check)])  # a second read, after the first looked wrong
        reports.append(f"{wrong} at first, so I asked again. Here is what {service.title} shows: {said}.")
        # a second read of the primary, or a confirmation from the counterpart where the gold plans offer one
        confirm = kind in (FaultKind.stale, FaultKind.corrupted, FaultKind.schema_drift)
        required += [
            CallPattern(tool=[primary, backup] if confirm else primary, tier="recovery", times=2),
            CallPattern(tool=primary, tier="recovery", attempted=True),
        ]
    elif retried:
        required[0] = CallPattern(tool=primary, tier="task")  # a transient failure is retried, not fallen back from
        reports[0] = f"{wrong} and worked on a retry. Here is what {service.title} shows: {said}."
    if not retried or kind in (FaultKind.stale, FaultKind.corrupted, FaultKind.schema_drift, FaultKind.ambiguous):
        plans.append([_planned(other, fallback.call, check_fallback)])
        reports.append(
            f"{wrong}, so I used {other.title} instead. Here is what {other.title} shows: {_said(stated(fallback))}."
        )
    if not retried and kind not in (FaultKind.ambiguous,) and params.get("mode") != "arguments":
        required += [
            CallPattern(tool=primary, tier="recovery", attempted=True),
            CallPattern(tool=backup, tier="recovery", after=len(required)),
        ]
    checkpoints = [Checkpoint(expect=stated(recipe), tier="task")]
    if not (retried and loud):
        checkpoints.append(Checkpoint(expect=[WHAT_WENT_WRONG[kind]], tier="recovery"))
    # staged disclosure: the counterpart appears once the primary failed (loud faults) or was called (silent ones)
    reveal = DisclosureRule(
        tools=tool_names(other), after_failure_of=primary if loud else None, after_call_of=None if loud else primary
    )
    scenario = Scenario(
        id=f"{FAMILY}.{service.name}.{recipe.topic}.{name}",
        family=FAMILY,
        task=recipe.request,
        tools=tool_names(service),
        hidden_tools=tool_names(other),
        disclosure=[reveal],
        faults=[fault],
        gold=Gold(
            answer=list(recipe.answer),
            plans=plans,
            reports=reports,
            required_calls=required,
            checkpoints=checkpoints,
            synonyms={WHAT_WENT_WRONG[kind]: SAID_OTHERWISE[kind]},
        ),
        metadata=_metadata(pair, variant, "lookup", write_names(service, other)),
    )
    return scenario


# ---------------------------------------------------------------------------------------------------------------
# Writes


WRITE_VARIANTS: list[tuple[str, FaultKind, Persistence, dict[str, Any]]] = [
    ("lost_write", FaultKind.silent_noop, PERMANENT, {"returns": "result"}),
    ("lost_once", FaultKind.silent_noop, temporary(1), {"returns": "ok"}),
    ("partial", FaultKind.silent_noop, temporary(1), {"apply": "partial"}),
    ("down", FaultKind.unavailable, PERMANENT, {"error": "service_unavailable"}),
    ("forbidden", FaultKind.unavailable, PERMANENT, {"error": "forbidden"}),
    ("blip", FaultKind.transient, temporary(2), {"error": "service_unavailable"}),
    ("cascade", FaultKind.cascade, PERMANENT, {}),
    ("cascade_once", FaultKind.cascade, temporary(1), {}),
]


def write_scenario(
    truth: Truth, pair: Pair, name: str, kind: FaultKind, persistence: Persistence, params: dict[str, Any]
) -> Scenario | None:
    recipe, service, other, fallback = pair.recipe, pair.service, pair.fallback_service, pair.fallback
    assert isinstance(recipe, Write) and isinstance(fallback, Write)
    write, readback = service.tool_name(recipe.call.method), service.tool_name(recipe.readback.method)
    write_b, readback_b = other.tool_name(fallback.call.method), other.tool_name(fallback.readback.method)
    if params.get("apply") == "partial" and not any(
        isinstance(v, list) and len(v) > 1 for v in recipe.call.arguments.values()
    ):
        return None
    if kind == FaultKind.cascade and not recipe.before:
        return None
    variant = Variant(name, kind, persistence)
    landed = ResultCheck(contains=list(recipe.landed))
    landed_b = ResultCheck(contains=list(fallback.landed))

    def steps(svc: type[Service], r: Write, check: ResultCheck) -> list[PlannedCall]:
        return [*(_planned(svc, c) for c in r.before), _planned(svc, r.call), _planned(svc, r.readback, check, True)]

    said = _said(stated(recipe))
    wrong = f"{service.title} {WHAT_WENT_WRONG[kind]}"
    faults = (
        [FaultSpec(kind=kind, target=write, persistence=persistence, params=params)]
        if kind != FaultKind.cascade
        else []
    )
    if kind == FaultKind.cascade:
        upstream = service.tool_name(recipe.before[-1].method)
        faults = [
            FaultSpec(
                kind=FaultKind.transient,
                target=upstream,
                persistence=temporary(1),
                params={"error": "service_unavailable"},
            ),
            FaultSpec(kind=FaultKind.cascade, target=write, persistence=persistence, params={"on": upstream}),
        ]
    retried = persistence.mode == "temporary"
    loud = kind in (FaultKind.unavailable, FaultKind.transient, FaultKind.cascade)
    plans = [steps(service, recipe, landed)]
    reports = [f"Done with {service.title}: {said}. I checked it and it is there."]
    required = [
        CallPattern(tool=[write, write_b], tier="task"),
        CallPattern(tool=[readback, readback_b], tier="verify", after=0),
    ]
    if retried and not loud:
        plans.append(steps(service, recipe, landed))  # the change did not (fully) land: make it again, check again
        reports.append(f"{wrong} the first time, so I made it again and checked: {said}.")
        required += [
            CallPattern(tool=write, tier="recovery", times=2),
            CallPattern(tool=readback, tier="verify", times=2),
        ]
    elif retried:
        # ("failed at first" says it once)
        first = "" if WHAT_WENT_WRONG[kind].endswith("at first") else " at first"
        reports[0] = f"{wrong}{first} and worked on a retry. Done with {service.title}: {said}. I checked it."
        required[0] = CallPattern(tool=write, tier="task")
    else:
        plans.append(steps(other, fallback, landed_b))
        reports.append(
            f"{wrong}, so I used {other.title} instead: {_said(stated(fallback))}. I checked it and it is there."
        )
        required += [
            CallPattern(tool=write, tier="recovery", attempted=True),
            CallPattern(tool=write_b, tier="recovery", after=2),
            CallPattern(tool=readback_b, tier="verify", after=3),
        ]
    checkpoints = [Checkpoint(expect=stated(recipe), tier="task")]
    if not (retried and loud):
        checkpoints.append(Checkpoint(expect=[WHAT_WENT_WRONG[kind]], tier="recovery"))
    reveal = DisclosureRule(
        tools=tool_names(other), after_failure_of=write if loud else None, after_call_of=None if loud else readback
    )
    return Scenario(
        id=f"{FAMILY}.{service.name}.{recipe.topic}.{name}",
        family=FAMILY,
        task=recipe.request,
        tools=tool_names(service),
        hidden_tools=tool_names(other),
        disclosure=[reveal],
        faults=faults,
        gold=Gold(
            answer=list(recipe.answer),
            plans=plans,
            reports=reports,
            required_calls=required,
            checkpoints=checkpoints,
            synonyms={WHAT_WENT_WRONG[kind]: SAID_OTHERWISE[kind]},
        ),
        metadata=_metadata(
            pair, variant, "cascade" if kind == FaultKind.cascade else "write", write_names(service, other)
        ),
    )


Maker = Callable[[Truth, Pair, str, FaultKind, Persistence, dict[str, Any]], Scenario | None]


def template_scenarios(services: Sequence[type[Service]]) -> list[Scenario]:
    """Every (recipe, variant) that the recipe can carry, one scenario each."""
    truth = Truth(services)
    out: list[Scenario] = []
    for pair in pairs(services):
        variants, make = (
            (LOOKUP_VARIANTS, lookup_scenario) if isinstance(pair.recipe, Lookup) else (WRITE_VARIANTS, write_scenario)
        )
        for name, kind, persistence, params in variants:
            scenario = make(truth, pair, name, kind, persistence, params)
            if scenario is not None:
                out.append(scenario)
    return out
