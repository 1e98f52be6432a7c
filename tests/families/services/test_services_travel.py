"""The travel & lodging services (Booking.com, Expedia, Airbnb, Uber, Lyft): the paper's cards and particular tool
behaviours (the contract every service keeps is in test_services_catalog.py)."""

from __future__ import annotations

import pytest
from simulated_services import arguments, call, episode, ok

from undertow.env_core.services.base import Service
from undertow.env_core.services.travel import SERVICES, Airbnb, Booking, Expedia, Lyft, Uber

STAY = ["hotel_id", "check_in", "check_out", "guests"]


@pytest.mark.parametrize(
    ("service", "method", "names"),
    [
        (Booking, "search_hotels", ["city", "check_in", "check_out", "guests"]),
        (Booking, "create_booking", STAY),
        (Booking, "get_booking", ["booking_id"]),
        (Booking, "cancel_booking", ["booking_id"]),
        (Expedia, "search_hotels", ["city", "check_in", "check_out", "guests"]),
        (Expedia, "book_hotel", STAY),
        (Expedia, "get_booking", ["booking_id"]),
    ],
)
def test_card_tools(service: type[Service], method: str, names: list[str]) -> None:
    assert arguments(service, method) == (names, sorted(names))


def test_manhattan_card() -> None:
    env = episode(SERVICES)
    dates = {"check_in": "2026-04-07", "check_out": "2026-04-09", "guests": 2}
    on_booking = ok(env, Booking, "search_hotels", city="New York", **dates)
    assert "Manhattan Midtown Suites" in {h["name"] for h in on_booking["results"]}
    on_expedia = {h["name"]: h for h in ok(env, Expedia, "search_hotels", city="New York", **dates)["results"]}
    assert {"The Manhattan Beacon Hotel", "Budget Midtown"} <= set(on_expedia)
    beacon = on_expedia["The Manhattan Beacon Hotel"]
    booked = ok(env, Expedia, "book_hotel", hotel_id=beacon["hotel_id"], **dates)
    assert booked["status"] == "confirmed" and booked["total_price"] == 685.5 and booked["nights"] == 2
    assert ok(env, Expedia, "get_booking", booking_id=booked["booking_id"])["name"] == "The Manhattan Beacon Hotel"
    # the same stay on Booking.com: same price, and cancellable there
    suites = next(h for h in on_booking["results"] if h["name"] == "Manhattan Midtown Suites")
    made = ok(env, Booking, "create_booking", hotel_id=suites["hotel_id"], **dates)
    assert ok(env, Booking, "cancel_booking", booking_id=made["booking_id"])["status"] == "cancelled"
    assert ok(env, Booking, "get_booking", booking_id=made["booking_id"])["status"] == "cancelled"


def test_booking_errors() -> None:
    env = episode(SERVICES)
    past = call(
        env, Booking, "search_hotels", city="Manhattan", check_in="2026-03-01", check_out="2026-03-03", guests=2
    )
    assert past.error is not None and past.error.type == "invalid_request"
    reversed_dates = {"check_in": "2026-04-09", "check_out": "2026-04-07", "guests": 1}
    backwards = call(env, Expedia, "book_hotel", hotel_id="exp_budget_midtown", **reversed_dates)
    assert backwards.error is not None and backwards.error.type == "invalid_request"
    five = {"check_in": "2026-04-07", "check_out": "2026-04-09", "guests": 5}  # Budget Midtown sleeps 2
    crowd = call(env, Booking, "create_booking", hotel_id="bdc_budget_midtown", **five)
    assert crowd.error is not None and crowd.error.type == "invalid_request"
    missing = call(env, Booking, "get_booking", booking_id="bdc_bk_9999")
    assert missing.error is not None and missing.error.type == "not_found"
    # Airbnb lists only whole homes
    homes = ok(
        env, Airbnb, "search_listings", location="Lisbon", check_in="2026-05-14", check_out="2026-05-17", guests=2
    )
    assert {h["type"] for h in homes["results"]} == {"apartment"}


def test_rides_share_fares_and_resolve_places() -> None:
    env = episode(SERVICES)
    uber = ok(env, Uber, "get_fare_estimates", pickup="SFO", dropoff="Moscone Center")
    lyft = ok(env, Lyft, "get_fare_estimates", pickup="San Francisco International Airport", dropoff="moscone")
    assert uber["options"][0]["fare"] == lyft["options"][0]["fare"] and uber["duration_min"] == lyft["duration_min"]
    vague = call(env, Uber, "get_fare_estimates", pickup="airport", dropoff="Moscone Center")
    assert vague.error is not None and vague.error.type == "ambiguous"
    ride = ok(env, Lyft, "request_ride", pickup="SFO", dropoff="Moscone Center", product="Lyft")
    assert ride["fare"] == lyft["options"][0]["fare"] and ride["status"] == "driver_assigned"
    second = call(env, Lyft, "request_ride", pickup="Home", dropoff="Work", product="Lyft")
    assert second.error is not None and second.error.type == "conflict"
    assert ok(env, Lyft, "cancel_ride", ride_id=ride["ride_id"])["status"] == "cancelled"
    assert ok(env, Lyft, "get_ride", ride_id=ride["ride_id"])["status"] == "cancelled"
