"""The FAIL-TaLMs scenario library: hand-written, fully specified ("perfect") requests over the offline tools.

The requests are ``data/requests.jsonl``, one :class:`Request` a line: the request, the calls that serve it, where
the answer's facts sit in those calls' results, the tools an average person could stand in for with little effort,
and its under-specified variants (the request with one needed value left out; every one is run). The gold plan is
replayed through :func:`env_core.failtalms.tools.run` when the library is built, so every gold answer is what the
tools return, never a value typed by hand; an argument that depends on an earlier result (:class:`Ref`) is resolved
then and written into the plan as a literal.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr, model_validator

from undertow.env_core.content import data_dir, read_records
from undertow.env_core.failtalms.tools import ALL_TOOLS, run
from undertow.env_core.families import ReportTable
from undertow.env_core.faults import PRESET_SETTINGS, not_applicable, with_mask
from undertow.env_core.model import Gold, Mask, PlannedCall, Scenario

FAMILY = "failtalms"
REQUESTS = "requests.jsonl"  # in the package's data/ folder
_TOOLS = {spec.name: spec for spec in ALL_TOOLS}


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Ref(_Record):
    """An argument taken from an earlier call's result when the library is built: ``ref`` is a path into the results
    (see :func:`pick`), formatted with ``template`` when given ("{} * 4" makes a calculator expression)."""

    ref: str
    template: str | None = None


Argument = StrictStr | StrictInt | StrictFloat | Ref


def _known_tool(tool: str) -> str:
    if tool not in _TOOLS:
        raise ValueError(f"no library tool is named {tool!r}")
    return tool


class Call(_Record):
    """One call of a request's plan: a library tool and its arguments (literals, or :class:`Ref` to earlier
    results)."""

    tool: Annotated[str, AfterValidator(_known_tool)]
    arguments: dict[str, Argument]


class Masked(_Record):
    """An under-specified variant: ``task`` is the request without the value ``tool.argument`` takes in the plan,
    ``phrase`` how the user says that value when asked."""

    task: str
    tool: str
    argument: str
    phrase: str


class Request(_Record):
    """One request of the library (a line of ``requests.jsonl``): ``calls`` serve it; ``answer`` are paths to the
    facts a right answer states; ``easy`` the planned tools a person could stand in for; ``masks`` its
    under-specified variants."""

    category: str
    task: str
    calls: list[Call] = Field(min_length=1)
    answer: list[str] = Field(min_length=1)
    easy: list[str] = []
    masks: list[Masked] = []

    @model_validator(mode="after")
    def _names_planned_calls(self) -> Request:
        planned = {call.tool for call in self.calls}
        unknown = sorted(set(self.easy) - planned)
        if unknown:
            raise ValueError(f"easy names tools the plan does not use: {unknown}")
        for mask in self.masks:
            if not any(call.tool == mask.tool and mask.argument in call.arguments for call in self.calls):
                raise ValueError(f"mask {mask.tool}.{mask.argument}: the plan has no such call argument")
        return self


def pick(results: Sequence[Any], path: str) -> Any:
    """The value at ``path`` in a plan's results: the call's index, then dict keys, list indexes, ``*`` (every item
    of a list) or ``key=value`` (the first row whose ``key`` reads ``value``), separated by dots."""
    head, *rest = path.split(".")
    return _walk(results[int(head)], rest, path)


def _walk(value: Any, steps: list[str], path: str) -> Any:
    for i, step in enumerate(steps):
        if step == "*":
            return [_walk(item, steps[i + 1 :], path) for item in value]
        if "=" in step:
            key, wanted = step.split("=", 1)
            value = next((row for row in value if str(row.get(key)) == wanted), None)
            if value is None:
                raise KeyError(f"{path}: no row with {key} = {wanted!r}")
        elif isinstance(value, list):
            value = value[int(step)]
        else:
            value = value[step]
    return value


def answer_of(results: Sequence[Any], paths: Sequence[str]) -> list[dict[str, Any]]:
    """The gold answer: one record holding the value of every path, keyed by the path's last field name (a repeated
    name gets a number: ``close``, ``close_2``)."""
    record: dict[str, Any] = {}
    for path in paths:
        name = next(s for s in reversed(path.split(".")) if not s.isdigit() and s != "*" and "=" not in s)
        key, n = name, 1
        while key in record:
            n += 1
            key = f"{name}_{n}"
        record[key] = pick(results, path)
    return [record]


def _resolve(value: Any, results: Sequence[Any]) -> Any:
    if not isinstance(value, Ref):
        return value
    found = pick(results, value.ref)
    return found if value.template is None else value.template.format(found)


def replay(calls: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[list[PlannedCall], list[Any]]:
    """Run calls in order, resolving each :class:`Ref` against the results so far: the literal plan and its
    results."""
    plan: list[PlannedCall] = []
    results: list[Any] = []
    for tool, arguments in calls:
        literal = {name: _resolve(value, results) for name, value in arguments.items()}
        results.append(run(tool, literal))
        plan.append(PlannedCall(tool=tool, arguments=literal))
    return plan, results


def build_gold(calls: Sequence[tuple[str, Mapping[str, Any]]], paths: Sequence[str]) -> Gold:
    """The gold of a request: its literal plan, and the answer read from what the plan returns."""
    plan, results = replay(calls)
    answer = answer_of(results, paths)
    # the oracle reports every fact the request asked for (the results of all its calls), not only the last result
    return Gold(answer=answer, plans=[plan], reports=[json.dumps(answer, ensure_ascii=False)])


def _mask(plan: list[PlannedCall], masked: Masked) -> Mask:
    """The mask's value is the argument of the first ``tool`` call whose value the masked text leaves out."""
    values = [c.arguments[masked.argument] for c in plan if c.tool == masked.tool and masked.argument in c.arguments]
    value = next((v for v in values if str(v).casefold() not in masked.task.casefold()), values[0])
    return Mask(task=masked.task, tool=masked.tool, argument=masked.argument, value=value, phrase=masked.phrase)


