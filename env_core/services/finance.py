"""Payments & finance services: person-to-person payments (Zelle, Venmo, PayPal) and brokerage (Robinhood,
E*TRADE).

The payment services know the same people (``data/payment_contacts.jsonl``: the same emails and phone numbers
everywhere) and the brokerages quote the same prices (``data/quotes.jsonl``, as of the last close), so that a
fallback from one service to its counterpart reaches the same facts.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from undertow.env_core.services.base import Category, Service, peers
from undertow.env_core.services.helpers import cancel, conflict, find, invalid, money, not_found, searched
from undertow.env_core.services.histories import held, histories, standing
from undertow.env_core.services.seeds import TODAY, Quote, tables
from undertow.env_core.services.states import Contact, Payment, PaymentsState, TradeOrder, TradingState
from undertow.env_core.tools import ToolExecutionError, tool

DOMAIN = "payments & finance"


# -------------------------------------------------------------------------------------------------------------------
# Payments


ContactId = Annotated[str, Field(description="The contact's id, as the contact list returns it")]
Amount = Annotated[float, Field(description="Amount in US dollars, e.g. 40.0", gt=0)]


class _Payments(Category, domain=DOMAIN, category="payments"):
    state: PaymentsState
    id_prefix: ClassVar[str]
    contact_field: ClassVar[str] = "contact_id"
    payment_field: ClassVar[str]
    note_field: ClassVar[str] = "note"
    finder: ClassVar[str] = "search_contacts"  # the read that finds a person's id
    send_status: ClassVar[Literal["pending", "completed"]] = "completed"
    max_amount: ClassVar[float] = 2500.0
    usernames: ClassVar[bool] = False

    @classmethod
    def contact_id(cls, key: str) -> str:
        return f"{cls.id_prefix}_{key}"

    @classmethod
    def initial_state(cls, day: date = TODAY) -> PaymentsState:
        past = histories(day)
        contacts = {
            cls.contact_id(p.key): Contact(
                contact_id=cls.contact_id(p.key),
                name=p.name,
                email=p.email,
                phone=p.phone,
                username="@" + p.name.replace(" ", "-") if cls.usernames else None,
            )
            for p in tables(day).payees
        }
        return PaymentsState(
            balance=standing(past.payment_accounts, cls.name).balance,
            contacts=contacts,
            payments={p.id: p for p in held(past.payments, cls.name, Payment)},
            requests={r.id: r for r in held(past.money_requests, cls.name, Payment)},
        )

    def _contact_record(self, c: Contact) -> dict[str, Any]:
        record = c.model_dump(exclude_none=True)
        record[self.contact_field] = record.pop("contact_id")
        return record

    def _contact(self, contact_id: str) -> Contact:
        return find(self.state.contacts, contact_id, self.contact_field.removesuffix("_id"))

    def _contacts(self, query: str = "") -> dict[str, Any]:
        q = query.strip().lower().lstrip("@")
        hits = [
            self._contact_record(c)
            for c in self.state.contacts.values()
            if not q or q in f"{c.name} {c.email} {c.phone} {c.username or ''}".lower()
        ]
        return {"query": query, "contacts": hits} if query else {"contacts": hits}

    def _record(self, p: Payment, id_field: str | None = None) -> dict[str, Any]:
        record = p.model_dump()
        record[id_field or self.payment_field] = record.pop("id")
        record[self.contact_field] = record.pop("contact_id")
        record[self.note_field] = record.pop("note")
        return record

    def _amount(self, amount: float) -> float:
        value = money(amount)
        if value <= 0:
            raise invalid("amount must be at least 0.01")
        if value > self.max_amount:
            raise invalid(f"amount {value} is over the {self.max_amount} limit for one payment")
        return value

    def _send(self, contact_id: str, amount: float, note: str, prefix: str) -> dict[str, Any]:
        contact, value = self._contact(contact_id), self._amount(amount)
        if value > self.state.balance:
            raise ToolExecutionError(
                f"amount {value} is more than the available balance {self.state.balance}", "insufficient_funds"
            )
        self.state.balance = money(self.state.balance - value)
        payment = Payment(
            id=self.world.new_id(prefix),
            contact_id=contact_id,
            name=contact.name,
            amount=value,
            note=note,
            status=self.send_status,
            created_at=self.world.stamp(),
        )
        self.state.payments[payment.id] = payment
        return self._record(payment)

    def _payment(self, payment_id: str) -> Payment:
        return find(self.state.payments, payment_id, self.payment_field.removesuffix("_id"))

    def _history(self, key: str) -> dict[str, Any]:
        return {
            "available_balance": self.state.balance,
            key: [self._record(p) for p in reversed(self.state.payments.values())],
        }

    def _request(self, contact_ids: list[str], amount: float, note: str) -> list[dict[str, Any]]:
        if not contact_ids:
            raise invalid("name at least one contact to request money from")
        contacts, value = [self._contact(c) for c in contact_ids], self._amount(amount)
        made = []
        for contact in contacts:
            request = Payment(
                id=self.world.new_id(f"{self.id_prefix}_req"),
                contact_id=contact.contact_id,
                name=contact.name,
                amount=value,
                note=note,
                status="pending",
                created_at=self.world.stamp(),
            )
            self.state.requests[request.id] = request
            made.append(self._record(request, "request_id"))
        return made


class _Requesting(_Payments):
    """A payment app that also requests money (Venmo, PayPal); its tool templates name ``{finder}``."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        cls.words = {"finder": cls.finder, **cls.__dict__.get("words", {})}
        super().__init_subclass__(**kwargs)

    @tool("read", failure_hint="An unknown id is a not_found error; take ids from {name}_{finder}.")
    def get_contact(self, contact_id: ContactId) -> dict[str, Any]:
        """One contact by id: name, email address and phone number."""
        return self._contact_record(self._contact(contact_id))

    @tool("readback", failure_hint="Shows only what persisted; a request missing here was not sent.")
    def list_requests(self) -> dict[str, Any]:
        """Every money request you have sent, newest first."""
        return {"requests": [self._record(r, "request_id") for r in reversed(self.state.requests.values())]}


