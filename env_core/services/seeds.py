"""The seed records the simulated services start from, read from this package's ``data/`` folder.

A data file is JSON Lines, one record a line: the record's stable fields (what it is: a key, a name, its ids), and
``values``, a list of dated snapshots of the fields that change over time (a price, a rating, a forecast)::

    {"key": "baixa_grand", "name": "Baixa Grand Hotel", ..., "values": [
        {"as_of": "2026-03-20", "nightly_price": 204.95, "rating": 8.7, "cancellation_policy": "..."}]}

A record model (a :class:`Seed`) names its changing fields in ``dated``; a snapshot holds exactly those (a field
with a default may be left out) and its ``as_of`` day. An episode's world is the reference day's (the simulated
clock's first day, ``TODAY``): a record's values are those of its latest snapshot on or before that day, so that
older snapshots can sit beside today's. A model with no changing fields (a message already sent) reads plain
records, without ``values``. A line that is not such a record is a :class:`~undertow.env_core.errors.DataError`
naming the file, the line and the field (``values.0.nightly_price``).

Below the loader, the record models and :class:`Tables`, the tables of every category (``stays``, ``restaurants``,
``locations``, ...) as of one day: ``tables(day)``, read once per day. A service reads the tables of its world's day
(``World.as_of``): today's in an episode's world, an earlier day's in the world a ``stale`` fault reads from
(``ServicesToolBox.snapshot``), where a record with no snapshot that early takes its earliest one (it existed; its
history before that is unknown). Counterpart services seed from the same table, so that a fallback reaches the same
facts. The upper-case names (``STAYS``, ``RESTAURANTS``, ``REVIEW_PLACES``) are today's tables. What a provider
keeps of its own is its module's (its ids) and :mod:`~undertow.env_core.services.histories`' (its history, its
account: ``data/histories/``).
"""

from __future__ import annotations

import functools
from datetime import date
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model

from undertow.env_core.content import data_dir, read_records
from undertow.env_core.errors import DataError
from undertow.env_core.services.base import TODAY as TODAY  # the reference day, re-exported

DATA = data_dir(__file__)

S = TypeVar("S", bound="Seed")


class Seed(BaseModel):
    """A seed record as the services use it: its stable fields and, for ``dated`` fields, the values of one day."""

    model_config = ConfigDict(extra="forbid")

    dated: ClassVar[tuple[str, ...]] = ()  # the fields whose values a data line keeps as dated snapshots


@functools.cache
def line_model(model: type[Seed]) -> type[BaseModel]:
    """The model of one data line of ``model``: its stable fields and ``values``, a non-empty list of snapshots
    (``as_of`` and the dated fields, with the record model's own types, bounds and defaults)."""
    if not model.dated:
        return model
    fields = model.model_fields
    missing = [name for name in model.dated if name not in fields]
    if missing:
        raise TypeError(f"{model.__name__}.dated names fields it does not have: {missing}")
    config = ConfigDict(extra="forbid")
    dated: dict[str, Any] = {name: (fields[name].annotation, fields[name]) for name in model.dated}
    snapshot = create_model(f"{model.__name__}Snapshot", __config__=config, as_of=(date, ...), **dated)
    stable: dict[str, Any] = {name: (info.annotation, info) for name, info in fields.items() if name not in model.dated}
    values = (list[snapshot], Field(min_length=1))  # type: ignore[valid-type]
    return create_model(f"{model.__name__}Line", __config__=config, values=values, **stable)


def read_seeds(path: Path, model: type[S], today: date = TODAY) -> tuple[S, ...]:
    """The records of a data file as ``model``, each with the values of its latest snapshot on or before ``today``
    (file order). A malformed line is a DataError naming the file, the line and the field; so is a record with no
    snapshot by ``today`` from the reference day on, while on an earlier day (a stale snapshot's) such a record takes
    its earliest snapshot."""
    lines = read_records(path, line_model(model))
    if not model.dated:
        return tuple(lines)  # type: ignore[arg-type]  # line_model(model) is model itself
    records: list[S] = []
    for number, line in zip(_line_numbers(path), lines, strict=True):
        days = [snapshot.as_of for snapshot in line.values]  # type: ignore[attr-defined]
        for i, day in enumerate(days):
            if day in days[:i]:
                raise DataError(
                    f"two snapshots of {day.isoformat()}", file=str(path), line=number, field=f"values.{i}.as_of"
                )
        snapshots = [s for s in line.values if s.as_of <= today]  # type: ignore[attr-defined]
        if not snapshots and today >= TODAY:
            raise DataError(
                f"no snapshot on or before {today.isoformat()}", file=str(path), line=number, field="values"
            )
        # before the reference day a record not yet dated then still existed: its earliest values stand for it
        earliest = min(line.values, key=lambda s: s.as_of)  # type: ignore[attr-defined]
        latest = max(snapshots, key=lambda s: s.as_of) if snapshots else earliest
        stable = line.model_dump(exclude={"values"})
        records.append(model.model_validate({**stable, **latest.model_dump(exclude={"as_of"}, exclude_unset=True)}))
    return tuple(records)


