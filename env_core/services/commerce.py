"""Commerce & food services: food delivery (Uber Eats, DoorDash, Grubhub), retail (Amazon, Walmart) and grocery
delivery (Instacart, Shipt).

Counterparts seed from the same records: the same restaurants, menus, prices and fees (``data/restaurants.jsonl``),
the same products and prices (``data/products.jsonl``), the same grocery items and delivery windows
(``data/grocery_stores.jsonl``), so that a fallback from one service to its counterpart reaches the same facts. Each
category's providers share its tools (:class:`_Food`; the catalog and cart of :class:`_Cart`, with :class:`_Retail`
and :class:`_Grocery`), each in its own words and ids; Walmart also holds an order for store pickup (the paper's
pickup card).
"""

from __future__ import annotations

from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from undertow.env_core.services.base import Category, Service, peers
from undertow.env_core.services.helpers import (
    cancel,
    conflict,
    find,
    lines_field,
    money,
    not_found,
    parse_lines,
    parse_time,
    searched,
)
from undertow.env_core.services.histories import cart_of, held, histories
from undertow.env_core.services.seeds import RESTAURANTS, TODAY, GroceryStore, Product, Restaurant, tables
from undertow.env_core.services.states import (
    AmazonState,
    DeliveryReservation,
    FoodOrder,
    FoodState,
    GroceryState,
    OrderLine,
    PickupOrder,
    RetailOrder,
    Store,
    WalmartState,
)
from undertow.env_core.tools import ToolExecutionError, tool

DOMAIN = "commerce & food"


# -------------------------------------------------------------------------------------------------------------------
# Food delivery


CENT = Decimal("0.01")


SERVICE_FEE_RATE = Decimal("0.10")
TAX_RATE = Decimal("0.095")  # San Francisco sales tax on prepared food


def bill(lines: list[tuple[float, int]]) -> dict[str, float]:
    """Subtotal, service fee (10%), tax (9.5%) and total of (unit price, quantity) lines, each rounded to cents:
    five Tonkotsu Ramen at 16.50 come to 82.50 + 8.25 + 7.84 = 98.59."""
    subtotal = sum((Decimal(str(price)) * quantity for price, quantity in lines), Decimal(0))
    fee = (subtotal * SERVICE_FEE_RATE).quantize(CENT, rounding=ROUND_HALF_UP)
    tax = (subtotal * TAX_RATE).quantize(CENT, rounding=ROUND_HALF_UP)
    return {
        "subtotal": money(subtotal),
        "service_fee": money(fee),
        "tax": money(tax),
        "total": money(subtotal + fee + tax),
    }


RestaurantId = Annotated[str, Field(description="The restaurant's id as search_restaurants returns it")]
FoodOrderId = Annotated[str, Field(description="The order's id")]
ItemsArg = Annotated[list[dict[str, Any]], lines_field("Menu items to order", "menu item", "item_id", "get_menu")]


