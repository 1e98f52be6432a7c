"""Travel & lodging services: hotel and rental booking (Booking.com, Expedia, Airbnb) and ride hailing (Uber, Lyft).

The lodging services list one shared catalog of stays (``STAYS``; Airbnb only its apartments) at the same prices, and
the ride services price trips between the same known places (``PLACES``) with the same fare table, so that a
fallback from one service to its counterpart reaches the same facts.
"""

from __future__ import annotations

import math
import re
from datetime import date
from typing import Annotated, Any, ClassVar, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from undertow.env_core.services.base import (
    Call,
    Category,
    Lookup,
    Service,
    Write,
    invalid,
    money,
    not_found,
    shown,
    tool,
)
from undertow.env_core.tools import ToolExecutionError

DOMAIN = "travel & lodging"


def parse_day(text: str, what: str) -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise invalid(f"{what} {text!r} is not a date in YYYY-MM-DD form") from None


# ---------------------------------------------------------------------------------------------------------------
# Lodging


class Stay(BaseModel):
    model_config = ConfigDict(extra="forbid")

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


FREE_48H = "Free cancellation until 48 hours before check-in"
FREE_7D = "Free cancellation until 7 days before check-in"
NON_REFUNDABLE = "Non-refundable"

# The one catalog every lodging service seeds from (same names, prices and policies everywhere).
STAYS: tuple[Stay, ...] = (
    Stay(
        key="midtown_suites",
        name="Manhattan Midtown Suites",
        kind="hotel",
        city="New York, NY",
        area="Midtown Manhattan",
        address="151 W 54th St, New York, NY 10019",
        nightly_price=289.45,
        rating=8.6,
        max_guests=3,
        amenities=["free wifi", "fitness center", "kitchenette"],
        cancellation_policy=FREE_48H,
        check_in_time="15:00",
        check_out_time="11:00",
    ),
    Stay(
        key="manhattan_beacon",
        name="The Manhattan Beacon Hotel",
        kind="hotel",
        city="New York, NY",
        area="Upper West Side, Manhattan",
        address="2130 Broadway, New York, NY 10023",
        nightly_price=342.75,
        rating=9.1,
        max_guests=4,
        amenities=["free wifi", "restaurant", "rooftop bar", "24-hour front desk"],
        cancellation_policy=FREE_48H,
        check_in_time="16:00",
        check_out_time="12:00",
    ),
    Stay(
        key="budget_midtown",
        name="Budget Midtown",
        kind="hotel",
        city="New York, NY",
        area="Midtown Manhattan",
        address="340 W 40th St, New York, NY 10018",
        nightly_price=171.35,
        rating=7.2,
        max_guests=2,
        amenities=["free wifi"],
        cancellation_policy=NON_REFUNDABLE,
        check_in_time="15:00",
        check_out_time="10:00",
    ),
    Stay(
        key="chelsea_garden",
        name="Chelsea Garden Apartment",
        kind="apartment",
        city="New York, NY",
        area="Chelsea, Manhattan",
        address="412 W 22nd St, New York, NY 10011",
        nightly_price=236.15,
        rating=8.9,
        max_guests=4,
        amenities=["kitchen", "washer", "free wifi", "garden"],
        cancellation_policy=FREE_7D,
        check_in_time="16:00",
        check_out_time="11:00",
    ),
    Stay(
        key="brooklyn_heights_inn",
        name="Brooklyn Heights Inn",
        kind="hotel",
        city="New York, NY",
        area="Brooklyn Heights, Brooklyn",
        address="148 Clinton St, Brooklyn, NY 11201",
        nightly_price=159.85,
        rating=8.1,
        max_guests=2,
        amenities=["free wifi", "breakfast included"],
        cancellation_policy=FREE_48H,
        check_in_time="15:00",
        check_out_time="11:00",
    ),
    Stay(
        key="alfama_loft",
        name="Alfama Riverside Loft",
        kind="apartment",
        city="Lisbon, Portugal",
        area="Alfama",
        address="Rua de Sao Miguel 24, 1100-544 Lisbon",
        nightly_price=142.65,
        rating=9.3,
        max_guests=4,
        amenities=["kitchen", "river view", "free wifi", "washer"],
        cancellation_policy=FREE_7D,
        check_in_time="16:00",
        check_out_time="11:00",
    ),
    Stay(
        key="principe_real_studio",
        name="Principe Real Studio",
        kind="apartment",
        city="Lisbon, Portugal",
        area="Principe Real",
        address="Rua da Escola Politecnica 71, 1250-099 Lisbon",
        nightly_price=118.35,
        rating=8.8,
        max_guests=2,
        amenities=["kitchenette", "free wifi", "balcony"],
        cancellation_policy=FREE_7D,
        check_in_time="15:00",
        check_out_time="10:00",
    ),
    Stay(
        key="baixa_grand",
        name="Baixa Grand Hotel",
        kind="hotel",
        city="Lisbon, Portugal",
        area="Baixa",
        address="Rua Augusta 180, 1100-053 Lisbon",
        nightly_price=204.95,
        rating=8.7,
        max_guests=3,
        amenities=["free wifi", "restaurant", "spa"],
        cancellation_policy=FREE_48H,
        check_in_time="14:00",
        check_out_time="12:00",
    ),
)


