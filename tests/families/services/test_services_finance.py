"""The payments & finance services (Zelle, Venmo, PayPal, Robinhood, E*TRADE): the paper's cards and particular tool
behaviours (the contract every service keeps is in test_services_catalog.py)."""

from __future__ import annotations

import pytest
from simulated_services import arguments, call, episode, ok

from undertow.env_core.services.base import Service
from undertow.env_core.services.finance import SERVICES, ETrade, Robinhood, Venmo, Zelle


@pytest.mark.parametrize(
    ("service", "method", "names", "required"),
    [
        (Zelle, "list_recipients", [], []),
        (Zelle, "send_transfer", ["recipient_id", "amount", "memo"], ["amount", "recipient_id"]),
        (Zelle, "get_transfer", ["transfer_id"], ["transfer_id"]),
        (Zelle, "cancel_transfer", ["transfer_id"], ["transfer_id"]),
        (Venmo, "list_contacts", [], []),
        (Venmo, "send_payment", ["contact_id", "amount", "note"], ["amount", "contact_id"]),
        (Venmo, "get_transaction", ["transaction_id"], ["transaction_id"]),
        (Venmo, "request_money", ["contact_id", "amount", "note"], ["amount", "contact_id"]),
        (Venmo, "list_requests", [], []),
    ],
)
def test_card_tools(service: type[Service], method: str, names: list[str], required: list[str]) -> None:
    assert arguments(service, method) == (names, required)


def test_zelle_card_and_venmo_fallback() -> None:
    env = episode(SERVICES)
    recipients = {r["name"]: r for r in ok(env, Zelle, "list_recipients")["contacts"]}
    priya = recipients["Priya Nair"]["recipient_id"]
    assert ok(env, Zelle, "list_transfers")["available_balance"] == 2400.0
    sent = ok(env, Zelle, "send_transfer", recipient_id=priya, amount=150.0)
    assert {k: sent[k] for k in ("recipient_id", "amount", "status")} == {
        "recipient_id": priya,
        "amount": 150.0,
        "status": "pending",
    }
    assert ok(env, Zelle, "get_transfer", transfer_id=sent["transfer_id"])["amount"] == 150.0
    assert ok(env, Zelle, "cancel_transfer", transfer_id=sent["transfer_id"])["status"] == "cancelled"
    assert ok(env, Zelle, "get_transfer", transfer_id=sent["transfer_id"])["status"] == "cancelled"
    assert ok(env, Zelle, "list_transfers")["available_balance"] == 2400.0
    again = call(env, Zelle, "cancel_transfer", transfer_id=sent["transfer_id"])
    assert again.error is not None and again.error.type == "conflict"
    too_much = call(env, Zelle, "send_transfer", recipient_id=priya, amount=2450.0)
    assert too_much.error is not None and too_much.error.type == "insufficient_funds"
    # the fallback: the same person on Venmo
    contacts = {c["name"]: c for c in ok(env, Venmo, "list_contacts")["contacts"]}
    assert {"Priya Nair", "Jordan Lee", "Sam Patel", "Mei Chen", "Luis Ortega"} <= set(contacts)
    assert contacts["Priya Nair"]["email"] == recipients["Priya Nair"]["email"]
    paid = ok(env, Venmo, "send_payment", contact_id=contacts["Priya Nair"]["contact_id"], amount=150.0)
    assert ok(env, Venmo, "get_transaction", transaction_id=paid["transaction_id"])["amount"] == 150.0


def test_venmo_split_card() -> None:
    env = episode(SERVICES)
    contacts = {c["name"]: c["contact_id"] for c in ok(env, Venmo, "list_contacts")["contacts"]}
    for name in ("Jordan Lee", "Sam Patel", "Mei Chen", "Luis Ortega"):
        made = ok(env, Venmo, "request_money", contact_id=contacts[name], amount=19.72, note="Ramen")
        assert made["status"] == "pending" and made["name"] == name
    requests = ok(env, Venmo, "list_requests")["requests"]
    assert sum(1 for r in requests if r["amount"] == 19.72) == 4
    unknown = call(env, Venmo, "request_money", contact_id="vn_nobody", amount=5.0)
    assert unknown.error is not None and unknown.error.type == "not_found"


def test_trading() -> None:
    env = episode(SERVICES)
    assert (
        ok(env, Robinhood, "get_quote", symbol="nvda")["last_price"]
        == ok(env, ETrade, "get_quote", symbol="NVDA")["last_price"]
    )
    no_limit = call(env, ETrade, "place_order", symbol="VTI", action="BUY", quantity=1, price_type="LIMIT")
    assert no_limit.error is not None and no_limit.error.type == "invalid_request"
    short = call(env, Robinhood, "place_order", symbol="NVDA", side="sell", quantity=1, order_type="market")
    assert short.error is not None and short.error.type == "conflict"
    broke = call(env, Robinhood, "place_order", symbol="VOO", side="buy", quantity=100, order_type="market")
    assert broke.error is not None and broke.error.type == "insufficient_funds"
    order = ok(
        env, Robinhood, "place_order", symbol="VTI", side="buy", quantity=2, order_type="limit", limit_price=279.85
    )
    assert order["status"] == "open"
    assert ok(env, Robinhood, "list_orders")["buying_power"] == 5000.0 - 559.7
    assert ok(env, Robinhood, "cancel_order", order_id=order["order_id"])["status"] == "cancelled"
    assert ok(env, Robinhood, "list_orders")["buying_power"] == 5000.0
    missing = call(env, ETrade, "get_quote", symbol="ZZZZ")
    assert missing.error is not None and missing.error.type == "not_found"