class Zelle(_Payments, name="zelle", title="Zelle"):
    id_prefix = "zr"
    contact_field = "recipient_id"
    payment_field = "transfer_id"
    note_field = "memo"
    send_status = "pending"
    finder = "search_recipients"

    @tool(
        "read", failure_hint="A recipient missing here may be listed under another name; try zelle_search_recipients."
    )
    def list_recipients(self) -> dict[str, Any]:
        """Every enrolled recipient: name, email, phone and recipient id."""
        return self._contacts()

    @tool("read", failure_hint="Several people can match a name; confirm the one you mean with zelle_get_recipient.")
    def search_recipients(
        self, query: Annotated[str, Field(description="Name, email or phone to look for, e.g. 'Priya'")]
    ) -> dict[str, Any]:
        """Find enrolled recipients whose name, email or phone contains the query."""
        return self._contacts(query)

    @tool("read", failure_hint="An unknown id is a not_found error; take ids from zelle_list_recipients.")
    def get_recipient(self, recipient_id: ContactId) -> dict[str, Any]:
        """One enrolled recipient by id: name, email address and phone number."""
        return self._contact_record(self._contact(recipient_id))

    @tool(
        "write",
        failure_hint="The returned amount or status can be wrong; compare it with the request and confirm with "
        "zelle_get_transfer.",
    )
    def send_transfer(
        self,
        recipient_id: ContactId,
        amount: Amount,
        memo: Annotated[str, Field(description="Optional memo the recipient sees")] = "",
    ) -> dict[str, Any]:
        """Send money from the checking account to an enrolled recipient; the transfer starts as pending."""
        return self._send(recipient_id, amount, memo, "zt")

    @tool("readback", failure_hint="An unknown id is a not_found error; list transfers with zelle_list_transfers.")
    def get_transfer(self, transfer_id: Annotated[str, Field(description="The transfer's id")]) -> dict[str, Any]:
        """One transfer by id: recipient, amount, memo and status."""
        return self._record(self._payment(transfer_id))

    @tool("write", failure_hint="Only a pending transfer can be cancelled; confirm the status with zelle_get_transfer.")
    def cancel_transfer(self, transfer_id: Annotated[str, Field(description="The transfer's id")]) -> dict[str, Any]:
        """Cancel a pending transfer; the amount goes back to the available balance."""
        transfer = self._payment(transfer_id)
        cancel(transfer, "transfer", transfer_id, ("pending",))
        self.state.balance = money(self.state.balance + transfer.amount)
        return {"transfer_id": transfer_id, "status": "cancelled", "amount": transfer.amount}

    @tool("readback", failure_hint="Shows only what persisted; a transfer missing here was not sent.")
    def list_transfers(self) -> dict[str, Any]:
        """The available balance and every transfer, newest first."""
        return self._history("transfers")


