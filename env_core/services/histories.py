"""What each provider holds of its own when an episode starts, read from ``data/histories/``: its account's past
(bookings, rides, orders, payments), its standing (a balance, positions, a cart, a saved list) and its own setup
(its calendars, a pickup store).

A file holds one kind of record, each line naming the ``service`` that holds it; the rest of the line is the record
as that service's state keeps it (the :mod:`~undertow.env_core.services.states` model, field for field), with the
fields that change over time (an order's status, a balance, a cart, a store's slots) as dated snapshots, read as of
the reference day like every seed record (:func:`~undertow.env_core.services.seeds.read_seeds`)::

    {"service": "uber", "ride_id": "uber_ride_0311", "pickup": "Home", ..., "values": [
        {"as_of": "2026-03-14", "status": "completed"}]}

A provider reads its records with :func:`held` (the state's records) or :func:`standing` (its one account line),
from :class:`Histories`, every file as of one day: ``histories(day)``, its world's day (``World.as_of``), as the seed
tables are read (:func:`~undertow.env_core.services.seeds.tables`).
"""

from __future__ import annotations

import functools
from datetime import date
from typing import TypeVar, cast

from pydantic import BaseModel

from undertow.env_core.services.seeds import DATA, TODAY, Seed, read_seeds
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


def history(name: str, model: type[H], day: date = TODAY) -> tuple[H, ...]:
    """The records of ``data/histories/<name>.jsonl`` as of ``day``."""
    return read_seeds(HISTORIES / f"{name}.jsonl", model, day)


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


def cart_of(service: str, day: date = TODAY) -> dict[str, int]:
    """What is in the service's cart on ``day``."""
    return dict(standing(histories(day).carts, service).cart)


def saved_of(service: str, day: date = TODAY) -> list[str]:
    """The user's saved list at the service on ``day``."""
    return list(standing(histories(day).saved_lists, service).saved)


# -------------------------------------------------------------------------------------------------------------------
# The setup: a provider's own calendars and their fixed events, a pickup store and its slots


class Calendar(Held, CalendarInfo):
    pass


class CalendarFixture(Held, CalendarEvent):
    """An event on a provider's own calendar (a public holiday on its read-only holiday calendar)."""


class PickupStore(Held, Store):
    dated = ("slots",)


# -------------------------------------------------------------------------------------------------------------------
# Every file as of one day


class Histories:
    """Every provider's records as of one day (``histories(day)``)."""

    def __init__(self, day: date):
        self.day = day
        self.bookings = history("bookings", past(Reservation), day)  # stays no longer listed: stay_id "archived"
        self.rides = history("rides", past(Ride), day)
        self.food_orders = history("food_orders", past(FoodOrder), day)
        self.retail_orders = history("retail_orders", past(RetailOrder), day)
        # a pickup order's ready_at decides which slots may be reserved
        self.pickup_orders = history("pickup_orders", past(PickupOrder), day)
        self.payments = history("payments", past(Payment), day)
        self.money_requests = history("money_requests", past(Payment), day)  # requests still open
        self.trade_orders = history("trade_orders", past(TradeOrder), day)
        self.payment_accounts = history("payment_accounts", PaymentAccount, day)
        self.brokerage_accounts = history("brokerage_accounts", BrokerageAccount, day)
        self.carts = history("carts", Cart, day)
        self.saved_lists = history("saved_lists", SavedList, day)
        self.calendars = history("calendars", Calendar, day)
        self.calendar_events = history("calendar_events", CalendarFixture, day)
        self.pickup_stores = history("pickup_stores", PickupStore, day)


@functools.cache
def histories(day: date = TODAY) -> Histories:
    """Every provider's records as of ``day``, read once per day."""
    return Histories(day)


histories()  # today's, read when the package is imported: a malformed file fails there, naming itself
