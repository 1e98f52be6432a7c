"""The library's figures: what its scenarios are (how many steps, services and writes their primary plans take, which
fault cells they fill, how their checks are built) and what the naive policy did on them, as the build reports them
and ``undertow suites show services`` prints them again.

The thresholds are the shipped library's (issue 33, after the paper's §3–4): a user's ``extra`` scenarios are
reported, not held to them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from undertow.env_core.families import ReportTable
from undertow.env_core.model import FaultKind, Scenario
from undertow.env_core.services.catalog import SERVICES
from undertow.env_core.services.workflows import fault_cell, plan_facts

# The fault cells every library must fill: each kind x {permanent, temporary}, transient only temporary
CELLS = [
    (kind.value, persistence)
    for kind in (
        FaultKind.unavailable,
        FaultKind.stale,
        FaultKind.silent_noop,
        FaultKind.corrupted,
        FaultKind.schema_drift,
        FaultKind.ambiguous,
        FaultKind.cascade,
    )
    for persistence in ("permanent", "temporary")
] + [(FaultKind.transient.value, "temporary")]
# The categories the paper calls interaction-heavy (Figure 3)
INTERACTION_HEAVY = ("payments", "food_delivery", "email", "calendar")

# What the shipped library holds itself to
AT_LEAST = {
    "scenarios": 218,
    "distinct tasks": 200,
    "distinct plans": 150,
    "per cell": 12,
    "per service": 4,
}
SHARE_AT_LEAST = {"multi-step": 0.60, "crossing services": 0.40, "state-changing": 0.40, "naive unsafe": 0.25}
CATEGORY_AT_MOST = 0.15
INTERACTION_AT_LEAST = 0.40


@dataclass
class NaiveWalks:
    """What the naive policy's walks did in a build: passes per rubric, and the scenarios where its base walk made a
    forbidden call."""

    passed: Counter[str] = field(default_factory=Counter)
    unsafe: set[str] = field(default_factory=set)


def _facts(scenario: Scenario) -> dict[str, Any]:
    return plan_facts(scenario.gold.plans[0]) if scenario.gold.plans else {}


def library_figures(scenarios: Sequence[Scenario], naive: NaiveWalks) -> dict[str, Any]:
    """Every figure the library is held to, from the scenarios themselves (see the module docstring)."""
    n = len(scenarios)
    facts = [_facts(s) for s in scenarios]
    writing = [s for s, f in zip(scenarios, facts, strict=True) if f.get("changes_state")]
    required = [p for s in scenarios for p in s.gold.required_calls]
    checkpoints = [c for s in scenarios for c in s.gold.checkpoints]
    cells = Counter(fault_cell(s.faults) for s in scenarios if s.faults)
    categories = Counter(str(s.metadata.get("category")) for s in scenarios)
    services = Counter(name for s in scenarios for name in _services(s))
    return {
        "scenarios": n,
        "distinct tasks": len({s.task for s in scenarios}),
        "distinct plans": len({tuple(c.tool for c in s.gold.plans[0]) for s in scenarios if s.gold.plans}),
        "multi-step": sum(f.get("steps", 0) >= 3 for f in facts),
        "crossing services": sum(len(f.get("plan_services", ())) >= 2 for f in facts),
        "state-changing": len(writing),
        "state-changing with forbidden calls": sum(bool(s.gold.forbidden_calls) for s in writing),
        "naive unsafe": len(naive.unsafe),
        "injected": sum(bool(s.faults) for s in scenarios),
        "required calls": len(required),
        "grounded required calls": sum(bool(p.arguments) for p in required),
        "checkpoints": len(checkpoints),
        "stage checkpoints": sum(c.trigger != "final" for c in checkpoints),
        "checkpoint weights": sorted({c.weight for c in checkpoints}),
        "cells": {f"{k}/{p}": cells.get((k, p), 0) for k, p in CELLS},
        "categories": dict(categories.most_common()),
        "interaction-heavy": sum(categories[c] for c in INTERACTION_HEAVY),
        "services": {s.name: services.get(s.name, 0) for s in SERVICES},
    }


def _services(scenario: Scenario) -> set[str]:
    named = scenario.metadata.get("services")
    if named:
        return set(named)
    return {str(scenario.metadata.get("service"))} | set(scenario.metadata.get("fallback_services") or ())


def shortfalls(figures: dict[str, Any]) -> list[str]:
    """The figures below (or above) what the shipped library holds itself to, one line each; [] when all hold."""
    n = figures["scenarios"] or 1
    out = [f"{name}: {figures[name]} < {least}" for name, least in AT_LEAST.items() if name in figures and
           figures[name] < least]  # fmt: skip
    for name, least in SHARE_AT_LEAST.items():
        whole = figures["injected"] if name == "naive unsafe" else n
        if figures[name] < least * whole:
            out.append(f"{name}: {figures[name]}/{whole} < {least:.0%}")
    out += [f"cell {c}: {k} < {AT_LEAST['per cell']}" for c, k in figures["cells"].items() if k < AT_LEAST["per cell"]]
    out += [f"service {s}: {k} < {AT_LEAST['per service']}" for s, k in figures["services"].items()
            if k < AT_LEAST["per service"]]  # fmt: skip
    out += [f"category {c}: {k}/{n} > {CATEGORY_AT_MOST:.0%}" for c, k in figures["categories"].items()
            if k > CATEGORY_AT_MOST * n]  # fmt: skip
    if figures["interaction-heavy"] < INTERACTION_AT_LEAST * n:
        out.append(f"interaction-heavy categories: {figures['interaction-heavy']}/{n} < {INTERACTION_AT_LEAST:.0%}")
    if figures["state-changing with forbidden calls"] < figures["state-changing"]:
        out.append(
            f"state-changing with forbidden calls: {figures['state-changing with forbidden calls']}/"
            f"{figures['state-changing']}"
        )
    return out


def _share(count: int, whole: int) -> str:
    return f"{count} ({count / whole:.0%})" if whole else str(count)


def figure_tables(scenarios: Sequence[Scenario], naive: NaiveWalks) -> list[ReportTable]:
    """The figures as report tables: the library's shape, its fault cells, and its categories and services."""
    f = library_figures(scenarios, naive)
    n = f["scenarios"]
    shape = ReportTable(
        title="services library",
        columns=["figure", "value"],
        right=[False, True],
        rows=[
            ["distinct task texts", str(f["distinct tasks"])],
            ["distinct primary-plan tool sequences", str(f["distinct plans"])],
            ["multi-step (>= 3 calls on the primary plan)", _share(f["multi-step"], n)],
            ["crossing services (>= 2 services on the primary plan)", _share(f["crossing services"], n)],
            ["state-changing (a write on the primary plan)", _share(f["state-changing"], n)],
            [
                "state-changing with forbidden calls",
                f"{f['state-changing with forbidden calls']}/{f['state-changing']}",
            ],
            ["naive makes a forbidden call (base)", _share(f["naive unsafe"], f["injected"])],
            [
                "required calls grounded in arguments",
                f"{f['grounded required calls']}/{f['required calls']}",
            ],
            ["stage checkpoints (after a named call)", f"{f['stage checkpoints']}/{f['checkpoints']}"],
            ["checkpoint weights", ", ".join(f"{w:g}" for w in f["checkpoint weights"])],
            ["interaction-heavy categories", _share(f["interaction-heavy"], n)],
            ["largest category", _share(max(f["categories"].values(), default=0), n)],
            ["fewest scenarios of a service", str(min(f["services"].values(), default=0))],
        ],
        note="shipped library's floors: "
        + "; ".join(f"{k} >= {v}" for k, v in AT_LEAST.items())
        + "; multi-step, crossing, state-changing >= 60/40/40%; naive forbidden >= 25% of injected runs; "
        f"no category above {CATEGORY_AT_MOST:.0%}; interaction-heavy >= {INTERACTION_AT_LEAST:.0%}",
    )
    cells = ReportTable(
        title="fault cells (kind / persistence)",
        columns=["cell", "scenarios"],
        right=[False, True],
        rows=[[cell, str(count)] for cell, count in f["cells"].items()],
    )
    return [shape, cells]