class StayDates(TypedDict):
    """A booking request's dates and party size, as the booking tools take them."""

    check_in: str
    check_out: str
    guests: int


MANHATTAN: StayDates = {"check_in": "2026-04-07", "check_out": "2026-04-09", "guests": 2}
LISBON: StayDates = {"check_in": "2026-05-14", "check_out": "2026-05-17", "guests": 2}


def stay(key: str) -> Stay:
    return next(s for s in STAYS if s.key == key)


class Reservation(BaseModel):
    model_config = ConfigDict(extra="forbid")

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


class LodgingState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stays: dict[str, Stay]  # by the service's own id
    bookings: dict[str, Reservation]
    saved: list[str] = Field(default_factory=list)  # stay ids on the user's saved list (wishlist)


class _Lodging(Category):
    """Shared machinery of the lodging services; each subclass names its tools and ids its own way, and says which
    of the shared recipes (by topic) it serves."""

    domain = DOMAIN
    category = "lodging"
    State = LodgingState
    id_prefix: ClassVar[str]
    booking_prefix: ClassVar[str]
    tools: ClassVar[dict[str, str]]  # the provider's name for search, details, book, bookings, save, saved
    where_field: ClassVar[str] = "city"  # the search's place argument
    lookup_topics: ClassVar[tuple[str, ...]]
    write_topics: ClassVar[tuple[str, ...]]
    id_field: ClassVar[str] = "hotel_id"
    kinds: ClassVar[tuple[str, ...]] = ("hotel", "apartment")
    past_bookings: ClassVar[tuple[Reservation, ...]] = ()

    @classmethod
    def stay_id(cls, key: str) -> str:
        return f"{cls.id_prefix}_{key}"

    @classmethod
    def initial_state(cls) -> LodgingState:
        return LodgingState(
            stays={cls.stay_id(s.key): s.model_copy(deep=True) for s in STAYS if s.kind in cls.kinds},
            bookings={b.booking_id: b.model_copy() for b in cls.past_bookings},
        )

    def _stay(self, stay_id: str) -> Stay:
        found: Stay | None = self.state.stays.get(stay_id)
        if found is None:
            raise not_found(self.id_field.removesuffix("_id"), stay_id)
        return found

    def _card(self, stay_id: str, s: Stay) -> dict[str, Any]:
        return {
            self.id_field: stay_id,
            "name": s.name,
            "type": s.kind,
            "city": s.city,
            "area": s.area,
            "rating": s.rating,
            "nightly_price": s.nightly_price,
            "max_guests": s.max_guests,
        }

    def _details(self, stay_id: str) -> dict[str, Any]:
        s = self._stay(stay_id)
        return {
            **self._card(stay_id, s),
            "address": s.address,
            "amenities": list(s.amenities),
            "cancellation_policy": s.cancellation_policy,
            "check_in_time": s.check_in_time,
            "check_out_time": s.check_out_time,
        }

    def _dates(self, check_in: str, check_out: str, guests: int) -> tuple[date, date, int]:
        start, end = parse_day(check_in, "check_in"), parse_day(check_out, "check_out")
        if end <= start:
            raise invalid(f"check_out {check_out} must be after check_in {check_in}")
        if start < self.world.now.date():
            raise invalid(f"check_in {check_in} is in the past (today is {self.world.now.date().isoformat()})")
        nights = (end - start).days
        if nights > 30:
            raise invalid(f"a stay of {nights} nights is longer than the 30 allowed")
        if guests < 1:
            raise invalid("guests must be at least 1")
        return start, end, nights

    def _search(self, where: str, check_in: str, check_out: str, guests: int) -> dict[str, Any]:
        _, _, nights = self._dates(check_in, check_out, guests)
        head = where.split(",")[0].strip().lower()
        if not head:
            raise invalid("name a city or neighborhood to search")
        results = []
        for stay_id, s in sorted(self.state.stays.items(), key=lambda kv: kv[1].nightly_price):
            if head not in f"{s.city} {s.area}".lower() or s.max_guests < guests:
                continue
            results.append({**self._card(stay_id, s), "nights": nights, "total_price": money(s.nightly_price * nights)})
        return {
            "query": where,
            "check_in": check_in,
            "check_out": check_out,
            "guests": guests,
            "results": results,
        }

    def _book(self, stay_id: str, check_in: str, check_out: str, guests: int) -> Reservation:
        s = self._stay(stay_id)
        _, _, nights = self._dates(check_in, check_out, guests)
        if guests > s.max_guests:
            raise invalid(f"{s.name} sleeps at most {s.max_guests} guests, not {guests}")
        for other in self.state.bookings.values():
            if other.stay_id == stay_id and other.status == "confirmed" and other.check_in == check_in:
                raise ToolExecutionError(
                    f"booking {other.booking_id} already holds {s.name} from {check_in}", "conflict"
                )
        booking = Reservation(
            booking_id=self.world.new_id(self.booking_prefix),
            stay_id=stay_id,
            name=s.name,
            city=s.city,
            check_in=check_in,
            check_out=check_out,
            guests=guests,
            nights=nights,
            total_price=money(s.nightly_price * nights),
            status="confirmed",
            created_at=self.world.stamp(),
        )
        self.state.bookings[booking.booking_id] = booking
        return booking

    def _booking(self, booking_id: str) -> Reservation:
        found: Reservation | None = self.state.bookings.get(booking_id)
        if found is None:
            raise not_found("booking", booking_id)
        return found

    def _shown_booking(self, b: Reservation) -> dict[str, Any]:
        record = b.model_dump()
        record[self.id_field] = record.pop("stay_id")
        return record

    def _list_bookings(self) -> dict[str, Any]:
        return {"bookings": [self._shown_booking(b) for b in self.state.bookings.values()]}

    def _cancel(self, booking_id: str) -> dict[str, Any]:
        b = self._booking(booking_id)
        if b.status == "cancelled":
            raise ToolExecutionError(f"booking {booking_id} is already cancelled", "conflict")
        if self.state.stays.get(b.stay_id) and self.state.stays[b.stay_id].cancellation_policy == NON_REFUNDABLE:
            raise ToolExecutionError(f"booking {booking_id} is non-refundable and cannot be cancelled", "conflict")
        b.status = "cancelled"
        return {"booking_id": booking_id, "status": "cancelled"}

    def _save(self, stay_ids: list[str]) -> dict[str, Any]:
        if not stay_ids:
            raise invalid("name at least one property to save")
        for stay_id in stay_ids:
            self._stay(stay_id)
        added = [i for i in dict.fromkeys(stay_ids) if i not in self.state.saved]
        self.state.saved.extend(added)
        return {"status": "saved", "added": added}

    def _saved(self) -> dict[str, Any]:
        return {"saved": [self._card(i, self.state.stays[i]) for i in self.state.saved]}

    @classmethod
    def lookups(cls) -> list[Lookup]:
        cheap, lisbon, loft = (
            _manhattan_cheapest(),
            _cheapest(("hotel", "apartment"), "Lisbon, Portugal"),
            stay("alfama_loft"),
        )
        search, details, where, id_field = cls.tools["search"], cls.tools["details"], cls.where_field, cls.id_field
        by_topic = {
            "manhattan_hotels": Lookup(
                topic="manhattan_hotels",
                request="Which is the cheapest hotel in Manhattan for two guests from April 7 to 9, 2026, and what "
                "is its nightly rate?",
                call=Call(search, {where: "Manhattan", **MANHATTAN}),
                shows=[cheap.name, shown(cheap.nightly_price)],
                answer=[cheap.name, shown(cheap.nightly_price)],
                pin=Call(details, {id_field: cls.stay_id(cheap.key)}),
                value_field="nightly_price",
            ),
            "lisbon_stay": Lookup(
                topic="lisbon_stay",
                request="Find the cheapest place to stay in Lisbon for two guests from May 14 to 17, 2026, and tell "
                "me its nightly price.",
                call=Call(search, {where: "Lisbon", **LISBON}),
                shows=[lisbon.name, shown(lisbon.nightly_price)],
                answer=[lisbon.name, shown(lisbon.nightly_price)],
                pin=Call(details, {id_field: cls.stay_id(lisbon.key)}),
                value_field="nightly_price",
            ),
            "stay_policy": Lookup(
                topic="stay_policy",
                request="What is the cancellation policy and the check-in time of the Alfama Riverside Loft in Lisbon?",
                call=Call(details, {id_field: cls.stay_id(loft.key)}),
                shows=[loft.cancellation_policy, loft.check_in_time],
                answer=["7 days", loft.check_in_time],
            ),
        }
        return [by_topic[topic] for topic in cls.lookup_topics]

    @classmethod
    def writes(cls) -> list[Write]:
        beacon, loft, studio = stay("manhattan_beacon"), stay("alfama_loft"), stay("principe_real_studio")
        search, where, id_field = cls.tools["search"], cls.where_field, cls.id_field
        by_topic = {
            "manhattan_booking": lambda: Write(
                topic="manhattan_booking",
                request="Book The Manhattan Beacon Hotel for two guests from April 7 to 9, 2026.",
                call=Call(cls.tools["book"], {id_field: cls.stay_id(beacon.key), **MANHATTAN}),
                before=[Call(search, {where: "Manhattan", **MANHATTAN})],
                readback=Call(cls.tools["bookings"]),
                landed=[beacon.name, MANHATTAN["check_in"]],
                answer=[beacon.name, shown(money(beacon.nightly_price * 2))],
            ),
            "lisbon_booking": lambda: Write(
                topic="lisbon_booking",
                request="Book the Alfama Riverside Loft in Lisbon for two guests from May 14 to 17, 2026.",
                call=Call(cls.tools["book"], {id_field: cls.stay_id(loft.key), **LISBON}),
                before=[Call(search, {where: "Lisbon", **LISBON})],
                readback=Call(cls.tools["bookings"]),
                landed=[loft.name, LISBON["check_in"]],
                answer=[loft.name, shown(money(loft.nightly_price * 3))],
            ),
            "lisbon_shortlist": lambda: Write(
                topic="lisbon_shortlist",
                request="Save the Alfama Riverside Loft and the Principe Real Studio in Lisbon to my saved list.",
                call=Call(cls.tools["save"], {f"{id_field}s": [cls.stay_id(loft.key), cls.stay_id(studio.key)]}),
                before=[Call(search, {where: "Lisbon", **LISBON})],
                readback=Call(cls.tools["saved"]),
                landed=[loft.name, studio.name],
                answer=[loft.name, studio.name],
            ),
        }
        return [by_topic[topic]() for topic in cls.write_topics]  # built on demand: not every site saves


