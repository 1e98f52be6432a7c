"""Travel & lodging services: hotel and rental booking (Booking.com, Expedia, Airbnb) and ride hailing (Uber, Lyft).

The lodging services list one shared catalog of stays (``data/stays.jsonl``; Airbnb only its apartments) at the
same prices, and the ride services resolve the same known places (``data/ride_places.jsonl``) and price trips
between them with the same fare table (``data/fare_classes.jsonl``), so that a fallback from one service to its
counterpart reaches the same facts. Each category's providers share its tools (:class:`_Lodging`, :class:`_Rides`),
each naming them and its ids its own way.
"""

from __future__ import annotations

import math
import re
from datetime import date
from typing import Annotated, Any, ClassVar, Literal, TypedDict

from pydantic import Field

from undertow.env_core.services.base import Category, Service, peers
from undertow.env_core.services.helpers import (
    add_new,
    cancel,
    conflict,
    find,
    invalid,
    money,
    not_found,
    searched,
)
from undertow.env_core.services.histories import held, histories, saved_of
from undertow.env_core.services.seeds import TODAY, Place, Stay, tables
from undertow.env_core.services.states import LodgingState, Reservation, Ride, RidesState
from undertow.env_core.tools import ToolExecutionError, tool

DOMAIN = "travel & lodging"


# -------------------------------------------------------------------------------------------------------------------
# Lodging


NON_REFUNDABLE = "Non-refundable"


def parse_day(text: str, what: str) -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise invalid(f"{what} {text!r} is not a date in YYYY-MM-DD form") from None


class StayDates(TypedDict):
    """A booking request's dates and party size, as the booking tools take them."""

    check_in: str
    check_out: str
    guests: int


def _reservation(
    booking_id: str, stay_id: str, stay: Stay, dates: StayDates, nights: int, total: float, made: str
) -> Reservation:
    """A confirmed booking of a stay for ``dates``."""
    booked = {"booking_id": booking_id, "stay_id": stay_id, "name": stay.name, "city": stay.city, **dates}
    booked |= {"nights": nights, "total_price": total, "status": "confirmed", "created_at": made}
    return Reservation.model_validate(booked)


HotelId = Annotated[str, Field(description="The hotel's id as search_hotels returns it")]
CheckIn = Annotated[str, Field(description="Check-in date, YYYY-MM-DD")]
CheckOut = Annotated[str, Field(description="Check-out date, YYYY-MM-DD")]
Guests = Annotated[int, Field(description="Number of guests", ge=1, le=16)]
BookingId = Annotated[str, Field(description="The booking's id")]


