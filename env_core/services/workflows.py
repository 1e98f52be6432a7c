"""The curated scenario library: multi-step workflows written one by one, read from ``data/workflows/``.

Each line of ``data/workflows/<category>.jsonl`` is one :class:`Workflow`: a user's request over the simulated
services, the faults it injects, the staged disclosure of counterpart providers, and its gold (the plans the oracle
walks, the reports it gives, required and forbidden calls, weighted checkpoints). A workflow names services, not tools:
its tools are every tool of the services it lists (``services`` visible from the start, ``hidden`` revealed by its
``reveal`` rules). What the library reports about a scenario (its category, how many calls and services its primary
plan takes, whether it changes state, its fault cell) is computed from the workflow, never written by hand, so that
``suites show`` counts what the scenarios are.

A bad line is a :class:`~undertow.env_core.errors.DataError` naming the file, the line and the field; a mistyped
service name gets a did-you-mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from undertow.env_core.content import read_records
from undertow.env_core.errors import DataError, did_you_mean
from undertow.env_core.model import (
    ASK_USER,
    CallPattern,
    Checkpoint,
    DisclosureRule,
    FaultKind,
    FaultSpec,
    Gold,
    PlannedCall,
    Scenario,
    Strict,
    UserReply,
)
from undertow.env_core.services.base import Service
from undertow.env_core.services.catalog import BY_NAME, service_of
from undertow.env_core.services.library import FAMILY, tool_names, write_names
from undertow.env_core.services.seeds import DATA

WORKFLOWS = DATA / "workflows"
ID_PATTERN = r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$"


class Reveal(Strict):
    """Staged disclosure: the tools of ``services`` appear once its trigger happened (a failed call of
    ``after_failure_of``, any call of ``after_call_of``, or ``after_calls`` calls in all)."""

    services: list[str] = Field(min_length=1)
    after_failure_of: str | None = None
    after_call_of: str | None = None
    after_calls: int | None = Field(default=None, ge=1)


class Workflow(Strict):
    """One curated scenario as its data line states it (see the module docstring). ``services[0]`` is the service
    the request is about (its category is the scenario's); ``plans[0]`` is the primary plan, walked under clean."""

    id: str = Field(pattern=ID_PATTERN, description="'<category>.<slug>'; the scenario id is 'services.' + this")
    task: str = Field(min_length=1)
    services: list[str] = Field(min_length=1)
    hidden: list[str] = Field(default_factory=list)
    reveal: list[Reveal] = Field(default_factory=list)
    faults: list[FaultSpec] = Field(min_length=1)
    plans: list[list[PlannedCall]] = Field(min_length=1)
    reports: list[str] = Field(min_length=1)
    required: list[CallPattern] = Field(min_length=1)
    forbidden: list[CallPattern] = Field(default_factory=list)
    checkpoints: list[Checkpoint] = Field(min_length=1)
    synonyms: dict[str, list[str]] = Field(default_factory=dict)
    user_replies: list[UserReply] = Field(default_factory=list)
    answer: list[str] = Field(default_factory=list, description="the facts a right final answer states")
    note: str = Field(default="", description="why the workflow is built as it is (an added fault, a choice)")


def _service(name: str, where: str) -> type[Service]:
    service = BY_NAME.get(name)
    if service is None:
        raise ValueError(f"{where}: unknown service '{name}'; {did_you_mean(name, BY_NAME)}")
    return service


def fault_cell(faults: Sequence[FaultSpec]) -> tuple[str, str]:
    """The (kind, persistence) a scenario is filed under: a cascade when it has one (its upstream fault only sets it
    off), else its first fault's."""
    cascade = next((f for f in faults if f.kind == FaultKind.cascade), None)
    fault = cascade or faults[0]
    return fault.kind.value, fault.persistence.mode


def plan_services(plan: Sequence[PlannedCall]) -> list[str]:
    """The distinct services a plan calls, in first-call order (``ask_user`` is not a service)."""
    found: list[str] = []
    for call in plan:
        owner = service_of(call.tool)
        if owner is not None and owner.name not in found:
            found.append(owner.name)
    return found


def plan_facts(primary: Sequence[PlannedCall]) -> dict[str, Any]:
    """What a primary plan is: the services it calls (``plan_services``), its number of calls (``steps``) and
    whether it writes (``changes_state``); the library's figures count these."""
    owners = [service_of(c.tool) for c in primary]
    kinds = {spec.name: spec.binding.get("kind") for s in owners if s is not None for spec in s.specs()}
    return {
        "plan_services": plan_services(primary),
        "steps": len([c for c in primary if c.tool != ASK_USER]),
        "changes_state": any(kinds.get(c.tool) == "write" for c in primary),
    }


def workflow_metadata(workflow: Workflow) -> dict[str, Any]:
    """What the library reports about a workflow, computed from it."""
    visible = [_service(n, "services") for n in workflow.services]
    hidden = [_service(n, "hidden") for n in workflow.hidden]
    kind, persistence = fault_cell(workflow.faults)
    return {
        "domain": visible[0].domain,
        "category": visible[0].category,
        "service": visible[0].name,
        "services": sorted({*workflow.services, *workflow.hidden}),
        "fallback_services": list(workflow.hidden),
        **plan_facts(workflow.plans[0]),
        "shape": "workflow",
        "fault_kind": kind,
        "persistence": persistence,
        "state_changing": write_names(*visible, *hidden),
        **({"note": workflow.note} if workflow.note else {}),
    }


def to_scenario(workflow: Workflow) -> Scenario:
    """The scenario a workflow line describes. Raises ValueError naming the field for an unknown service."""
    visible = [_service(n, f"services.{i}") for i, n in enumerate(workflow.services)]
    hidden = [_service(n, f"hidden.{i}") for i, n in enumerate(workflow.hidden)]
    disclosure = [
        DisclosureRule(
            tools=tool_names(*(_service(n, f"reveal.{i}.services") for n in rule.services)),
            after_failure_of=rule.after_failure_of,
            after_call_of=rule.after_call_of,
            after_calls=rule.after_calls,
        )
        for i, rule in enumerate(workflow.reveal)
    ]
    revealed = {n for rule in workflow.reveal for n in rule.services}
    unrevealed = [n for n in workflow.hidden if n not in revealed]
    if unrevealed:
        raise ValueError(f"hidden: service '{unrevealed[0]}' is hidden but no reveal rule discloses it")
    return Scenario(
        id=f"{FAMILY}.{workflow.id}",
        family=FAMILY,
        task=workflow.task,
        tools=tool_names(*visible),
        hidden_tools=tool_names(*hidden),
        disclosure=disclosure,
        faults=workflow.faults,
        gold=Gold(
            answer=list(workflow.answer) or None,
            plans=workflow.plans,
            reports=workflow.reports,
            required_calls=workflow.required,
            forbidden_calls=workflow.forbidden,
            checkpoints=workflow.checkpoints,
            synonyms=workflow.synonyms,
        ),
        user_replies=workflow.user_replies,
        metadata=workflow_metadata(workflow),
    )


def _line_numbers(path: Path) -> list[int]:
    return [n for n, raw in enumerate(path.read_bytes().split(b"\n"), start=1) if raw.strip()]


def read_workflows(path: Path) -> list[tuple[Scenario, str]]:
    """A workflow file's scenarios, each with its ``file:line``. A bad line is a DataError naming the file, the line
    and the field."""
    workflows = read_records(path, Workflow)
    out: list[tuple[Scenario, str]] = []
    for number, workflow in zip(_line_numbers(path), workflows, strict=True):
        try:
            scenario = to_scenario(workflow)
        except ValueError as exc:
            field, _, message = str(exc).partition(": ")
            raise DataError(message or str(exc), file=str(path), line=number, field=field or None) from exc
        out.append((scenario, f"{path}:{number}"))
    return out


def library_files(folder: Path = WORKFLOWS) -> list[Path]:
    return sorted(folder.glob("*.jsonl"))


def workflow_scenarios(folder: Path = WORKFLOWS) -> tuple[list[Scenario], dict[str, str]]:
    """Every workflow of the library (files in name order, lines in file order) and each scenario's ``file:line``;
    an id used twice is a DataError naming both lines."""
    scenarios: list[Scenario] = []
    where: dict[str, str] = {}
    for path in library_files(folder):
        for scenario, place in read_workflows(path):
            if scenario.id in where:
                file, _, line = place.rpartition(":")
                raise DataError(
                    f"id '{scenario.id}' is already used at {where[scenario.id]}", file=file, line=int(line), field="id"
                )
            where[scenario.id] = place
            scenarios.append(scenario)
    return scenarios, where