class _Food(Category, domain=DOMAIN, category="food_delivery"):
    """A food delivery service; ``words``: ``place`` (what it calls a restaurant)."""

    state: FoodState
    item_prefix: ClassVar[str]
    order_prefix: ClassVar[str]
    query_example: ClassVar[str]  # the example in search_restaurants' query description
    words: ClassVar[dict[str, str]] = {"place": "restaurant"}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        if "query_example" in cls.__dict__:
            example = f"Restaurant name, dish or cuisine, e.g. {cls.query_example!r}"
            cls.arg_types = {"query": Annotated[str, Field(description=example)]}
        super().__init_subclass__(**kwargs)

    @classmethod
    def rid(cls, key: str) -> str:
        """The service's id of a restaurant (``data/restaurants.jsonl`` has every service's)."""
        return next(r.ids[cls.name] for r in RESTAURANTS if r.key == key)

    @classmethod
    def item_id(cls, key: str) -> str:
        return f"{cls.item_prefix}{key}"

    @classmethod
    def initial_state(cls, day: date = TODAY) -> FoodState:
        restaurants = {}
        for r in tables(day).restaurants:
            copy = r.model_copy(deep=True)
            for item in copy.menu:
                item.key = cls.item_id(item.key)
            restaurants[cls.rid(r.key)] = copy
        orders = {o.order_id: o for o in held(histories(day).food_orders, cls.name, FoodOrder)}
        return FoodState(restaurants=restaurants, orders=orders)

    @staticmethod
    def _make_order(state: FoodState, order_id: str, rid: str, quantities: dict[str, int], when: str) -> FoodOrder:
        r = state.restaurants[rid]
        prices = {item.key: item for item in r.menu}
        lines = [
            OrderLine(
                item_id=key,
                name=prices[key].name,
                quantity=q,
                unit_price=prices[key].price,
                line_total=money(Decimal(str(prices[key].price)) * q),
            )
            for key, q in quantities.items()
        ]
        totals = bill([(line.unit_price, line.quantity) for line in lines])
        return FoodOrder(
            order_id=order_id,
            restaurant_id=rid,
            restaurant_name=r.name,
            items=lines,
            status="placed",
            placed_at=when,
            **totals,
        )

    def _restaurant(self, restaurant_id: str) -> Restaurant:
        return find(self.state.restaurants, restaurant_id, "restaurant")

    @tool("read", failure_hint="Search results can miss or repeat {place}s; confirm one with {name}_get_menu.")
    def search_restaurants(
        self, query: Annotated[str, Field(description="Restaurant name, dish or cuisine")]
    ) -> dict[str, Any]:
        """Find restaurants that deliver by name, dish or cuisine, with rating and delivery time."""
        q = searched(query, "name a restaurant, dish or cuisine to search for")
        hits = [
            {
                "restaurant_id": rid,
                "name": r.name,
                "cuisine": r.cuisine,
                "rating": r.rating,
                "delivery_eta": r.delivery_eta,
                "address": r.address,
            }
            for rid, r in self.state.restaurants.items()
            if q in f"{r.name} {r.cuisine} {' '.join(r.tags)}".lower() or any(q in item.name.lower() for item in r.menu)
        ]
        return {"query": query, "restaurants": hits}

    @tool("read", failure_hint="Prices can be out of date; the order's receipt from {name}_get_order is binding.")
    def get_menu(self, restaurant_id: RestaurantId) -> dict[str, Any]:
        """A {place}'s menu: every item with its id and price."""
        r = self._restaurant(restaurant_id)
        return {
            "restaurant_id": restaurant_id,
            "name": r.name,
            "items": [
                {"item_id": i.key, "name": i.name, "price": i.price, "description": i.description} for i in r.menu
            ],
        }

    @tool(
        "write",
        failure_hint="An order id does not prove the order is right; check items and total with {name}_get_order.",
    )
    def submit_order(self, restaurant_id: RestaurantId, items: ItemsArg) -> dict[str, Any]:
        """Place a delivery order of menu items; returns the order with subtotal, service fee, tax and total."""
        r = self._restaurant(restaurant_id)
        quantities = parse_lines(items, "item_id", {i.key: i for i in r.menu}, "menu item")
        order = self._make_order(
            self.state, self.world.new_id(self.order_prefix), restaurant_id, quantities, self.world.stamp()
        )
        self.state.orders[order.order_id] = order
        return {**order.model_dump(), "delivery_eta": r.delivery_eta}

    @tool("readback", failure_hint="Compare the total with the menu prices; a wrong total means a corrupted order.")
    def get_order(self, order_id: FoodOrderId) -> dict[str, Any]:
        """One order by id: items, subtotal, service fee, tax, total and status."""
        return find(self.state.orders, order_id, "order").model_dump()

    @tool("write", failure_hint="Only a placed order can be cancelled; confirm with {name}_get_order.")
    def cancel_order(self, order_id: FoodOrderId) -> dict[str, Any]:
        """Cancel an order that has not been delivered; the total is refunded."""
        order = find(self.state.orders, order_id, "order")
        cancel(order, "order", order_id, ("placed",))
        return {"order_id": order_id, "status": "cancelled", "refund": order.total}

    @tool("readback", failure_hint="Shows only what persisted; an order missing here was not placed.")
    def list_orders(self) -> dict[str, Any]:
        """Every order on the account, with its items, total and status."""
        return {"orders": [o.model_dump() for o in self.state.orders.values()]}