def scenario(number: int, request: Request) -> Scenario:
    """The scenario of a request, the ``number``-th of its category."""
    gold = build_gold([(call.tool, call.arguments) for call in request.calls], request.answer)
    tools = gold.solution_tools()
    return Scenario(
        id=f"{FAMILY}/{request.category.lower()}/{number:02d}",
        family=FAMILY,
        task=request.task,
        tools=tools,
        gold=gold,
        masks=[_mask(gold.plans[0], m) for m in request.masks],
        replaceable={tool: tool in request.easy for tool in tools},
        metadata={"category": request.category, "setting_source": "offline", "answer_paths": list(request.answer)},
    )


def mask_variants(base: Scenario) -> list[Scenario]:
    """Every hand-written mask of ``base`` after the first as a scenario of its own, already in the underspecified
    condition (``<id>/mask-2``, ...): the underspecified setting makes the first of ``base`` itself, so each mask
    is run once, as the paper runs every under-specified query it wrote (599 of them over 575 originals)."""
    return [
        with_mask(base, mask).model_copy(
            update={"id": f"{base.id}/mask-{k}", "condition": "underspecified", "variant_of": base.id, "masks": [mask]}
        )
        for k, mask in enumerate(base.masks[1:], start=2)
    ]


def read_requests(path: Path | None = None) -> list[Request]:
    """The library's requests (``data/requests.jsonl`` unless ``path``); a malformed line is a DataError naming the
    file, the line and the field."""
    return read_records(path or data_dir(__file__) / REQUESTS, Request)


def base_scenarios(path: Path | None = None) -> list[Scenario]:
    """Every request of the library, in file order, numbered within its category."""
    numbers: Counter[str] = Counter()
    scenarios = []
    for request in read_requests(path):
        numbers[request.category] += 1
        scenarios.append(scenario(numbers[request.category], request))
    return scenarios


def library_scenarios(path: Path | None = None) -> list[Scenario]:
    """The suite's scenarios: every request (:func:`base_scenarios`), each followed by its further masks
    (:func:`mask_variants`)."""
    return [scenario for base in base_scenarios(path) for scenario in (base, *mask_variants(base))]


def library_table(scenarios: Sequence[Scenario]) -> ReportTable:
    """What the offline library holds, per category: its tools and requests, the hand-written masks, and how many
    scenarios each FAIL-TaLMs condition runs (decided as a sweep decides it, by :func:`not_applicable`)."""

    def runs(condition: str) -> Counter[str]:
        setting = PRESET_SETTINGS[condition]
        return Counter(str(s.metadata.get("category")) for s in scenarios if not_applicable(s, setting) is None)

    requests = [s for s in scenarios if s.variant_of is None]
    tools = Counter(str(spec.binding.get("category")) for spec in ALL_TOOLS)
    counts = [
        Counter(str(s.metadata.get("category")) for s in requests),
        _per_category(requests, lambda s: len(s.masks)),
        runs("underspecified"),
        runs("replaceable"),
        runs("non_replaceable"),
        _per_category(
            requests,
            lambda s: all(not_applicable(s, PRESET_SETTINGS[c]) is None for c in ("replaceable", "non_replaceable")),
        ),
    ]
    table = ReportTable(
        title=f"{FAMILY} build: the offline library",
        columns=["category", "tools", "requests", "masks", "underspecified", "replaceable", "non_replaceable", "both"],
        right=[False] + [True] * 7,
    )
    for category in sorted(set(tools) | set(counts[0])):
        table.rows.append([category, str(tools[category]), *(str(c[category]) for c in counts)])
    table.rows.append(["all", str(len(ALL_TOOLS)), *(str(sum(c.values())) for c in counts)])
    table.sections = [len(table.rows) - 1]
    table.note = (
        "Each setting runs the scenarios it applies to: underspecified every hand-written mask once (a request's "
        "first mask on the request itself, the others as scenarios '<request>/mask-N'; a request without one an "
        "automatic mask); replaceable / non_replaceable every request with a planned tool of that kind, with the "
        "first such tool removed. A tool is flagged one kind or the other, so a (request, tool) pair is in one split "
        "only; 'both' counts the requests in both splits, each time with a different tool removed. perfect and "
        "no_tools run every request."
    )
    return table


def _per_category(scenarios: Sequence[Scenario], count: Callable[[Scenario], int]) -> Counter[str]:
    found: Counter[str] = Counter()
    for scenario in scenarios:
        found[str(scenario.metadata.get("category"))] += int(count(scenario))
    return found
