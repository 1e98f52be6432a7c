"""What each provider holds of its own when an episode starts, read from ``data/histories/``: its account's past
(bookings, rides, orders, payments), its standing (a balance, positions, a cart, a saved list) and its own setup
(its calendars, a pickup store).

A file holds one kind of record, each line naming the ``service`` that holds it; the rest of the line is the record
as that service's state keeps it (the :mod:`~undertow.env_core.services.states` model, field for field), with the
fields that change over time (an order's status, a balance, a cart, a store's slots) as dated snapshots, read as of
the reference day like every seed record (:func:`~undertow.env_core.services.seeds.read_seeds`)::

    {"service": "uber", "ride_id": "uber_ride_0311", "pickup": "Home", ..., "values": [
        {"as_of": "2026-03-14", "status": "completed"}]}

A provider reads its records with :func:`held` (the state's records) or :func:`standing` (its one account line).
"""

from __future__ import annotations

import functools
from typing import TypeVar, cast

from pydantic import BaseModel

from undertow.env_core.services.seeds import DATA, Seed, read_seeds
from undertow.env_core.services.states import (
    CalendarEvent,
    CalendarInfo,
    FoodOrder,
    Payment,
    PickupOrder,
    Reservation,
    RetailOrder,
    Ride,
    Store,
    TradeOrder,
)

HISTORIES = DATA / "histories"

H = TypeVar("H", bound="Held")
R = TypeVar("R", bound=BaseModel)


class Held(Seed):
    """A record one provider holds (``service``: its name)."""

    service: str


def history(name: str, model: type[H]) -> tuple[H, ...]:
    """The records of ``data/histories/<name>.jsonl`` as of today."""
    return read_seeds(HISTORIES / f"{name}.jsonl", model)


def held(records: tuple[Held, ...], service: str, model: type[R]) -> list[R]:
    """The records ``service`` holds, as its state's ``model``, in file order."""
    return [model.model_validate(r.model_dump(exclude={"service"})) for r in records if r.service == service]


def standing(records: tuple[H, ...], service: str) -> H:
    """The one record of ``service`` in an account table (its balance, its cart, its saved list)."""
    found = [r for r in records if r.service == service]
    if len(found) != 1:
        raise LookupError(f"{service} has {len(found)} records in an account table, not one")
    return found[0]


# -------------------------------------------------------------------------------------------------------------------
# The past: what the account did before the episode (an order's status can still change)


class Past(Held):
    """A record of the account's past (a booking, a ride, an order, a payment): its status can still change."""

    dated = ("status",)


@functools.cache
def past(record: type[BaseModel]) -> type[Past]:
    """The data line model of a state ``record`` kept from the past: the record's fields and the ``service`` holding
    it, with the status dated."""
    return cast(type[Past], type(f"Past{record.__name__}", (Past, record), {"__module__": __name__}))


BOOKINGS = history("bookings", past(Reservation))  # stays no longer listed: their stay_id is "archived"
RIDES = history("rides", past(Ride))
FOOD_ORDERS = history("food_orders", past(FoodOrder))
RETAIL_ORDERS = history("retail_orders", past(RetailOrder))
PICKUP_ORDERS = history("pickup_orders", past(PickupOrder))  # its ready_at decides which slots may be reserved
PAYMENTS = history("payments", past(Payment))
MONEY_REQUESTS = history("money_requests", past(Payment))  # requests still open
TRADE_ORDERS = history("trade_orders", past(TradeOrder))


# -------------------------------------------------------------------------------------------------------------------
# The standing: what an account holds now


class PaymentAccount(Held):
    dated = ("balance",)
    balance: float


class BrokerageAccount(Held):
    dated = ("buying_power", "positions", "watchlist")
    buying_power: float
    positions: dict[str, int]  # shares by symbol
    watchlist: list[str]


class Cart(Held):
    """A cart's lines: quantities by the service's product id."""

    dated = ("cart",)
    cart: dict[str, int]


class SavedList(Held):
    """The user's saved list at a service (places, locations, stories: the keys or names the service keeps)."""

    dated = ("saved",)
    saved: list[str]


PAYMENT_ACCOUNTS = history("payment_accounts", PaymentAccount)
BROKERAGE_ACCOUNTS = history("brokerage_accounts", BrokerageAccount)
CARTS = history("carts", Cart)
SAVED_LISTS = history("saved_lists", SavedList)


def cart_of(service: str) -> dict[str, int]:
    """What is in the service's cart."""
    return dict(standing(CARTS, service).cart)


def saved_of(service: str) -> list[str]:
    """The user's saved list at the service."""
    return list(standing(SAVED_LISTS, service).saved)


# -------------------------------------------------------------------------------------------------------------------
# The setup: a provider's own calendars and their fixed events, a pickup store and its slots


class Calendar(Held, CalendarInfo):
    pass


class CalendarFixture(Held, CalendarEvent):
    """An event on a provider's own calendar (a public holiday on its read-only holiday calendar)."""


class PickupStore(Held, Store):
    dated = ("slots",)


CALENDARS = history("calendars", Calendar)
CALENDAR_EVENTS = history("calendar_events", CalendarFixture)
PICKUP_STORES = history("pickup_stores", PickupStore)