class UberEats(_Food, name="ubereats", title="Uber Eats"):
    item_prefix = "ITEM-"
    order_prefix = "ue_order"
    query_example = "Ramen House"
    docs: ClassVar[dict[str, str]] = {
        "search_restaurants": "Find restaurants that deliver, by name, dish or cuisine, with rating and delivery time."
    }


class DoorDash(_Food, name="doordash", title="DoorDash"):
    item_prefix = "dd_item_"
    order_prefix = "dd_order"
    query_example = "ramen"
    words: ClassVar[dict[str, str]] = {"place": "store"}
    docs: ClassVar[dict[str, str]] = {
        "search_restaurants": "Search restaurants that deliver by name, dish or cuisine, with rating and delivery time."
    }


class Grubhub(_Food, name="grubhub", title="Grubhub"):
    item_prefix = "gh_item_"
    order_prefix = "gh_order"
    query_example = "curry"


# -------------------------------------------------------------------------------------------------------------------
# Carts (retail and groceries) and retail


CartItems = Annotated[list[dict[str, Any]], lines_field("Products to add", "product", "product_id", "search_products")]


class _Cart(Category, domain=DOMAIN):
    """A catalog plus a cart: the part of the retail and grocery services that is the same everywhere. ``words``:
    ``cart``, and what the descriptions (``products``) and the failure hints (``items``, ``item``) call the wares."""

    words: ClassVar[dict[str, str]] = {"cart": "cart", "products": "products", "items": "items", "item": "item"}
    id_field: ClassVar[str] = "product_id"
    id_prefix: ClassVar[str]

    @classmethod
    def product_id(cls, key: str) -> str:
        return f"{cls.id_prefix}_{key}"

    def _catalog(self) -> dict[str, Product]:
        raise NotImplementedError

    def _product(self, product_id: str) -> Product:
        return find(self._catalog(), product_id, self.id_field.removesuffix("_id"))

    def _card(self, product_id: str, p: Product) -> dict[str, Any]:
        return {self.id_field: product_id, **p.model_dump(exclude={"key"})}

    def _find(self, query: str, catalog: dict[str, Product]) -> list[dict[str, Any]]:
        words = searched(query, "name a product to search for").split()
        return [
            self._card(pid, p)
            for pid, p in catalog.items()
            if all(w in f"{p.name} {p.description}".lower() for w in words)
        ]

    @tool("write", failure_hint="Adding can silently drop some {items}; confirm every line with {name}_get_cart.")
    def add_to_cart(self, items: CartItems) -> dict[str, Any]:
        """Add one or more {products} to the {cart}."""
        catalog = self._catalog()
        quantities = parse_lines(items, self.id_field, catalog, "product")
        for pid in quantities:
            if not catalog[pid].in_stock:
                raise conflict(f"{catalog[pid].name} ({pid}) is out of stock")
        cart: dict[str, int] = self.state.cart
        for pid, q in quantities.items():
            cart[pid] = cart.get(pid, 0) + q
        return {"status": "added", "added": [{self.id_field: pid, "quantity": q} for pid, q in quantities.items()]}

    @tool("readback", failure_hint="Shows only what persisted; re-add any {item} missing here.")
    def get_cart(self) -> dict[str, Any]:
        """The {cart}: every line with quantity and price, and the subtotal."""
        catalog = self._catalog()
        lines = [
            {
                self.id_field: pid,
                "name": catalog[pid].name,
                "quantity": q,
                "unit_price": catalog[pid].price,
                "line_total": money(Decimal(str(catalog[pid].price)) * q),
            }
            for pid, q in self.state.cart.items()
        ]
        subtotal = money(sum((Decimal(str(line["line_total"])) for line in lines), Decimal(0)))
        return {"items": lines, "subtotal": subtotal}


ProductId = Annotated[str, Field(description="The product's id as search_products returns it")]
SearchArg = Annotated[str, Field(description="What to look for, e.g. 'power bank'")]


class _Retail(_Cart, category="retail"):
    """A retailer (Amazon, Walmart): the shared catalog (``data/products.jsonl``) and cart."""

    def _catalog(self) -> dict[str, Product]:
        products: dict[str, Product] = self.state.products
        return products

    @tool("read", failure_hint="Search results can be incomplete or repeat items; confirm with {name}_get_product.")
    def search_products(self, query: SearchArg) -> dict[str, Any]:
        """Search the catalog; every match with its id, price and rating."""
        return {"query": query, "products": self._find(query, self.state.products)}

    @tool("read", failure_hint="An unknown id is a not_found error; take ids from {name}_search_products.")
    def get_product(self, product_id: ProductId) -> dict[str, Any]:
        """One product by id: name, price, rating, description and stock."""
        return self._card(product_id, self._product(product_id))


