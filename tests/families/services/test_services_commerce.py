"""The commerce & food services (Uber Eats, DoorDash, Grubhub, Amazon, Walmart, Instacart, Shipt): the paper's cards
and particular tool behaviours (the contract every service keeps is in test_services_catalog.py)."""

from __future__ import annotations

import pytest
from simulated_services import arguments, call, episode, ok

from undertow.env_core.services.base import Service
from undertow.env_core.services.commerce import SERVICES, DoorDash, Grubhub, Instacart, Shipt, UberEats, Walmart

FOOD = [
    ("search_restaurants", ["query"]),
    ("get_menu", ["restaurant_id"]),
    ("submit_order", ["restaurant_id", "items"]),
    ("get_order", ["order_id"]),
    ("cancel_order", ["order_id"]),
]
CARD = [
    *[(UberEats, m, a) for m, a in FOOD],
    *[(DoorDash, m, a) for m, a in FOOD],
    (Walmart, "get_purchase_details", ["order_id"]),
    (Walmart, "get_pickup_slots", ["store_id", "date"]),
    (Walmart, "reserve_pickup_slot", ["order_id", "slot_id"]),
    (Walmart, "get_pickup", ["order_id"]),
    (Instacart, "get_delivery_slots", ["store"]),
    (Instacart, "reserve_delivery_slot", ["slot_id"]),
]


@pytest.mark.parametrize(("service", "method", "names"), CARD, ids=lambda x: getattr(x, "name", str(x)))
def test_card_tools(service: type[Service], method: str, names: list[str]) -> None:
    assert arguments(service, method) == (names, sorted(names))
    assert "get_reservation" in Instacart.tool_methods()


@pytest.mark.parametrize("service", [UberEats, DoorDash, Grubhub], ids=lambda s: s.name)
def test_ramen_card(service: type[Service]) -> None:
    env = episode(SERVICES)
    found = ok(env, service, "search_restaurants", query="Ramen House")["restaurants"]
    assert [r["name"] for r in found] == ["Ramen House"]
    rid = found[0]["restaurant_id"]
    if service is UberEats:
        assert rid == "REST-RAMEN-001"
    menu = {i["name"]: i for i in ok(env, service, "get_menu", restaurant_id=rid)["items"]}
    assert menu["Tonkotsu Ramen"]["price"] == 16.5
    order = ok(
        env,
        service,
        "submit_order",
        restaurant_id=rid,
        items=[{"item_id": menu["Tonkotsu Ramen"]["item_id"], "quantity": 5}],
    )
    receipt = ok(env, service, "get_order", order_id=order["order_id"])
    assert {k: receipt[k] for k in ("subtotal", "service_fee", "tax", "total")} == {
        "subtotal": 82.5,
        "service_fee": 8.25,
        "tax": 7.84,
        "total": 98.59,
    }
    assert ok(env, service, "cancel_order", order_id=order["order_id"])["status"] == "cancelled"
    assert ok(env, service, "get_order", order_id=order["order_id"])["status"] == "cancelled"
    for items in ([], [{"item_id": "Tonkotsu", "quantity": 5}]):
        bad = call(env, service, "submit_order", restaurant_id=rid, items=items)
        assert bad.error is not None and bad.error.type == "invalid_request"
        assert menu["Tonkotsu Ramen"]["item_id"] in bad.error.message


def test_walmart_pickup_card() -> None:
    env = episode(SERVICES)
    order = ok(env, Walmart, "get_purchase_details", order_id="WM-20260319-4417")
    assert order["ready_at"] == "2026-03-20T12:00:00Z"
    slots = ok(env, Walmart, "get_pickup_slots", store_id=order["store_id"], date="2026-03-20")["slots"]
    assert [s["start"][11:16] for s in slots] == ["08:00", "10:00", "14:00", "16:00"]
    for early in slots[:2]:
        refused = call(env, Walmart, "reserve_pickup_slot", order_id=order["order_id"], slot_id=early["slot_id"])
        assert refused.error is not None and refused.error.type == "conflict"
    assert ok(env, Walmart, "get_pickup", order_id=order["order_id"])["pickup"] is None
    ok(env, Walmart, "reserve_pickup_slot", order_id=order["order_id"], slot_id=slots[2]["slot_id"])
    assert ok(env, Walmart, "get_pickup", order_id=order["order_id"])["pickup"]["start"] == slots[2]["start"]


@pytest.mark.parametrize(
    ("service", "slots", "reserve", "field"),
    [
        (Instacart, "get_delivery_slots", "reserve_delivery_slot", "slot_id"),
        (Shipt, "get_delivery_windows", "reserve_delivery_window", "window_id"),
    ],
)
def test_whole_foods_delivery_card(service: type[Service], slots: str, reserve: str, field: str) -> None:
    env = episode(SERVICES)
    listed = ok(env, service, slots, store="Whole Foods")
    assert listed["store"] == "Whole Foods Market"
    first = next(s for s in listed["slots"] if s["available"])
    assert (first["start"], first["end"]) == ("2026-03-21T15:00:00Z", "2026-03-21T17:00:00Z")
    full = next(s for s in listed["slots"] if not s["available"])
    refused = call(env, service, reserve, **{field: full[field]})
    assert refused.error is not None and refused.error.type == "conflict"
    ok(env, service, reserve, **{field: first[field]})
    assert ok(env, service, "get_reservation")["reservation"]["start"] == "2026-03-21T15:00:00Z"