def _past(booking_id: str, name: str, city: str, check_in: str, check_out: str, total: float) -> Reservation:
    nights = (date.fromisoformat(check_out) - date.fromisoformat(check_in)).days
    return Reservation(
        booking_id=booking_id,
        stay_id="archived",
        name=name,
        city=city,
        check_in=check_in,
        check_out=check_out,
        guests=1,
        nights=nights,
        total_price=total,
        status="confirmed",
        created_at="2026-02-11T18:42:10Z",
    )


HotelId = Annotated[str, Field(description="The hotel's id as search_hotels returns it")]
CityArg = Annotated[str, Field(description="City or neighborhood, e.g. 'Manhattan' or 'Lisbon, Portugal'")]
CheckIn = Annotated[str, Field(description="Check-in date, YYYY-MM-DD")]
CheckOut = Annotated[str, Field(description="Check-out date, YYYY-MM-DD")]
Guests = Annotated[int, Field(description="Number of guests", ge=1, le=16)]
BookingId = Annotated[str, Field(description="The booking's id")]


def _cheapest(kind_ok: tuple[str, ...], city: str) -> Stay:
    return min((s for s in STAYS if s.city == city and s.kind in kind_ok), key=lambda s: s.nightly_price)


def _manhattan_cheapest() -> Stay:
    return min((s for s in STAYS if "Manhattan" in s.area and s.kind == "hotel"), key=lambda s: s.nightly_price)


