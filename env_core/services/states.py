"""The per-episode state of the simulated services: what each service's tools read and write.

Each service's ``State`` is one of these models (``LodgingState``, ``MailState``, ...), seeded by its
``initial_state`` from the seed records (:mod:`~undertow.env_core.services.seeds`) and the service's own history
(past bookings, past orders: :mod:`~undertow.env_core.services.histories`), and copied for every episode. The
records they hold (a reservation, a ride, a payment) are what the tools show, dumped in field order.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from undertow.env_core.services.seeds import GroceryStore, Product, Restaurant, Stay


class Record(BaseModel):
    """A state record: no field beyond its own."""

    model_config = ConfigDict(extra="forbid")


# -------------------------------------------------------------------------------------------------------------------
# Lodging


class Reservation(Record):
    booking_id: str
    stay_id: str
    name: str
    city: str
    check_in: str
    check_out: str
    guests: int
    nights: int
    total_price: float
    status: Literal["confirmed", "cancelled"]
    created_at: str


class LodgingState(Record):
    stays: dict[str, Stay]  # by the service's own id
    bookings: dict[str, Reservation]
    saved: list[str] = Field(default_factory=list)  # stay ids on the user's saved list (wishlist)


# -------------------------------------------------------------------------------------------------------------------
# Rides


class Ride(Record):
    ride_id: str
    pickup: str
    dropoff: str
    product: str
    fare: float
    status: Literal["driver_assigned", "completed", "cancelled"]
    driver: str
    vehicle: str
    requested_at: str


class RidesState(Record):
    rides: dict[str, Ride]
    saved_places: list[str]  # place keys


# -------------------------------------------------------------------------------------------------------------------
# Payments


class Contact(Record):
    contact_id: str
    name: str
    email: str
    phone: str
    username: str | None = None


class Payment(Record):
    """A transfer, payment or money request: one shape for the three services, each naming its id its own way."""

    id: str
    contact_id: str
    name: str
    amount: float
    note: str
    status: Literal["pending", "completed", "cancelled", "declined"]
    created_at: str


class PaymentsState(Record):
    balance: float
    contacts: dict[str, Contact]
    payments: dict[str, Payment]
    requests: dict[str, Payment] = Field(default_factory=dict)


# -------------------------------------------------------------------------------------------------------------------
# Trading


class TradeOrder(Record):
    order_id: str
    symbol: str
    side: Literal["buy", "sell"]
    quantity: int
    order_type: Literal["market", "limit"]
    limit_price: float | None
    status: Literal["queued", "open", "filled", "cancelled"]
    placed_at: str


class TradingState(Record):
    buying_power: float
    positions: dict[str, int]
    orders: dict[str, TradeOrder]
    watchlist: list[str]


# -------------------------------------------------------------------------------------------------------------------
# Food delivery


class OrderLine(Record):
    item_id: str
    name: str
    quantity: int
    unit_price: float
    line_total: float


class FoodOrder(Record):
    order_id: str
    restaurant_id: str
    restaurant_name: str
    items: list[OrderLine]
    subtotal: float
    service_fee: float
    tax: float
    total: float
    status: Literal["placed", "delivered", "cancelled"]
    placed_at: str


class FoodState(Record):
    restaurants: dict[str, Restaurant]  # by the service's restaurant id
    orders: dict[str, FoodOrder]


# -------------------------------------------------------------------------------------------------------------------
# Retail


class RetailOrder(Record):
    order_id: str
    items: list[dict[str, Any]]
    subtotal: float
    shipping: float
    total: float
    shipping_speed: str
    status: Literal["placed", "shipped", "delivered"]
    placed_at: str


class AmazonState(Record):
    products: dict[str, Product]
    cart: dict[str, int]
    orders: dict[str, RetailOrder]


class Slot(Record):
    slot_id: str
    start: str
    end: str
    available: bool = True


class PickupOrder(Record):
    order_id: str
    store_id: str
    items: list[dict[str, Any]]
    total: float
    status: Literal["preparing", "ready", "picked_up"]
    ready_at: str
    pickup_slot_id: str | None = None


class Store(Record):
    store_id: str
    name: str
    address: str
    slots: list[Slot]


class WalmartState(Record):
    products: dict[str, Product]
    cart: dict[str, int]
    stores: dict[str, Store]
    orders: dict[str, PickupOrder]


# -------------------------------------------------------------------------------------------------------------------
# Groceries


class DeliveryReservation(Record):
    reservation_id: str
    slot_id: str
    store: str
    start: str
    end: str
    fee: float
    reserved_at: str


class GroceryState(Record):
    stores: dict[str, GroceryStore]
    slots: dict[str, tuple[str, str, str, bool]]  # slot id -> (store key, start, end, available)
    cart: dict[str, int]
    reservation: DeliveryReservation | None = None


# -------------------------------------------------------------------------------------------------------------------
# Mail


class MailMessage(Record):
    message_id: str
    folder: str  # "inbox" or "sent"
    from_name: str
    from_email: str
    to: list[str]
    subject: str
    body: str
    timestamp: str  # received_at for inbox, sent_at for sent


class MailContact(Record):
    contact_id: str
    name: str
    email: str
    note: str


class MailState(Record):
    address: str
    messages: list[MailMessage]
    contacts: list[MailContact]


# -------------------------------------------------------------------------------------------------------------------
# Calendars


class CalendarInfo(Record):
    calendar_id: str
    name: str
    primary: bool
    read_only: bool
    timezone: str = "America/Los_Angeles"


class CalendarEvent(Record):
    event_id: str
    calendar_id: str
    title: str
    start: str  # local time, YYYY-MM-DDTHH:MM
    end: str
    location: str = ""
    attendees: list[str] = Field(default_factory=list)
    status: str = "confirmed"
    created_at: str = "2026-03-01T12:00:00Z"


class CalendarState(Record):
    calendars: list[CalendarInfo]
    events: list[CalendarEvent]


# -------------------------------------------------------------------------------------------------------------------
# Weather


class SavedLocationsState(Record):
    saved: list[str]  # display names of saved locations, in the order they were added


class NoState(Record):
    """A read-only service keeps nothing per episode."""


class FavoritesState(Record):
    favorites: list[str]  # display names


# -------------------------------------------------------------------------------------------------------------------
# Reviews


class Review(Record):
    review_id: str
    place_key: str
    author: str
    rating: int
    date: str
    text: str
    helpful_count: int


class ReviewsState(Record):
    reviews: list[Review]
    votes: list[str]  # review ids the user marked helpful
    saved: list[str]  # place keys on the user's list


# -------------------------------------------------------------------------------------------------------------------
# News


class NewsState(Record):
    saved: list[str]  # story keys, in the order saved
