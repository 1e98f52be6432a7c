"""Gold sequences (Live API-Bench §3, appendix D): a ``QueryPlan`` as the chain of SLOT or SEL calls that answers the
question, each storing call reading the label of the one before, and the labels the tool box gives those calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from undertow.env_core.liveapi.plan import Aggregate, QueryPlan, transforms
from undertow.env_core.liveapi.vocabulary import STARTING_TABLE, aggregate_getter_name, getter_name, label_prefix


@dataclass(frozen=True)
class GoldCall:
    """One call of a gold sequence."""

    tool: str
    arguments: dict[str, Any]
    label: str | None  # where the toolbox stores the output; None for data-returning calls


class _Chain:
    """Builds a gold sequence: labels by the shared counter, each storing call reading the previous one's output."""

    def __init__(self) -> None:
        self.calls: list[GoldCall] = []
        self.source = f"${STARTING_TABLE}$"
        self.stored = 0

    def store(self, tool: str, **arguments: Any) -> None:
        prefix = label_prefix(tool)
        assert prefix is not None, tool
        label = f"{prefix}_{self.stored}"
        self.stored += 1
        self.calls.append(GoldCall(tool, {"data_source": self.source, **arguments}, label))
        self.source = f"${label}$"

    def fetch(self, tool: str, **arguments: Any) -> None:
        self.calls.append(GoldCall(tool, {"data_source": self.source, **arguments}, None))


def _aggregate_arguments(aggregate: Aggregate) -> dict[str, Any]:
    return {} if aggregate.key is None else {"key_name": aggregate.key}


def slot_sequence(plan: QueryPlan) -> list[GoldCall]:
    """The SLOT gold calls: transforms, filters, grouping, aggregates, sorts (last key first), retrieve_data."""
    chain = _Chain()
    for t in transforms(plan):
        chain.store("transform_data", key_name=t.key, operation_type=t.operation, operation_args=dict(t.args))
    for f in plan.filters:
        chain.store("filter_data", key_name=f.key, condition=f.condition, value=f.value)
    if plan.group_by is not None:
        chain.store("group_data_by", key_name=plan.group_by)
    for a in plan.aggregates:
        chain.store("aggregate_data", aggregation_type=a.aggregation, **_aggregate_arguments(a))
    for key, ascending in reversed(plan.order):  # stable sorts: the first ORDER BY key is applied last
        chain.store("sort_data", key_name=key, ascending=ascending)
    key_name: str | list[str] = plan.select[0] if len(plan.select) == 1 else list(plan.select)
    chain.fetch(
        "retrieve_data", key_name=key_name, distinct=plan.distinct, limit=-1 if plan.limit is None else plan.limit
    )
    return chain.calls


def sel_sequence(plan: QueryPlan) -> list[GoldCall]:
    """The SEL gold calls: the SLOT chain with categorical arguments bound into the tool names, then
    select_unique_values (DISTINCT), limit_data (LIMIT) and one getter per selected key: a column's own getter,
    or the getter of the aggregation that computed it."""
    chain = _Chain()
    for t in transforms(plan):
        chain.store(f"transform_data_{t.operation}", key_name=t.key, **t.args)
    for f in plan.filters:
        chain.store(f"select_data_{f.condition}", key_name=f.key, value=f.value)
    if plan.group_by is not None:
        chain.store("group_data_by", key_name=plan.group_by)
    for a in plan.aggregates:
        chain.store(f"aggregate_data_{a.aggregation}", **_aggregate_arguments(a))
    for key, ascending in reversed(plan.order):
        chain.store("sort_data_ascending" if ascending else "sort_data_descending", key_name=key)
    if plan.distinct:
        chain.store("select_unique_values", key_name=list(plan.select))
    if plan.limit is not None:
        chain.store("limit_data", n=plan.limit)
    outputs = {a.output: a.aggregation for a in plan.aggregates}
    for key in plan.select:
        chain.fetch(aggregate_getter_name(outputs[key]) if key in outputs else getter_name(key))
    return chain.calls


def labels_of(calls: list[GoldCall]) -> list[str | None]:
    """The label the toolbox gives each call (shared counter over storing calls); None for data-returning calls."""
    labels: list[str | None] = []
    stored = 0
    for call in calls:
        prefix = label_prefix(call.tool)
        if prefix is None:
            labels.append(None)
        else:
            labels.append(f"{prefix}_{stored}")
            stored += 1
    return labels