FriendIds = Annotated[list[str], Field(description="Ids of the friends to ask, from list_contacts")]


class Venmo(_Requesting, name="venmo", title="Venmo"):
    id_prefix = "vn"
    payment_field = "transaction_id"
    finder = "list_contacts"
    docs: ClassVar[dict[str, str]] = {
        "get_contact": "One Venmo friend by id: name, username, email address and phone number."
    }
    usernames = True

    @tool("read", failure_hint="Take the contact_id from here; names alone are not accepted by payment tools.")
    def list_contacts(self) -> dict[str, Any]:
        """Every Venmo friend: name, username, email, phone and contact id."""
        return self._contacts()

    @tool(
        "write",
        failure_hint="The returned amount can be wrong; compare it with the request and confirm with "
        "venmo_get_transaction.",
    )
    def send_payment(
        self,
        contact_id: ContactId,
        amount: Amount,
        note: Annotated[str, Field(description="Optional note the friend sees")] = "",
    ) -> dict[str, Any]:
        """Pay a Venmo friend from the Venmo balance."""
        return self._send(contact_id, amount, note, "vt")

    @tool("readback", failure_hint="An unknown id is a not_found error: the payment did not persist.")
    def get_transaction(
        self, transaction_id: Annotated[str, Field(description="The payment's transaction id")]
    ) -> dict[str, Any]:
        """One payment by transaction id: friend, amount, note and status."""
        return self._record(self._payment(transaction_id))

    @tool("write", failure_hint="A request can silently not be sent; confirm with venmo_list_requests.")
    def request_money(
        self,
        contact_id: ContactId,
        amount: Amount,
        note: Annotated[str, Field(description="What the request is for")] = "",
    ) -> dict[str, Any]:
        """Ask one Venmo friend to pay you an amount."""
        return self._request([contact_id], amount, note)[0]

    @tool(
        "write",
        failure_hint="Some of the requests can silently not be sent; confirm each friend with venmo_list_requests.",
    )
    def request_split(
        self,
        contact_ids: FriendIds,
        amount_each: Annotated[float, Field(description="Amount each friend owes in US dollars", gt=0)],
        note: Annotated[str, Field(description="What the requests are for")] = "",
    ) -> dict[str, Any]:
        """Split a bill: ask several Venmo friends for the same amount each."""
        return {"requests": self._request(contact_ids, amount_each, note)}


class PayPal(_Requesting, name="paypal", title="PayPal"):
    id_prefix = "pp"
    payment_field = "payment_id"

    @tool("read", failure_hint="Several people can match a name; confirm the one you mean with paypal_get_contact.")
    def search_contacts(
        self, query: Annotated[str, Field(description="Name, email or phone to look for; empty lists everyone")]
    ) -> dict[str, Any]:
        """Find contacts whose name, email or phone contains the query."""
        return self._contacts(query)

    @tool(
        "write",
        failure_hint="The returned amount can be wrong; compare it with the request and confirm with "
        "paypal_list_activity.",
    )
    def send_money(
        self,
        contact_id: ContactId,
        amount: Amount,
        note: Annotated[str, Field(description="Optional note the contact sees")] = "",
    ) -> dict[str, Any]:
        """Send money to a contact from the PayPal balance."""
        return self._send(contact_id, amount, note, "pp_pay")

    @tool("readback", failure_hint="An unknown id is a not_found error: the payment did not persist.")
    def get_payment(self, payment_id: Annotated[str, Field(description="The payment's id")]) -> dict[str, Any]:
        """One payment by id: contact, amount, note and status."""
        return self._record(self._payment(payment_id))

    @tool("readback", failure_hint="Shows only what persisted; a payment missing here was not sent.")
    def list_activity(self) -> dict[str, Any]:
        """The PayPal balance and every payment sent, newest first."""
        return self._history("payments")

    @tool(
        "write",
        failure_hint="Some of the requests can silently not be sent; confirm each contact with paypal_list_requests.",
    )
    def request_money(
        self,
        contact_ids: Annotated[list[str], Field(description="Ids of the contacts to ask, from search_contacts")],
        amount: Annotated[float, Field(description="Amount each contact owes in US dollars", gt=0)],
        note: Annotated[str, Field(description="What the request is for")] = "",
    ) -> dict[str, Any]:
        """Ask one or more contacts to pay you the same amount each."""
        return {"requests": self._request(contact_ids, amount, note)}