class _Lodging(Category, domain=DOMAIN, category="lodging"):
    """A lodging service; the tools' templates are Expedia's. ``words``: ``stay`` and ``property`` (what it calls a
    place to stay), ``booking`` (what it calls a booking), ``A_code`` (a booking's number), ``booked``."""

    state: LodgingState
    id_prefix: ClassVar[str]
    booking_prefix: ClassVar[str]
    kinds: ClassVar[tuple[str, ...]] = ("hotel", "apartment")
    words: ClassVar[dict[str, str]] = {"stay": "hotel", "property": "property"}

    @classmethod
    def stay_id(cls, key: str) -> str:
        return f"{cls.id_prefix}_{key}"

    @classmethod
    def initial_state(cls, day: date = TODAY) -> LodgingState:
        return LodgingState(
            stays={cls.stay_id(s.key): s.model_copy(deep=True) for s in tables(day).stays if s.kind in cls.kinds},
            bookings={b.booking_id: b for b in held(histories(day).bookings, cls.name, Reservation)},
        )

    def _stay(self, stay_id: str) -> Stay:
        return find(self.state.stays, stay_id, self.arg_of("hotel_id").removesuffix("_id"))

    def _card(self, stay_id: str, s: Stay) -> dict[str, Any]:
        return {
            self.arg_of("hotel_id"): stay_id,
            "name": s.name,
            "type": s.kind,
            "city": s.city,
            "area": s.area,
            "rating": s.rating,
            "nightly_price": s.nightly_price,
            "max_guests": s.max_guests,
        }

    def _dates(self, check_in: str, check_out: str, guests: int) -> int:
        """The nights between two dates, once the request is one a site takes."""
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
        return nights

    @tool(
        "read", failure_hint="Results can be out of date or incomplete; confirm a {stay} with {name}_{tool:get_hotel}."
    )
    def search_hotels(
        self,
        city: Annotated[str, Field(description="City or neighborhood, e.g. 'Manhattan' or 'Lisbon, Portugal'")],
        check_in: CheckIn,
        check_out: CheckOut,
        guests: Guests,
    ) -> dict[str, Any]:
        """Search hotels and vacation rentals in a city or neighborhood for the given dates and party size,
        cheapest first."""
        nights = self._dates(check_in, check_out, guests)
        head = searched(city.split(",")[0], "name a city or neighborhood to search")
        results = []
        for stay_id, s in sorted(self.state.stays.items(), key=lambda kv: kv[1].nightly_price):
            if head not in f"{s.city} {s.area}".lower() or s.max_guests < guests:
                continue
            results.append({**self._card(stay_id, s), "nights": nights, "total_price": money(s.nightly_price * nights)})
        return {"query": city, "check_in": check_in, "check_out": check_out, "guests": guests, "results": results}

    @tool("read", failure_hint="An unknown id is a not_found error; take ids from {name}_{tool:search_hotels}.")
    def get_hotel(self, hotel_id: HotelId) -> dict[str, Any]:
        """Full details of one {property}: address, amenities, cancellation policy, check-in and check-out times."""
        s = self._stay(hotel_id)
        return {
            **self._card(hotel_id, s),
            "address": s.address,
            "amenities": list(s.amenities),
            "cancellation_policy": s.cancellation_policy,
            "check_in_time": s.check_in_time,
            "check_out_time": s.check_out_time,
        }

    @tool("write", failure_hint="{A_code} does not prove the stay persisted; check {name}_{tool:list_bookings}.")
    def book_hotel(self, hotel_id: HotelId, check_in: CheckIn, check_out: CheckOut, guests: Guests) -> dict[str, Any]:
        """Reserve a {property} for the given dates and guests; returns the {booking} with its total price."""
        s = self._stay(hotel_id)
        nights = self._dates(check_in, check_out, guests)
        if guests > s.max_guests:
            raise invalid(f"{s.name} sleeps at most {s.max_guests} guests, not {guests}")
        for other in self.state.bookings.values():
            if other.stay_id == hotel_id and other.status == "confirmed" and other.check_in == check_in:
                raise conflict(f"booking {other.booking_id} already holds {s.name} from {check_in}")
        dates: StayDates = {"check_in": check_in, "check_out": check_out, "guests": guests}
        total, made = money(s.nightly_price * nights), self.world.stamp()
        booking = _reservation(self.world.new_id(self.booking_prefix), hotel_id, s, dates, nights, total, made)
        self.state.bookings[booking.booking_id] = booking
        return self._shown_booking(booking)

    def _shown_booking(self, b: Reservation) -> dict[str, Any]:
        record = b.model_dump()
        record[self.arg_of("hotel_id")] = record.pop("stay_id")
        return record

    @tool(
        "readback",
        failure_hint="A missing {booking} is a not_found error; list all with {name}_{tool:list_bookings}.",
    )
    def get_booking(self, booking_id: BookingId) -> dict[str, Any]:
        """One {booking} by id: property, dates, guests, total price and status."""
        return self._shown_booking(find(self.state.bookings, booking_id, "booking"))

    @tool("readback", failure_hint="Shows only what persisted; a stay missing here was not {booked}.")
    def list_bookings(self) -> dict[str, Any]:
        """Every {booking} on the account."""
        return {"bookings": [self._shown_booking(b) for b in self.state.bookings.values()]}


HotelIds = Annotated[list[str], Field(description="Ids of the properties to save, from search_hotels")]


class _Saving(_Lodging):
    """A lodging service with a saved list; more ``words``: ``properties``, ``list`` (what it calls the saved list),
    ``resave``."""

    @tool(
        "write",
        failure_hint="Saving can silently drop some {properties}; confirm with {name}_{tool:get_saved_hotels}.",
    )
    def save_hotels(
        self,
        hotel_ids: HotelIds,
    ) -> dict[str, Any]:
        """Add one or more {properties} to the user's {list}."""
        if not hotel_ids:
            raise invalid("name at least one property to save")
        for stay_id in hotel_ids:
            self._stay(stay_id)
        return {"status": "saved", "added": add_new(self.state.saved, hotel_ids)}

    @tool("readback", failure_hint="Shows only what persisted; {resave} any {property} missing here.")
    def get_saved_hotels(self) -> dict[str, Any]:
        """The {properties} on the user's {list}."""
        return {"saved": [self._card(i, self.state.stays[i]) for i in self.state.saved]}