class _Hotels(_Lodging):
    """A hotel site (Booking.com, Expedia); ``words``: ``booking`` (what it calls a booking), ``bookings`` (its list
    tool)."""

    @tool("read", failure_hint="Results can be out of date or incomplete; confirm a hotel with {name}_get_hotel.")
    def search_hotels(self, city: CityArg, check_in: CheckIn, check_out: CheckOut, guests: Guests) -> dict[str, Any]:
        """Search hotels and vacation rentals in a city or neighborhood for the given dates and party size,
        cheapest first."""
        return self._search(city, check_in, check_out, guests)

    @tool("read", failure_hint="An unknown id is a not_found error; take ids from {name}_search_hotels.")
    def get_hotel(self, hotel_id: HotelId) -> dict[str, Any]:
        """Full details of one property: address, amenities, cancellation policy, check-in and check-out times."""
        return self._details(hotel_id)

    @tool("readback", failure_hint="A missing {booking} is a not_found error; list all with {name}_{bookings}.")
    def get_booking(self, booking_id: BookingId) -> dict[str, Any]:
        """One {booking} by id: property, dates, guests, total price and status."""
        return self._shown_booking(self._booking(booking_id))


class Booking(_Hotels):
    name = "booking"
    title = "Booking.com"
    counterparts = ("expedia", "airbnb")
    id_prefix = "bdc"
    booking_prefix = "bdc_bk"
    past_bookings = (_past("bdc_bk_7781", "Pike Place Inn", "Seattle, WA", "2026-02-20", "2026-02-22", 398.6),)
    words: ClassVar[dict[str, str]] = {"booking": "booking", "bookings": "list_bookings"}
    docs: ClassVar[dict[str, str]] = {
        "search_hotels": "Search hotels and apartments in a city or neighborhood for the given dates and party "
        "size, cheapest first, with the nightly and total price."
    }
    tools: ClassVar[dict[str, str]] = {
        "search": "search_hotels",
        "details": "get_hotel",
        "book": "create_booking",
        "bookings": "list_bookings",
    }
    lookup_topics = ("manhattan_hotels", "lisbon_stay")
    write_topics = ("manhattan_booking", "lisbon_booking")

    @tool(
        "write",
        failure_hint="A confirmation does not prove the reservation persisted; confirm with booking_list_bookings.",
    )
    def create_booking(
        self, hotel_id: HotelId, check_in: CheckIn, check_out: CheckOut, guests: Guests
    ) -> dict[str, Any]:
        """Book a property for the given dates and number of guests; returns the new booking with its total."""
        return self._shown_booking(self._book(hotel_id, check_in, check_out, guests))

    @tool("readback", failure_hint="Shows only what persisted; a booking missing here did not go through.")
    def list_bookings(self) -> dict[str, Any]:
        """Every booking on the account, confirmed and cancelled."""
        return self._list_bookings()

    @tool(
        "write",
        failure_hint="Non-refundable bookings cannot be cancelled; check the status with booking_get_booking.",
    )
    def cancel_booking(self, booking_id: BookingId) -> dict[str, Any]:
        """Cancel a confirmed booking (refused for non-refundable rates)."""
        return self._cancel(booking_id)