def table(name: str, model: type[S], day: date = TODAY) -> tuple[S, ...]:
    """The records of ``data/<name>.jsonl`` as of ``day``."""
    return read_seeds(DATA / f"{name}.jsonl", model, day)


def _line_numbers(path: Path) -> list[int]:
    """The numbers of a file's non-blank lines: the lines ``read_records`` reads, in order."""
    return [n for n, raw in enumerate(path.read_bytes().split(b"\n"), start=1) if raw.strip()]


class _Part(BaseModel):
    """A part of a seed record (a menu item, a delivery window)."""

    model_config = ConfigDict(extra="forbid")


# -------------------------------------------------------------------------------------------------------------------
# Lodging: the stays every lodging service lists


class Stay(Seed):
    """A hotel or an apartment every lodging service lists, with the same name, price and policy everywhere."""

    dated = ("nightly_price", "rating", "cancellation_policy")
    key: str
    name: str
    kind: Literal["hotel", "apartment"]
    city: str
    area: str
    address: str
    nightly_price: float
    rating: float
    max_guests: int
    amenities: list[str]
    cancellation_policy: str
    check_in_time: str
    check_out_time: str


# -------------------------------------------------------------------------------------------------------------------
# Rides: the places both ride services know, the fare table, the drivers


class Place(Seed):
    """A place both ride services know; where it is can change (the user moves home)."""

    dated = ("address", "lat", "lon")
    key: str
    name: str
    address: str
    lat: float
    lon: float
    aliases: list[str]


class FareClass(Seed):
    """A class of ride (standard, xl, premium) and its fares; the same table prices both services' products."""

    dated = ("base", "per_mile", "per_minute", "minimum")
    key: str
    base: float
    per_mile: float
    per_minute: float
    minimum: float
    seats: int


class Driver(Seed):
    dated = ("vehicle",)
    name: str
    vehicle: str


# -------------------------------------------------------------------------------------------------------------------
# Payments: the people every payment service knows


class Payee(Seed):
    """A person every payment service knows; how to reach them can change."""

    dated = ("email", "phone")
    key: str
    name: str
    email: str
    phone: str


# -------------------------------------------------------------------------------------------------------------------
# Trading: the quotes both brokerages show


class Quote(Seed):
    """A security's price as of the last close, the same at both brokerages."""

    dated = ("last_price", "prev_close", "quote_time")
    symbol: str
    name: str
    kind: Literal["stock", "etf"]
    last_price: float
    prev_close: float
    quote_time: str


# -------------------------------------------------------------------------------------------------------------------
# Food delivery: the restaurants and their menus


class MenuItem(_Part):
    key: str
    name: str
    price: float
    description: str


class Restaurant(Seed):
    """A restaurant every food delivery service lists, with the same menu and prices."""

    dated = ("rating", "delivery_eta", "menu")
    key: str
    name: str
    cuisine: str
    tags: list[str]
    rating: float
    delivery_eta: str
    address: str
    menu: list[MenuItem]
    ids: dict[str, str]  # each service's id for the restaurant, by service name


# -------------------------------------------------------------------------------------------------------------------
# Retail and groceries: the products, the grocery stores with their items and delivery windows


class Product(Seed):
    """A product a retailer sells (or a store's grocery item), at the same price everywhere."""

    dated = ("price", "rating", "in_stock")
    key: str
    name: str
    price: float
    rating: float
    description: str
    in_stock: bool = True


class Window(_Part):
    """A delivery window: its start and end (UTC) and whether it can still be reserved."""

    start: str
    end: str
    available: bool


class GroceryStore(Seed):
    """A store both grocery services shop at."""

    dated = ("items", "windows")
    key: str
    name: str
    items: list[Product]
    windows: list[Window]


# -------------------------------------------------------------------------------------------------------------------
# Mail: the user's contacts, inbox and sent messages


class Correspondent(Seed):
    """One of the user's contacts (``note``: who they are to the user)."""

    dated = ("email", "note")
    key: str
    name: str
    email: str
    note: str


class Received(Seed):
    key: str
    from_name: str
    from_email: str
    subject: str
    body: str
    received_at: str


class Sent(Seed):
    key: str
    to: list[str]
    subject: str
    body: str
    sent_at: str


# -------------------------------------------------------------------------------------------------------------------
# Calendars: the entries on the user's primary calendar