class Booking(_Lodging, name="booking", title="Booking.com"):
    id_prefix = "bdc"
    booking_prefix = "bdc_bk"
    words: ClassVar[dict[str, str]] = {"booking": "booking"}
    renames: ClassVar[dict[str, str]] = {"book_hotel": "create_booking"}
    docs: ClassVar[dict[str, str]] = {
        "search_hotels": "Search hotels and apartments in a city or neighborhood for the given dates and party "
        "size, cheapest first, with the nightly and total price.",
        "create_booking": "Book a property for the given dates and number of guests; returns the new booking with "
        "its total.",
        "list_bookings": "Every booking on the account, confirmed and cancelled.",
    }
    hints: ClassVar[dict[str, str]] = {
        "create_booking": "A confirmation does not prove the reservation persisted; confirm with "
        "booking_list_bookings.",
        "list_bookings": "Shows only what persisted; a booking missing here did not go through.",
    }

    @tool(
        "write", failure_hint="Non-refundable bookings cannot be cancelled; check the status with booking_get_booking."
    )
    def cancel_booking(self, booking_id: BookingId) -> dict[str, Any]:
        """Cancel a confirmed booking (refused for non-refundable rates)."""
        b = find(self.state.bookings, booking_id, "booking")
        if b.status == "cancelled":
            raise conflict(f"booking {booking_id} is already cancelled")
        if self.state.stays.get(b.stay_id) and self.state.stays[b.stay_id].cancellation_policy == NON_REFUNDABLE:
            raise conflict(f"booking {booking_id} is non-refundable and cannot be cancelled")
        b.status = "cancelled"
        return {"booking_id": booking_id, "status": "cancelled"}


class Expedia(_Saving, name="expedia", title="Expedia"):
    id_prefix = "exp"
    booking_prefix = "exp_itin"
    renames: ClassVar[dict[str, str]] = {"list_bookings": "list_trips"}
    docs: ClassVar[dict[str, str]] = {"list_trips": "Every trip (hotel booking) on the account."}
    words: ClassVar[dict[str, str]] = {
        "booking": "itinerary",
        "A_code": "An itinerary number",
        "booked": "booked",
        "properties": "properties",
        "list": "saved list",
        "resave": "re-save",
    }


class Airbnb(_Saving, name="airbnb", title="Airbnb"):
    id_prefix = "abnb"
    booking_prefix = "abnb_res"
    kinds = ("apartment",)
    words: ClassVar[dict[str, str]] = {
        "stay": "listing",
        "property": "listing",
        "booking": "reservation",
        "A_code": "A reservation code",
        "booked": "reserved",
        "properties": "listings",
        "list": "wishlist",
        "resave": "re-add",
    }
    renames: ClassVar[dict[str, str]] = {
        "search_hotels": "search_listings",
        "get_hotel": "get_listing",
        "book_hotel": "book_listing",
        "get_booking": "get_reservation",
        "list_bookings": "list_reservations",
        "save_hotels": "add_to_wishlist",
        "get_saved_hotels": "get_wishlist",
    }
    arg_names: ClassVar[dict[str, str]] = {"city": "location", "hotel_id": "listing_id", "hotel_ids": "listing_ids"}
    arg_types: ClassVar[dict[str, Any]] = {
        "location": Annotated[str, Field(description="City or neighborhood, e.g. 'Lisbon' or 'Chelsea, Manhattan'")],
        "listing_id": Annotated[str, Field(description="The listing's id as search_listings returns it")],
        "listing_ids": Annotated[list[str], Field(description="Ids of the listings to save, from search_listings")],
    }
    docs: ClassVar[dict[str, str]] = {
        "search_listings": "Search whole-home listings in a city or neighborhood for the given dates and guests, "
        "cheapest first.",
        "get_reservation": "One reservation by its booking id: listing, dates, guests, total price and status.",
    }
    hints: ClassVar[dict[str, str]] = {
        "get_reservation": "A missing reservation is a not_found error; see airbnb_list_reservations."
    }


# -------------------------------------------------------------------------------------------------------------------
# Rides


def route(a: Place, b: Place) -> tuple[float, int]:
    """Road miles (great-circle distance times a street factor) and minutes between two places."""
    dlat, dlon = math.radians(b.lat - a.lat), math.radians(b.lon - a.lon)
    h = (
        math.sin(dlat / 2) ** 2
        + math.cos(math.radians(a.lat)) * math.cos(math.radians(b.lat)) * math.sin(dlon / 2) ** 2
    )
    miles = round(2 * 3958.8 * math.asin(math.sqrt(h)) * 1.32, 1)
    return miles, round(miles * 2.1 + 5)


def fare(fare_class: str, a: Place, b: Place, day: date = TODAY) -> float:
    """The fare of a ride of ``fare_class`` between two places, by the fare table of ``day``."""
    fc = tables(day).fare_classes[fare_class]
    miles, minutes = route(a, b)
    return money(max(fc.minimum, fc.base + fc.per_mile * miles + fc.per_minute * minutes))


