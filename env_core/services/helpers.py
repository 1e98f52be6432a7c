"""What the simulated services' tools share: the one rounding of money, the errors an agent reads (``invalid``,
``conflict``, ``not_found``), looking a record up by id, cancelling one, adding to a saved list, and reading the
arguments tools take alike (order lines, times, search text)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, TypeVar

from pydantic import Field

from undertow.env_core.tools import ToolExecutionError
from undertow.env_core.untrusted import capped

R = TypeVar("R")


def money(value: Decimal | float) -> float:
    """Round to cents, half up (the way a receipt does), whatever the binary float says: the one rounding of every
    service."""
    return float(Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def invalid(message: str) -> ToolExecutionError:
    return ToolExecutionError(message, "invalid_request")


def conflict(message: str) -> ToolExecutionError:
    return ToolExecutionError(message, "conflict")


def find(records: Mapping[str, R], key: str, what: str) -> R:
    """The record ``key`` names, or the not_found error for a ``what`` of that id."""
    found = records.get(key)
    if found is None:
        raise not_found(what, key)
    return found


def cancel(record: Any, what: str, record_id: str, cancellable: Collection[str]) -> None:
    """Mark a record (an order, a ride, a transfer) cancelled, or refuse (conflict) when its status is not one
    that can be cancelled."""
    if record.status not in cancellable:
        raise conflict(f"{what} {record_id} is {record.status} and cannot be cancelled")
    record.status = "cancelled"


def add_new(saved: list[str], keys: Iterable[str]) -> list[str]:
    """Append to a saved list the keys it lacks, in order and once each; returns those appended."""
    added = [key for key in dict.fromkeys(keys) if key not in saved]
    saved.extend(added)
    return added


def line_items(what: str, id_field: str) -> dict[str, Any]:
    """The JSON schema of a list of {id, quantity} lines (a cart or an order)."""
    return {
        "items": {
            "type": "object",
            "properties": {
                id_field: {"type": "string", "description": f"The {what}'s id"},
                "quantity": {"type": "integer", "minimum": 1, "description": "How many"},
            },
            "required": [id_field, "quantity"],
        }
    }


def lines_field(head: str, what: str, id_field: str, source: str) -> Any:
    """The field of an argument that lists order lines (``{id_field: ..., "quantity": ...}``, ids of ``what`` from
    the tool ``source``): a cart's or an order's items, typed ``Annotated[list[dict[str, Any]], lines_field(...)]``.
    ``head`` starts its description ("Products to add")."""
    description = f"{head}, each {{'{id_field}': ..., 'quantity': ...}} with ids from {source}"
    return Field(description=description, json_schema_extra=line_items(what, id_field))


def parse_lines(items: list[dict[str, Any]], id_field: str, known: dict[str, Any], what: str) -> dict[str, int]:
    """Quantities by id from order lines; an empty list or an unknown id is an invalid_request naming the valid
    ids, so that the agent can repair the call."""
    valid = ", ".join(sorted(known))
    if not items:
        raise invalid(f"no items given; add at least one {what} by {id_field} ({valid})")
    quantities: dict[str, int] = {}
    for line in items:
        key, quantity = line.get(id_field), line.get("quantity", 1)
        if not isinstance(key, str) or key not in known:
            raise invalid(f"unknown {id_field} {key!r}; valid ids: {valid}")
        if not isinstance(quantity, int) or isinstance(quantity, bool) or not 1 <= quantity <= 50:
            raise invalid(f"quantity of {key} must be a whole number from 1 to 50")
        quantities[key] = quantities.get(key, 0) + quantity
    return quantities


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def normalized(text: str) -> str:
    """Text as searches compare it: lower case, single spaces, commas kept tight (``napa,  CA`` -> ``napa, ca``)."""
    return " ".join(text.lower().replace(",", " , ").split()).replace(" ,", ",")


def not_found(what: str, key: object) -> ToolExecutionError:
    """The error every service raises for an id or name it does not know (a long one quoted short)."""
    return ToolExecutionError(f"{what} {(capped(key) if isinstance(key, str) else key)!r} not found", "not_found")


def searched(text: str, refusal: str) -> str:
    """What a search looks for: the text trimmed and in lower case; nothing at all is an invalid_request that says
    ``refusal``."""
    wanted = text.strip().lower()
    if not wanted:
        raise invalid(refusal)
    return wanted