class Amazon(_Retail, name="amazon", title="Amazon"):
    state: AmazonState
    id_prefix = "amz"
    words: ClassVar[dict[str, str]] = {"cart": "shopping cart"}
    SHIPPING: ClassVar[dict[str, float]] = {"standard": 0.0, "two_day": 0.0, "one_day": 5.99}

    @classmethod
    def initial_state(cls, day: date = TODAY) -> AmazonState:
        return AmazonState(
            products={cls.product_id(p.key): p.model_copy() for p in tables(day).products},
            cart=cart_of(cls.name, day),
            orders={o.order_id: o for o in held(histories(day).retail_orders, cls.name, RetailOrder)},
        )

    @tool("write", failure_hint="An order number does not prove the order persisted; confirm with amazon_get_order.")
    def place_order(
        self,
        shipping_speed: Annotated[
            Literal["standard", "two_day", "one_day"], Field(description="Delivery speed")
        ] = "two_day",
    ) -> dict[str, Any]:
        """Check out: order everything in the cart, which is then emptied."""
        cart = self.get_cart()
        if not cart["items"]:
            raise conflict("the cart is empty")
        shipping = self.SHIPPING[shipping_speed]
        order = RetailOrder(
            order_id=self.world.new_id("amz_order"),
            items=cart["items"],
            subtotal=cart["subtotal"],
            shipping=shipping,
            total=money(Decimal(str(cart["subtotal"])) + Decimal(str(shipping))),
            shipping_speed=shipping_speed,
            status="placed",
            placed_at=self.world.stamp(),
        )
        self.state.orders[order.order_id] = order
        self.state.cart = {}
        return order.model_dump()

    @tool("readback", failure_hint="A missing order is a not_found error: it was not placed.")
    def get_order(self, order_id: Annotated[str, Field(description="The order's number")]) -> dict[str, Any]:
        """One order by number: items, totals, delivery speed and status."""
        return find(self.state.orders, order_id, "order").model_dump()

    @tool("readback", failure_hint="Shows only what persisted; an order missing here was not placed.")
    def list_orders(self) -> dict[str, Any]:
        """Every order on the account, newest last."""
        return {"orders": [o.model_dump() for o in self.state.orders.values()]}


# the arguments of Walmart's pickup tools
OrderNumber = Annotated[str, Field(description="The order number")]
StoreId = Annotated[str, Field(description="The store's id, as the order details give it")]
PickupDate = Annotated[str, Field(description="Pickup date, YYYY-MM-DD")]
PickupSlotId = Annotated[str, Field(description="The slot's id from get_pickup_slots")]