PickupArg = Annotated[str, Field(description="Pickup place or address, e.g. 'SFO' or 'Ferry Building'")]
DropoffArg = Annotated[str, Field(description="Dropoff place or address, e.g. 'Moscone Center'")]
RideId = Annotated[str, Field(description="The ride's id")]
PlacesArg = Annotated[list[str], Field(description="Places or addresses to save, e.g. ['Oracle Park']")]


class _Rides(Category, domain=DOMAIN, category="rides"):
    """A ride service; ``words``: ``option`` (what a product is called), ``product`` (the field in a ride)."""

    state: RidesState
    products: ClassVar[dict[str, str]]  # product name -> fare class
    id_prefix: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        if "products" in cls.__dict__:  # a request names one of the provider's own products
            option = Literal[tuple(cls.products)]  # type: ignore[valid-type]
            cls.arg_types = {"product": Annotated[option, Field(description=cls.words["option"].capitalize())]}
        super().__init_subclass__(**kwargs)

    @classmethod
    def initial_state(cls, day: date = TODAY) -> RidesState:
        rides = {r.ride_id: r for r in held(histories(day).rides, cls.name, Ride)}
        return RidesState(rides=rides, saved_places=saved_of(cls.name, day))

    def _place(self, text: str) -> Place:
        q = re.sub(r"[^a-z0-9 ]+", " ", text.lower())
        q = " ".join(q.split())
        if not q:
            raise invalid("name a place or address")
        known = tables(self.world.as_of).ride_places
        hits = [p for p in known if any(q == a or q in a or a in q for a in p.aliases)]
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
        day = self.world.as_of
        return {
            "pickup": a.name,
            "dropoff": b.name,
            "distance_miles": miles,
            "duration_min": minutes,
            "options": [
                {"product": product, "fare": fare(fc, a, b, day), "seats": tables(day).fare_classes[fc].seats}
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
            raise conflict(f"ride {active[0].ride_id} is still active; cancel it first")
        drivers = tables(self.world.as_of).drivers
        driver = drivers[len(self.state.rides) % len(drivers)]
        ride = Ride(
            ride_id=self.world.new_id(self.id_prefix),
            pickup=a.name,
            dropoff=b.name,
            product=product,
            fare=fare(self.products[product], a, b, self.world.as_of),
            status="driver_assigned",
            driver=driver.name,
            vehicle=driver.vehicle,
            requested_at=self.world.stamp(),
        )
        self.state.rides[ride.ride_id] = ride
        return {**ride.model_dump(), "pickup_eta_min": 4 + len(self.state.rides) % 5}

    @tool("readback", failure_hint="An unknown id is a not_found error; list rides with {name}_list_rides.")
    def get_ride(self, ride_id: RideId) -> dict[str, Any]:
        """One ride by id: route, {product}, fare, driver and status."""
        return find(self.state.rides, ride_id, "ride").model_dump()

    @tool("readback", failure_hint="Shows only what persisted; a ride missing here was never requested.")
    def list_rides(self) -> dict[str, Any]:
        """Every ride on the account, past and active."""
        return {"rides": [r.model_dump() for r in self.state.rides.values()]}

    @tool("write", failure_hint="Only an active ride can be cancelled; check the status with {name}_get_ride.")
    def cancel_ride(self, ride_id: RideId) -> dict[str, Any]:
        """Cancel an active ride."""
        cancel(find(self.state.rides, ride_id, "ride"), "ride", ride_id, ("driver_assigned",))
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
        known = {p.key: p for p in tables(self.world.as_of).ride_places}
        return {
            "places": [
                {"place_id": key, "name": known[key].name, "address": known[key].address}
                for key in self.state.saved_places
            ]
        }


class Uber(_Rides, name="uber", title="Uber"):
    words: ClassVar[dict[str, str]] = {"option": "ride option", "product": "product"}
    products: ClassVar[dict[str, str]] = {"UberX": "standard", "UberXL": "xl", "Uber Black": "premium"}
    id_prefix = "uber_ride"


class Lyft(_Rides, name="lyft", title="Lyft"):
    words: ClassVar[dict[str, str]] = {"option": "ride type", "product": "ride type"}
    docs: ClassVar[dict[str, str]] = {
        "get_fare_estimates": "Price and drive-time estimates for every ride type between two places."
    }
    products: ClassVar[dict[str, str]] = {"Lyft": "standard", "Lyft XL": "xl", "Lux Black": "premium"}
    id_prefix = "lyft_ride"


SERVICES: list[type[Service]] = [*peers(Booking, Expedia, Airbnb), *peers(Uber, Lyft)]