# -------------------------------------------------------------------------------------------------------------------
# Trading


SymbolArg = Annotated[str, Field(description="Ticker symbol, e.g. 'NVDA'")]
QuantityArg = Annotated[int, Field(description="Number of whole shares", ge=1)]
LimitArg = Annotated[float | None, Field(description="Limit price in US dollars; only for limit orders")]
OrderId = Annotated[str, Field(description="The order's id")]
SymbolsArg = Annotated[list[str], Field(description="Ticker symbols to add, e.g. ['AMD', 'TSM']")]
QueryArg = Annotated[str, Field(description="Company or fund name, or a ticker")]


class _Trading(Category, domain=DOMAIN, category="trading"):
    """A brokerage; ``words``: ``security`` (what a quote is of), ``filled`` (what a done order did), ``watchlist``."""

    state: TradingState

    @classmethod
    def initial_state(cls, day: date = TODAY) -> TradingState:
        past = histories(day)
        account = standing(past.brokerage_accounts, cls.name)
        return TradingState(
            buying_power=account.buying_power,
            positions=dict(account.positions),
            orders={o.order_id: o for o in held(past.trade_orders, cls.name, TradeOrder)},
            watchlist=list(account.watchlist),
        )

    def _quotes(self) -> tuple[Quote, ...]:
        """The quotes of the world's day."""
        return tables(self.world.as_of).quotes

    def _quote(self, symbol: str) -> Quote:
        found = next((q for q in self._quotes() if q.symbol == symbol.strip().upper()), None)
        if found is None:
            raise not_found("symbol", symbol)
        return found

    @tool("read", failure_hint="A quote can be stale; check quote_time against the time you need.")
    def get_quote(self, symbol: SymbolArg) -> dict[str, Any]:
        """The latest price of one {security}, with the previous close and the change."""
        q = self._quote(symbol)
        change = money(q.last_price - q.prev_close)
        return {
            **q.model_dump(),
            "change": change,
            "change_pct": money(change / q.prev_close * 100),
        }

    @tool("read", failure_hint="Prices in search results can lag; confirm the price with {name}_get_quote.")
    def search_instruments(self, query: QueryArg) -> dict[str, Any]:
        """Find stocks and ETFs whose name or ticker matches the query."""
        q = searched(query, "name a company, fund or ticker to search for")
        words = q.split()
        hits = [
            {"symbol": x.symbol, "name": x.name, "kind": x.kind, "last_price": x.last_price}
            for x in self._quotes()
            if x.symbol.lower() == q or all(w in x.name.lower() for w in words)
        ]
        return {"query": query, "results": hits}

    @tool("write", failure_hint="An order id does not prove the order persisted; confirm with {name}_list_orders.")
    def place_order(
        self,
        symbol: SymbolArg,
        side: Annotated[Literal["buy", "sell"], Field(description="Buy or sell")],
        quantity: QuantityArg,
        order_type: Annotated[Literal["market", "limit"], Field(description="Market or limit order")],
        limit_price: LimitArg = None,
    ) -> dict[str, Any]:
        """Place a market or limit order for whole shares."""
        buy = side.lower() == "buy"  # a provider may spell them BUY and LIMIT
        kind: Literal["market", "limit"] = "limit" if order_type.lower() == "limit" else "market"
        q = self._quote(symbol)
        if quantity < 1:
            raise invalid("quantity must be at least 1 share")
        if kind == "limit":
            if limit_price is None or limit_price <= 0:
                raise invalid("a limit order needs a positive limit_price")
            limit_price = money(limit_price)
        elif limit_price is not None:
            raise invalid("a market order takes no limit_price")
        if buy:
            cost = money(quantity * (limit_price or q.last_price))
            if cost > self.state.buying_power:
                raise ToolExecutionError(
                    f"order needs {cost} but buying power is {self.state.buying_power}", "insufficient_funds"
                )
            self.state.buying_power = money(self.state.buying_power - cost)
        else:
            held = self.state.positions.get(q.symbol, 0)
            if quantity > held:
                raise conflict(f"cannot sell {quantity} {q.symbol}: {held} shares held")
        order = TradeOrder(
            order_id=self.world.new_id("ord"),
            symbol=q.symbol,
            side="buy" if buy else "sell",
            quantity=quantity,
            order_type=kind,
            limit_price=limit_price,
            # the market is closed at the simulated clock: market orders wait for the open, limits rest on the book
            status="queued" if kind == "market" else "open",
            placed_at=self.world.stamp(),
        )
        self.state.orders[order.order_id] = order
        return order.model_dump()

    @tool("write", failure_hint="Only queued or open orders can be cancelled; confirm with {name}_list_orders.")
    def cancel_order(self, order_id: OrderId) -> dict[str, Any]:
        """Cancel an order that has not {filled}."""
        order = find(self.state.orders, order_id, "order")
        cancel(order, "order", order_id, ("queued", "open"))
        if order.side == "buy":
            price = order.limit_price or self._quote(order.symbol).last_price
            self.state.buying_power = money(self.state.buying_power + order.quantity * price)
        return {"order_id": order_id, "status": "cancelled"}

    @tool("readback", failure_hint="Shows only what persisted; an order missing here was not placed.")
    def list_orders(self) -> dict[str, Any]:
        """Buying power and every order, newest first, with its status."""
        return {
            "buying_power": self.state.buying_power,
            "orders": [o.model_dump() for o in reversed(self.state.orders.values())],
        }

    @tool("write", failure_hint="Adding can silently drop some symbols; confirm with {name}_get_watchlist.")
    def add_to_watchlist(self, symbols: SymbolsArg) -> dict[str, Any]:
        """Add one or more tickers to the {watchlist}."""
        if not symbols:
            raise invalid("name at least one symbol")
        found = [self._quote(s).symbol for s in symbols]
        added = [s for s in dict.fromkeys(found) if s not in self.state.watchlist]
        self.state.watchlist.extend(added)
        return {"status": "added", "added": added}

    @tool("readback", failure_hint="Shows only what persisted; re-add any symbol missing here.")
    def get_watchlist(self) -> dict[str, Any]:
        """The tickers on the {watchlist} with their latest prices."""
        quotes = {q.symbol: q for q in self._quotes()}
        return {
            "symbols": [
                {"symbol": s, "name": quotes[s].name, "last_price": quotes[s].last_price} for s in self.state.watchlist
            ]
        }