class Walmart(_Retail, name="walmart", title="Walmart"):
    state: WalmartState
    id_prefix = "wm"

    @classmethod
    def initial_state(cls, day: date = TODAY) -> WalmartState:
        # the pickup order is ready at 12:00 on the first day: the store's morning slots come before it
        past = histories(day)
        return WalmartState(
            products={cls.product_id(p.key): p.model_copy() for p in tables(day).products},
            cart=cart_of(cls.name, day),
            stores={s.store_id: s for s in held(past.pickup_stores, cls.name, Store)},
            orders={o.order_id: o for o in held(past.pickup_orders, cls.name, PickupOrder)},
        )

    def _pickup_order(self, order_id: str) -> PickupOrder:
        return find(self.state.orders, order_id, "order")

    def _store(self, store_id: str) -> Store:
        return find(self.state.stores, store_id, "store")

    @tool("read", failure_hint="Check ready_at before choosing a pickup slot; a slot before it is refused.")
    def get_purchase_details(
        self, order_id: Annotated[str, Field(description="The order number, e.g. 'WM-20260319-4417'")]
    ) -> dict[str, Any]:
        """An order for store pickup: items, total, store, status and the time it will be ready (ready_at)."""
        order = self._pickup_order(order_id)
        return {**order.model_dump(), "store_name": self._store(order.store_id).name}

    @tool("read", failure_hint="Listed slots can start before the order is ready; compare each with ready_at.")
    def get_pickup_slots(
        self,
        store_id: StoreId,
        date: PickupDate,
    ) -> dict[str, Any]:
        """The pickup slots a store offers on one date."""
        store = self._store(store_id)
        return {
            "store_id": store_id,
            "date": date,
            "slots": [s.model_dump() for s in store.slots if s.start.startswith(date.strip())],
        }

    @tool(
        "write",
        failure_hint="A slot before the order's ready_at is refused (conflict); confirm a reservation with "
        "walmart_get_pickup.",
    )
    def reserve_pickup_slot(
        self,
        order_id: OrderNumber,
        slot_id: PickupSlotId,
    ) -> dict[str, Any]:
        """Reserve a pickup slot for an order (replacing any slot reserved before)."""
        order = self._pickup_order(order_id)
        slot = next((s for s in self._store(order.store_id).slots if s.slot_id == slot_id), None)
        if slot is None:
            raise not_found("slot", slot_id)
        if not slot.available:
            raise conflict(f"slot {slot_id} is full")
        if parse_time(slot.start) < parse_time(order.ready_at):
            raise conflict(
                f"slot {slot_id} starts at {slot.start}, before order {order_id} is ready at {order.ready_at}"
            )
        if parse_time(slot.start) < self.world.now:
            raise conflict(f"slot {slot_id} has already started")
        order.pickup_slot_id = slot_id
        return {"status": "reserved", "order_id": order_id, "slot_id": slot_id, "start": slot.start, "end": slot.end}

    @tool("readback", failure_hint="Shows the slot that persisted; no pickup here means none is reserved.")
    def get_pickup(self, order_id: OrderNumber) -> dict[str, Any]:
        """The pickup reserved for an order: store, slot and times, or none."""
        order = self._pickup_order(order_id)
        store = self._store(order.store_id)
        slot = next((s for s in store.slots if s.slot_id == order.pickup_slot_id), None)
        return {
            "order_id": order_id,
            "store_name": store.name,
            "ready_at": order.ready_at,
            "pickup": None if slot is None else {"slot_id": slot.slot_id, "start": slot.start, "end": slot.end},
        }


# -------------------------------------------------------------------------------------------------------------------
# Groceries


StoreArg = Annotated[str, Field(description="Store name, e.g. 'Whole Foods Market'")]