class Entry(Seed):
    """An entry on the user's primary calendar (local time, YYYY-MM-DDTHH:MM); it can be moved or renamed."""

    dated = ("title", "start", "end", "location", "attendees")
    key: str
    title: str
    start: str
    end: str
    location: str
    attendees: list[str]


# -------------------------------------------------------------------------------------------------------------------
# Weather: the places forecast for, the facts the scenarios rest on, the alerts


class Location(Seed):
    """A place the providers forecast for: the names people use for it, whether the NWS covers it (US only), its
    normal high and low (F) and each provider's id for it."""

    dated = ("high", "low")
    key: str
    name: str
    aliases: list[str]
    us: bool
    woeid: str
    accu: str
    high: int
    low: int


class ForecastFact(Seed):
    """A day's forecast at a location that the scenarios (the workflows and the paper's trace cards) rest on."""

    dated = ("condition", "high_f", "low_f", "precip_chance")
    location: str
    date: str
    condition: str
    high_f: int
    low_f: int
    precip_chance: int


class HourSpan(_Part):
    """Hours (inclusive) whose condition differs from the day's."""

    first: int
    last: int
    condition: str
    precip_chance: int


class HourlyFact(Seed):
    dated = ("spans",)
    location: str
    date: str
    spans: list[HourSpan]


class Alert(Seed):
    dated = ("severity", "summary", "issued", "expires", "crest", "instructions")
    key: str
    location: str
    event: str
    area: str
    zones: list[str]
    office: str
    severity: str
    summary: str
    issued: str
    expires: str
    crest: str
    instructions: str


# -------------------------------------------------------------------------------------------------------------------
# Reviews: the places reviewed (each with every provider's id) and their reviews


class ReviewPlace(Seed):
    """A place the review providers list, with each provider's id for it (``ids``: provider -> id)."""

    dated = ("rating", "review_count")
    key: str
    name: str
    city: str
    address: str
    category: str
    tags: list[str]
    price: str
    ids: dict[str, str]
    rating: float
    review_count: int


class ReviewSeed(Seed):
    """A review of a place (``place``: its key); ``n`` numbers it among the place's reviews."""

    dated = ("helpful",)
    place: str
    n: int
    author: str
    rating: int
    date: str
    text: str
    helpful: int


# -------------------------------------------------------------------------------------------------------------------
# News: the stories both providers carry


NewsSection = Literal["world", "us", "business", "technology", "sports"]


class Story(Seed):
    dated = ("title", "summary", "body")
    key: str
    section: NewsSection
    author: str
    published_at: str
    outlet: str
    title: str
    summary: str
    body: str


# -------------------------------------------------------------------------------------------------------------------
# Every table as of one day


class Tables:
    """The seed tables as of one day (``tables(day)``): each category's records with that day's values, and the
    lookups built on them (fare classes by key, forecast facts by location and date)."""

    def __init__(self, day: date):
        self.day = day
        self.stays = table("stays", Stay, day)
        self.ride_places = table("ride_places", Place, day)
        self.fare_classes = {fare_class.key: fare_class for fare_class in table("fare_classes", FareClass, day)}
        self.drivers = table("drivers", Driver, day)
        self.payees = table("payment_contacts", Payee, day)
        self.quotes = table("quotes", Quote, day)
        self.restaurants = table("restaurants", Restaurant, day)
        self.products = table("products", Product, day)
        self.grocery_stores = table("grocery_stores", GroceryStore, day)
        self.correspondents = table("mail_contacts", Correspondent, day)
        self.inbox = table("inbox", Received, day)
        self.sent = table("sent", Sent, day)
        self.events = table("events", Entry, day)
        self.locations = table("locations", Location, day)
        self.forecast_facts = {(f.location, f.date): f for f in table("forecast_facts", ForecastFact, day)}
        # Napa's Saturday storms: hours whose condition differs from the day's
        self.hourly_facts = {(f.location, f.date): f.spans for f in table("hourly_facts", HourlyFact, day)}
        self.alerts = table("alerts", Alert, day)
        self.review_places = table("review_places", ReviewPlace, day)
        self.reviews = table("reviews", ReviewSeed, day)
        self.stories = table("stories", Story, day)


@functools.cache
def tables(day: date = TODAY) -> Tables:
    """The seed tables as of ``day``, read once per day (a service reads its world's: ``tables(world.as_of)``)."""
    return Tables(day)


# Today's tables, where a service needs a record that does not change from day to day (its ids, its name) outside
# any world; a service at run time reads its world's day instead.
_TODAY = tables()
STAYS = _TODAY.stays
RESTAURANTS = _TODAY.restaurants
REVIEW_PLACES = _TODAY.review_places