class Expedia(_Hotels):
    name = "expedia"
    title = "Expedia"
    counterparts = ("booking", "airbnb")
    id_prefix = "exp"
    booking_prefix = "exp_itin"
    past_bookings = (_past("exp_itin_5520", "Harborview Hotel", "Boston, MA", "2026-01-09", "2026-01-11", 452.3),)
    words: ClassVar[dict[str, str]] = {"booking": "itinerary", "bookings": "list_trips"}
    tools: ClassVar[dict[str, str]] = {
        "search": "search_hotels",
        "details": "get_hotel",
        "book": "book_hotel",
        "bookings": "list_trips",
        "save": "save_hotels",
        "saved": "get_saved_hotels",
    }
    lookup_topics = ("manhattan_hotels", "stay_policy")
    write_topics = ("manhattan_booking", "lisbon_shortlist")

    @tool("write", failure_hint="An itinerary number does not prove the stay persisted; check expedia_list_trips.")
    def book_hotel(self, hotel_id: HotelId, check_in: CheckIn, check_out: CheckOut, guests: Guests) -> dict[str, Any]:
        """Reserve a property for the given dates and guests; returns the itinerary with its total price."""
        return self._shown_booking(self._book(hotel_id, check_in, check_out, guests))

    @tool("readback", failure_hint="Shows only what persisted; a stay missing here was not booked.")
    def list_trips(self) -> dict[str, Any]:
        """Every trip (hotel booking) on the account."""
        return self._list_bookings()

    @tool("write", failure_hint="Saving can silently drop some properties; confirm with expedia_get_saved_hotels.")
    def save_hotels(
        self,
        hotel_ids: Annotated[list[str], Field(description="Ids of the properties to save, from search_hotels")],
    ) -> dict[str, Any]:
        """Add one or more properties to the user's saved list."""
        return self._save(hotel_ids)

    @tool("readback", failure_hint="Shows only what persisted; re-save any property missing here.")
    def get_saved_hotels(self) -> dict[str, Any]:
        """The properties on the user's saved list."""
        return self._saved()


ListingId = Annotated[str, Field(description="The listing's id as search_listings returns it")]


class Airbnb(_Lodging):
    name = "airbnb"
    title = "Airbnb"
    counterparts = ("booking", "expedia")
    id_prefix = "abnb"
    booking_prefix = "abnb_res"
    id_field = "listing_id"
    kinds = ("apartment",)
    past_bookings = (_past("abnb_res_3012", "Sunset Cabin", "Lake Tahoe, CA", "2026-01-23", "2026-01-25", 512.4),)
    tools: ClassVar[dict[str, str]] = {
        "search": "search_listings",
        "details": "get_listing",
        "book": "book_listing",
        "bookings": "list_reservations",
        "save": "add_to_wishlist",
        "saved": "get_wishlist",
    }
    where_field = "location"
    lookup_topics = ("lisbon_stay", "stay_policy")
    write_topics = ("lisbon_booking", "lisbon_shortlist")

    @tool("read", failure_hint="Results can be out of date or incomplete; confirm a listing with airbnb_get_listing.")
    def search_listings(
        self,
        location: Annotated[str, Field(description="City or neighborhood, e.g. 'Lisbon' or 'Chelsea, Manhattan'")],
        check_in: CheckIn,
        check_out: CheckOut,
        guests: Guests,
    ) -> dict[str, Any]:
        """Search whole-home listings in a city or neighborhood for the given dates and guests, cheapest first."""
        return self._search(location, check_in, check_out, guests)

    @tool("read", failure_hint="An unknown id is a not_found error; take ids from airbnb_search_listings.")
    def get_listing(self, listing_id: ListingId) -> dict[str, Any]:
        """Full details of one listing: address, amenities, cancellation policy, check-in and check-out times."""
        return self._details(listing_id)

    @tool(
        "write",
        failure_hint="A reservation code does not prove the stay persisted; check airbnb_list_reservations.",
    )
    def book_listing(
        self, listing_id: ListingId, check_in: CheckIn, check_out: CheckOut, guests: Guests
    ) -> dict[str, Any]:
        """Reserve a listing for the given dates and guests; returns the reservation with its total price."""
        return self._shown_booking(self._book(listing_id, check_in, check_out, guests))

    @tool("readback", failure_hint="A missing reservation is a not_found error; see airbnb_list_reservations.")
    def get_reservation(self, booking_id: BookingId) -> dict[str, Any]:
        """One reservation by its booking id: listing, dates, guests, total price and status."""
        return self._shown_booking(self._booking(booking_id))

    @tool("readback", failure_hint="Shows only what persisted; a stay missing here was not reserved.")
    def list_reservations(self) -> dict[str, Any]:
        """Every reservation on the account."""
        return self._list_bookings()

    @tool("write", failure_hint="Saving can silently drop some listings; confirm with airbnb_get_wishlist.")
    def add_to_wishlist(
        self,
        listing_ids: Annotated[list[str], Field(description="Ids of the listings to save, from search_listings")],
    ) -> dict[str, Any]:
        """Add one or more listings to the user's wishlist."""
        return self._save(listing_ids)

    @tool("readback", failure_hint="Shows only what persisted; re-add any listing missing here.")
    def get_wishlist(self) -> dict[str, Any]:
        """The listings on the user's wishlist."""
        return self._saved()