class _Grocery(_Cart, category="groceries"):
    """A grocery delivery service; the tools' templates are Instacart's, and ``words``: ``slot`` and ``Slot`` (what
    it calls a delivery window), ``available`` (what an open one is)."""

    state: GroceryState
    delivery_fee: ClassVar[float] = 3.99

    @classmethod
    def slot_id(cls, store: str, start: str) -> str:
        return f"{cls.id_prefix}_{store}_{start[5:7]}{start[8:10]}_{start[11:13]}00"

    @classmethod
    def initial_state(cls, day: date = TODAY) -> GroceryState:
        stores, slots = {}, {}
        for s in tables(day).grocery_stores:
            copy = s.model_copy(deep=True)
            for item in copy.items:
                item.key = cls.product_id(f"{s.key}_{item.key}")
            stores[s.key] = copy
            for w in s.windows:
                slots[cls.slot_id(s.key, w.start)] = (s.key, w.start, w.end, w.available)
        return GroceryState(stores=stores, slots=slots, cart=cart_of(cls.name, day))

    def _catalog(self) -> dict[str, Product]:
        return {item.key: item for s in self.state.stores.values() for item in s.items}

    def _store(self, name: str) -> GroceryStore:
        q = name.strip().lower()
        hits: list[GroceryStore] = [
            s for s in self.state.stores.values() if q and (q in s.name.lower() or s.name.lower() in q)
        ]
        if not hits:
            known = ", ".join(s.name for s in self.state.stores.values())
            raise ToolExecutionError(f"store {name!r} not found; stores: {known}", "not_found")
        return hits[0]

    @tool("read", failure_hint="{Slot} dates can be wrong; check each {slot}'s date is in the future before using it.")
    def get_delivery_slots(self, store: StoreArg) -> dict[str, Any]:
        """Delivery {slot}s from a store, in time order, with start, end and whether each is {available}."""
        s = self._store(store)
        return {
            "store": s.name,
            "delivery_fee": self.delivery_fee,
            "slots": [
                {self.arg_of("slot_id"): sid, "start": start, "end": end, "available": available}
                for sid, (key, start, end, available) in self.state.slots.items()
                if key == s.key
            ],
        }

    @tool(
        "write",
        failure_hint="A past or full {slot} is refused; confirm the reservation with {name}_get_reservation.",
    )
    def reserve_delivery_slot(
        self, slot_id: Annotated[str, Field(description="The slot's id from get_delivery_slots")]
    ) -> dict[str, Any]:
        """Reserve a delivery {slot} (replacing any {slot} reserved before)."""
        found = self.state.slots.get(slot_id)
        if found is None:
            raise not_found(self.arg_of("slot_id").removesuffix("_id"), slot_id)
        key, start, end, available = found
        if not available:
            raise conflict(f"{slot_id} is full")
        if parse_time(start) < self.world.now:
            raise conflict(f"{slot_id} starts at {start}, which is in the past")
        self.state.reservation = DeliveryReservation(
            reservation_id=self.world.new_id(f"{self.id_prefix}_res"),
            slot_id=slot_id,
            store=self.state.stores[key].name,
            start=start,
            end=end,
            fee=self.delivery_fee,
            reserved_at=self.world.stamp(),
        )
        return {"status": "reserved", **self.get_reservation()}

    @tool("readback", failure_hint="Shows the {slot} that persisted; none here means no {slot} is reserved.")
    def get_reservation(self) -> dict[str, Any]:
        """The delivery {slot} currently reserved, or none."""
        r = self.state.reservation
        if r is None:
            return {"reservation": None}
        record = r.model_dump()
        record[self.arg_of("slot_id")] = record.pop("slot_id")
        return {"reservation": record}

    @tool("read", failure_hint="Results can repeat or miss {items}; confirm one with {name}_{tool:get_item}.")
    def search_items(self, store: StoreArg, query: SearchArg) -> dict[str, Any]:
        """Search a store's {items}; every match with its id and price."""
        s = self._store(store)
        return {"store": s.name, "query": query, "items": self._find(query, {i.key: i for i in s.items})}

    @tool("read", failure_hint="An unknown id is a not_found error; take ids from {name}_{tool:search_items}.")
    def get_item(self, item_id: Annotated[str, Field(description="The item's id from search_items")]) -> dict[str, Any]:
        """One {item} by id: name, price and description."""
        return self._card(item_id, self._product(item_id))


class Instacart(_Grocery, name="instacart", title="Instacart"):
    id_field = "item_id"
    id_prefix = "ic"
    words: ClassVar[dict[str, str]] = {"products": "items", "slot": "slot", "Slot": "Slot", "available": "available"}
    arg_types: ClassVar[dict[str, Any]] = {
        "items": Annotated[list[dict[str, Any]], lines_field("Items to add", "item", "item_id", "search_items")]
    }


class Shipt(_Grocery, name="shipt", title="Shipt"):
    id_field = "product_id"
    id_prefix = "sh"
    words: ClassVar[dict[str, str]] = {
        "items": "products",
        "item": "product",
        "slot": "window",
        "Slot": "Window",
        "available": "open",
    }
    renames: ClassVar[dict[str, str]] = {
        "get_delivery_slots": "get_delivery_windows",
        "reserve_delivery_slot": "reserve_delivery_window",
        "search_items": "search_products",
        "get_item": "get_product",
    }
    arg_names: ClassVar[dict[str, str]] = {"slot_id": "window_id", "item_id": "product_id"}
    arg_types: ClassVar[dict[str, Any]] = {
        "window_id": Annotated[str, Field(description="The window's id from get_delivery_windows")],
        "product_id": ProductId,
    }
    hints: ClassVar[dict[str, str]] = {
        "reserve_delivery_window": "A past or full window is refused; confirm with shipt_get_reservation."
    }


SERVICES: list[type[Service]] = [*peers(UberEats, DoorDash, Grubhub), *peers(Amazon, Walmart), *peers(Instacart, Shipt)]