class Robinhood(_Trading, name="robinhood", title="Robinhood"):
    words: ClassVar[dict[str, str]] = {"security": "stock or ETF", "filled": "filled", "watchlist": "watchlist"}


class ETrade(_Trading, name="etrade", title="E*TRADE"):
    words: ClassVar[dict[str, str]] = {"security": "security", "filled": "executed", "watchlist": "watch list"}
    renames: ClassVar[dict[str, str]] = {"search_instruments": "lookup_symbol"}
    arg_names: ClassVar[dict[str, str]] = {"side": "action", "order_type": "price_type"}
    arg_types: ClassVar[dict[str, Any]] = {
        "action": Annotated[Literal["BUY", "SELL"], Field(description="BUY or SELL")],
        "price_type": Annotated[Literal["MARKET", "LIMIT"], Field(description="MARKET or LIMIT")],
    }
    docs: ClassVar[dict[str, str]] = {
        "lookup_symbol": "Look up the ticker symbols of companies and funds whose name matches the query.",
        "place_order": "Place an equity order (market or limit) for whole shares.",
    }
    hints: ClassVar[dict[str, str]] = {
        "lookup_symbol": "Prices in lookup results can lag; confirm the price with etrade_get_quote."
    }


SERVICES: list[type[Service]] = [*peers(Zelle, Venmo, PayPal), *peers(Robinhood, ETrade)]