# ---------------------------------------------------------------------------------------------------------------
# Rides


class Place(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    name: str
    address: str
    lat: float
    lon: float
    aliases: list[str]


# Known places both ride services resolve (free text is matched against the name and aliases).
PLACES: tuple[Place, ...] = (
    Place(
        key="sfo",
        name="San Francisco International Airport (SFO)",
        address="780 S Airport Blvd, San Francisco, CA 94128",
        lat=37.6213,
        lon=-122.3790,
        aliases=["sfo", "san francisco airport", "sfo airport", "san francisco international airport"],
    ),
    Place(
        key="oak",
        name="Oakland International Airport (OAK)",
        address="1 Airport Dr, Oakland, CA 94621",
        lat=37.7126,
        lon=-122.2197,
        aliases=["oak", "oakland airport", "oakland international airport"],
    ),
    Place(
        key="moscone",
        name="Moscone Center",
        address="747 Howard St, San Francisco, CA 94103",
        lat=37.7842,
        lon=-122.4016,
        aliases=["moscone", "moscone center", "747 howard st"],
    ),
    Place(
        key="ferry_building",
        name="Ferry Building",
        address="1 Ferry Building, San Francisco, CA 94111",
        lat=37.7955,
        lon=-122.3937,
        aliases=["ferry building", "ferry plaza"],
    ),
    Place(
        key="oracle_park",
        name="Oracle Park",
        address="24 Willie Mays Plaza, San Francisco, CA 94107",
        lat=37.7786,
        lon=-122.3893,
        aliases=["oracle park", "giants stadium", "24 willie mays plaza"],
    ),
    Place(
        key="chase_center",
        name="Chase Center",
        address="1 Warriors Way, San Francisco, CA 94158",
        lat=37.7680,
        lon=-122.3877,
        aliases=["chase center", "1 warriors way"],
    ),
    Place(
        key="union_square",
        name="Union Square",
        address="333 Post St, San Francisco, CA 94108",
        lat=37.7880,
        lon=-122.4075,
        aliases=["union square", "333 post st"],
    ),
    Place(
        key="home",
        name="Home",
        address="1450 Valencia St, San Francisco, CA 94110",
        lat=37.7493,
        lon=-122.4205,
        aliases=["home", "1450 valencia st", "my place"],
    ),
    Place(
        key="work",
        name="Work",
        address="500 Howard St, San Francisco, CA 94105",
        lat=37.7880,
        lon=-122.3967,
        aliases=["work", "office", "500 howard st"],
    ),
)

# Fare classes: (base, per mile, per minute, minimum, seats). The same table prices both services' classes.
FARE_CLASSES = {
    "standard": (2.55, 1.38, 0.41, 8.45, 4),
    "xl": (3.85, 2.21, 0.56, 11.65, 6),
    "premium": (8.15, 3.47, 0.72, 21.35, 4),
}


def route(a: Place, b: Place) -> tuple[float, int]:
    """Road miles (great-circle distance times a street factor) and minutes between two places."""
    dlat, dlon = math.radians(b.lat - a.lat), math.radians(b.lon - a.lon)
    h = (
        math.sin(dlat / 2) ** 2
        + math.cos(math.radians(a.lat)) * math.cos(math.radians(b.lat)) * math.sin(dlon / 2) ** 2
    )
    miles = round(2 * 3958.8 * math.asin(math.sqrt(h)) * 1.32, 1)
    return miles, round(miles * 2.1 + 5)


def fare(fare_class: str, a: Place, b: Place) -> float:
    base, per_mile, per_minute, minimum, _ = FARE_CLASSES[fare_class]
    miles, minutes = route(a, b)
    return money(max(minimum, base + per_mile * miles + per_minute * minutes))


def place(key: str) -> Place:
    return next(p for p in PLACES if p.key == key)


class Ride(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ride_id: str
    pickup: str
    dropoff: str
    product: str
    fare: float
    status: Literal["driver_assigned", "completed", "cancelled"]
    driver: str
    vehicle: str
    requested_at: str


class RidesState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rides: dict[str, Ride]
    saved_places: list[str]  # place keys


DRIVERS = (
    ("Marisol Vega", "Toyota Camry, white, 8KPL214"),
    ("Dev Anand", "Honda Accord, gray, 7TRX903"),
    ("Olu Adeyemi", "Tesla Model 3, black, 9BDF551"),
    ("Karen Cho", "Kia Niro, blue, 8ZEN406"),
)


PickupArg = Annotated[str, Field(description="Pickup place or address, e.g. 'SFO' or 'Ferry Building'")]
DropoffArg = Annotated[str, Field(description="Dropoff place or address, e.g. 'Moscone Center'")]
RideId = Annotated[str, Field(description="The ride's id")]
PlacesArg = Annotated[list[str], Field(description="Places or addresses to save, e.g. ['Oracle Park']")]


class _Rides(Category):
    """A ride service; ``words``: ``option`` (what a product is called), ``product`` (the field in a ride)."""

    domain = DOMAIN
    category = "rides"
    State = RidesState
    products: ClassVar[dict[str, str]]  # product name -> fare class
    id_prefix: ClassVar[str]
    past_rides: ClassVar[tuple[Ride, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        if "products" in cls.__dict__:  # a request names one of the provider's own products
            option = Literal[tuple(cls.products)]  # type: ignore[valid-type]
            cls.arg_types = {"product": Annotated[option, Field(description=cls.words["option"].capitalize())]}
        super().__init_subclass__(**kwargs)

    @classmethod
    def initial_state(cls) -> RidesState:
        return RidesState(rides={r.ride_id: r.model_copy() for r in cls.past_rides}, saved_places=["home", "work"])

    def _place(self, text: str) -> Place:
        q = re.sub(r"[^a-z0-9 ]+", " ", text.lower())
        q = " ".join(q.split())
        if not q:
            raise invalid("name a place or address")
        hits = [p for p in PLACES if any(q == a or q in a or a in q for a in p.aliases)]
        if len(hits) > 1:
            names = ", ".join(p.name for p in hits)
            raise ToolExecutionError(f"{text!r} matches several places ({names}); be more specific", "ambiguous")
        if not hits:
            raise not_found("place", text)
        return hits[0]

    @tool("read", failure_hint="Estimates can be stale or wrong; compare with the fare the ride request returns.")
    def get_fare_estimates(self, pickup: PickupArg, dropoff: DropoffArg) -> dict[str, Any]:
        """Fare estimates for every {option} between two places, with distance and drive time."""
        a, b = self._place(pickup), self._place(dropoff)
        if a.key == b.key:
            raise invalid("pickup and dropoff are the same place")
        miles, minutes = route(a, b)
        return {
            "pickup": a.name,
            "dropoff": b.name,
            "distance_miles": miles,
            "duration_min": minutes,
            "options": [
                {"product": product, "fare": fare(fc, a, b), "seats": FARE_CLASSES[fc][4]}
                for product, fc in self.products.items()
            ],
        }

    @tool("write", failure_hint="A request can fail to reach a driver; confirm the ride with {name}_list_rides.")
    def request_ride(
        self, pickup: PickupArg, dropoff: DropoffArg, product: Annotated[str, Field(description="Ride option")]
    ) -> dict[str, Any]:
        """Request a ride now; returns the ride with its driver, vehicle and fare."""
        a, b = self._place(pickup), self._place(dropoff)
        if a.key == b.key:
            raise invalid("pickup and dropoff are the same place")
        active = [r for r in self.state.rides.values() if r.status == "driver_assigned"]
        if active:
            raise ToolExecutionError(f"ride {active[0].ride_id} is still active; cancel it first", "conflict")
        driver, vehicle = DRIVERS[len(self.state.rides) % len(DRIVERS)]
        ride = Ride(
            ride_id=self.world.new_id(self.id_prefix),
            pickup=a.name,
            dropoff=b.name,
            product=product,
            fare=fare(self.products[product], a, b),
            status="driver_assigned",
            driver=driver,
            vehicle=vehicle,
            requested_at=self.world.stamp(),
        )
        self.state.rides[ride.ride_id] = ride
        return {**ride.model_dump(), "pickup_eta_min": 4 + len(self.state.rides) % 5}

    def _ride(self, ride_id: str) -> Ride:
        found: Ride | None = self.state.rides.get(ride_id)
        if found is None:
            raise not_found("ride", ride_id)
        return found

    @tool("readback", failure_hint="An unknown id is a not_found error; list rides with {name}_list_rides.")
    def get_ride(self, ride_id: RideId) -> dict[str, Any]:
        """One ride by id: route, {product}, fare, driver and status."""
        return self._ride(ride_id).model_dump()

    @tool("readback", failure_hint="Shows only what persisted; a ride missing here was never requested.")
    def list_rides(self) -> dict[str, Any]:
        """Every ride on the account, past and active."""
        return {"rides": [r.model_dump() for r in self.state.rides.values()]}

    @tool("write", failure_hint="Only an active ride can be cancelled; check the status with {name}_get_ride.")
    def cancel_ride(self, ride_id: RideId) -> dict[str, Any]:
        """Cancel an active ride."""
        ride = self._ride(ride_id)
        if ride.status != "driver_assigned":
            raise ToolExecutionError(f"ride {ride_id} is {ride.status} and cannot be cancelled", "conflict")
        ride.status = "cancelled"
        return {"ride_id": ride_id, "status": "cancelled"}

    @tool("write", failure_hint="Saving can silently drop some places; confirm with {name}_get_saved_places.")
    def add_saved_places(self, places: PlacesArg) -> dict[str, Any]:
        """Add one or more places to the user's saved places."""
        if not places:
            raise invalid("name at least one place to save")
        found = [self._place(p) for p in places]
        added = [p.name for p in found if p.key not in self.state.saved_places]
        for p in found:
            if p.key not in self.state.saved_places:
                self.state.saved_places.append(p.key)
        return {"status": "saved", "added": added}

    @tool("readback", failure_hint="Shows only what persisted; re-save any place missing here.")
    def get_saved_places(self) -> dict[str, Any]:
        """The user's saved places with their addresses."""
        return {
            "places": [
                {"place_id": key, "name": place(key).name, "address": place(key).address}
                for key in self.state.saved_places
            ]
        }

    @classmethod
    def lookups(cls) -> list[Lookup]:
        sfo, moscone, square, arena = place("sfo"), place("moscone"), place("union_square"), place("chase_center")
        airport_fare, airport_min = fare("standard", sfo, moscone), route(sfo, moscone)[1]
        arena_fare = fare("standard", square, arena)
        return [
            Lookup(
                topic="airport_fare",
                request="How much would a standard ride from SFO to the Moscone Center cost, and how long is the "
                "drive?",
                call=Call("get_fare_estimates", {"pickup": "SFO", "dropoff": "Moscone Center"}),
                shows=[shown(airport_fare), f'"duration_min": {airport_min}'],
                answer=[shown(airport_fare), str(airport_min)],
                value_field="fare",
            ),
            Lookup(
                topic="arena_fare",
                request="What does a standard ride from Union Square to Chase Center cost right now?",
                call=Call("get_fare_estimates", {"pickup": "Union Square", "dropoff": "Chase Center"}),
                shows=[shown(arena_fare)],
                answer=[shown(arena_fare)],
                value_field="fare",
            ),
        ]

    @classmethod
    def writes(cls) -> list[Write]:
        sfo, moscone = place("sfo"), place("moscone")
        standard = next(product for product, fc in cls.products.items() if fc == "standard")
        return [
            Write(
                topic="airport_ride",
                request="Get me a standard ride from SFO to the Moscone Center.",
                call=Call("request_ride", {"pickup": "SFO", "dropoff": "Moscone Center", "product": standard}),
                before=[Call("get_fare_estimates", {"pickup": "SFO", "dropoff": "Moscone Center"})],
                readback=Call("list_rides"),
                landed=[moscone.name, sfo.name],
                answer=[moscone.name, shown(fare("standard", sfo, moscone))],
            ),
            Write(
                topic="save_places",
                request="Save the Moscone Center and Chase Center to my saved places.",
                call=Call("add_saved_places", {"places": ["Moscone Center", "Chase Center"]}),
                readback=Call("get_saved_places"),
                landed=["Moscone Center", "Chase Center"],
                answer=["Moscone Center", "Chase Center"],
            ),
        ]


def _past_ride(ride_id: str, pickup: str, dropoff: str, product: str, when: str) -> Ride:
    return Ride(
        ride_id=ride_id,
        pickup=place(pickup).name,
        dropoff=place(dropoff).name,
        product=product,
        fare=fare("standard", place(pickup), place(dropoff)),
        status="completed",
        driver="Tomas Reyes",
        vehicle="Toyota Prius, silver, 7HNB220",
        requested_at=when,
    )


class Uber(_Rides):
    name = "uber"
    title = "Uber"
    counterparts = ("lyft",)
    words: ClassVar[dict[str, str]] = {"option": "ride option", "product": "product"}
    products: ClassVar[dict[str, str]] = {"UberX": "standard", "UberXL": "xl", "Uber Black": "premium"}
    id_prefix = "uber_ride"
    past_rides = (_past_ride("uber_ride_0311", "home", "ferry_building", "UberX", "2026-03-14T17:05:00Z"),)


class Lyft(_Rides):
    name = "lyft"
    title = "Lyft"
    counterparts = ("uber",)
    words: ClassVar[dict[str, str]] = {"option": "ride type", "product": "ride type"}
    docs: ClassVar[dict[str, str]] = {
        "get_fare_estimates": "Price and drive-time estimates for every ride type between two places."
    }
    products: ClassVar[dict[str, str]] = {"Lyft": "standard", "Lyft XL": "xl", "Lux Black": "premium"}
    id_prefix = "lyft_ride"
    past_rides = (_past_ride("lyft_ride_0298", "work", "union_square", "Lyft", "2026-03-11T01:20:00Z"),)


SERVICES: list[type[Service]] = [Booking, Expedia, Airbnb, Uber, Lyft]
