"""Commerce & food services: food delivery (Uber Eats, DoorDash, Grubhub), retail (Amazon, Walmart) and grocery
delivery (Instacart, Shipt).

Counterparts seed from the same module constants: the same restaurants, menus, prices and fees (``RESTAURANTS``),
the same products and prices (``PRODUCTS``), the same grocery items and delivery windows (``GROCERY_STORES``), so
that a fallback from one service to its counterpart reaches the same facts.
"""

from __future__ import annotations

from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Annotated, Any, ClassVar, Literal

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

DOMAIN = "commerce & food"
CENT = Decimal("0.01")


def line_items(what: str, id_field: str) -> dict[str, Any]:
    """The JSON schema of a list of {id, quantity} lines (a cart or an order)."""
    return {
        "items": {
            "type": "object",
            "properties": {
                id_field: {"type": "string", "description": f"The {what}'s id"},
                "quantity": {"type": "integer", "minimum": 1, "description": "How many"},
            },
            "required": [id_field, "quantity"],
        }
    }


def parse_lines(items: list[dict[str, Any]], id_field: str, known: dict[str, Any], what: str) -> dict[str, int]:
    """Quantities by id from order lines; an empty list or an unknown id is an invalid_request naming the valid
    ids, so that the agent can repair the call."""
    valid = ", ".join(sorted(known))
    if not items:
        raise invalid(f"no items given; add at least one {what} by {id_field} ({valid})")
    quantities: dict[str, int] = {}
    for line in items:
        key, quantity = line.get(id_field), line.get("quantity", 1)
        if not isinstance(key, str) or key not in known:
            raise invalid(f"unknown {id_field} {key!r}; valid ids: {valid}")
        if not isinstance(quantity, int) or isinstance(quantity, bool) or not 1 <= quantity <= 50:
            raise invalid(f"quantity of {key} must be a whole number from 1 to 50")
        quantities[key] = quantities.get(key, 0) + quantity
    return quantities


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# ---------------------------------------------------------------------------------------------------------------
# Food delivery


class MenuItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    name: str
    price: float
    description: str


class Restaurant(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    name: str
    cuisine: str
    tags: list[str]
    rating: float
    delivery_eta: str
    address: str
    menu: list[MenuItem]


def _item(key: str, name: str, price: float, description: str) -> MenuItem:
    return MenuItem(key=key, name=name, price=price, description=description)


# The restaurants every food delivery service lists, with the same menus and prices.
RESTAURANTS: tuple[Restaurant, ...] = (
    Restaurant(
        key="ramen_house",
        name="Ramen House",
        cuisine="Japanese",
        tags=["ramen", "noodles", "japanese", "soup"],
        rating=4.6,
        delivery_eta="30-40 min",
        address="812 Irving St, San Francisco, CA 94122",
        menu=[
            _item("tonkotsu", "Tonkotsu Ramen", 16.50, "Pork bone broth, chashu, soft egg, scallion"),
            _item("spicy_miso", "Spicy Miso Ramen", 15.75, "Miso broth, chili oil, ground pork, corn"),
            _item("shoyu", "Shoyu Ramen", 14.95, "Soy chicken broth, bamboo shoots, nori"),
            _item("gyoza", "Pork Gyoza", 7.25, "Six pan-fried dumplings"),
            _item("karaage", "Chicken Karaage", 9.40, "Fried chicken thigh, lemon, kewpie"),
            _item("matcha_soft_serve", "Matcha Soft Serve", 5.60, "Green tea soft serve"),
        ],
    ),
    Restaurant(
        key="taqueria_el_sol",
        name="Taqueria El Sol",
        cuisine="Mexican",
        tags=["tacos", "burritos", "mexican"],
        rating=4.7,
        delivery_eta="25-35 min",
        address="2891 Mission St, San Francisco, CA 94110",
        menu=[
            _item("carne_asada_burrito", "Carne Asada Burrito", 12.85, "Grilled steak, rice, beans, salsa"),
            _item("al_pastor_tacos", "Al Pastor Tacos", 11.40, "Three tacos, pineapple, onion, cilantro"),
            _item("chips_guacamole", "Chips and Guacamole", 6.95, "House chips, fresh guacamole"),
            _item("horchata", "Horchata", 4.25, "Rice and cinnamon drink"),
        ],
    ),
    Restaurant(
        key="bombay_curry",
        name="Bombay Curry Co.",
        cuisine="Indian",
        tags=["curry", "indian", "naan"],
        rating=4.4,
        delivery_eta="35-45 min",
        address="1457 Haight St, San Francisco, CA 94117",
        menu=[
            _item("tikka_masala", "Chicken Tikka Masala", 17.95, "Tomato cream sauce, basmati rice"),
            _item("saag_paneer", "Saag Paneer", 15.45, "Spinach, paneer, basmati rice"),
            _item("garlic_naan", "Garlic Naan", 4.35, "Tandoor bread, garlic butter"),
            _item("mango_lassi", "Mango Lassi", 5.15, "Yogurt and mango drink"),
        ],
    ),
)

SERVICE_FEE_RATE = Decimal("0.10")
TAX_RATE = Decimal("0.095")  # San Francisco sales tax on prepared food
RAMEN_ORDER = (("tonkotsu", 5), ("gyoza", 2))


def restaurant(key: str) -> Restaurant:
    return next(r for r in RESTAURANTS if r.key == key)


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


class OrderLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    item_id: str
    name: str
    quantity: int
    unit_price: float
    line_total: float


class FoodOrder(BaseModel):
    model_config = ConfigDict(extra="forbid")

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


class FoodState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    restaurants: dict[str, Restaurant]  # by the service's restaurant id
    orders: dict[str, FoodOrder]


RestaurantId = Annotated[str, Field(description="The restaurant's id as search_restaurants returns it")]
FoodOrderId = Annotated[str, Field(description="The order's id")]
ItemsArg = Annotated[
    list[dict[str, Any]],
    Field(
        description="Menu items to order, each {'item_id': ..., 'quantity': ...} with ids from get_menu",
        json_schema_extra=line_items("menu item", "item_id"),
    ),
]


class _Food(Category):
    """A food delivery service; ``words``: ``place`` (what it calls a restaurant)."""

    domain = DOMAIN
    category = "food_delivery"
    State = FoodState
    restaurant_ids: ClassVar[dict[str, str]]  # restaurant key -> the service's id
    item_prefix: ClassVar[str]
    order_prefix: ClassVar[str]
    past_order: ClassVar[tuple[str, str, tuple[tuple[str, int], ...], str]]  # id, restaurant, lines, when
    query_example: ClassVar[str]  # the example in search_restaurants' query description
    words: ClassVar[dict[str, str]] = {"place": "restaurant"}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        if "query_example" in cls.__dict__:
            example = f"Restaurant name, dish or cuisine, e.g. {cls.query_example!r}"
            cls.arg_types = {"query": Annotated[str, Field(description=example)]}
        super().__init_subclass__(**kwargs)

    @classmethod
    def item_id(cls, key: str) -> str:
        return f"{cls.item_prefix}{key}"

    @classmethod
    def initial_state(cls) -> FoodState:
        restaurants = {}
        for r in RESTAURANTS:
            copy = r.model_copy(deep=True)
            for item in copy.menu:
                item.key = cls.item_id(item.key)
            restaurants[cls.restaurant_ids[r.key]] = copy
        state = FoodState(restaurants=restaurants, orders={})
        order_id, where, lines, when = cls.past_order
        order = cls._make_order(state, order_id, cls.restaurant_ids[where], {cls.item_id(k): q for k, q in lines}, when)
        order.status = "delivered"
        state.orders[order_id] = order
        return state

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
        found: Restaurant | None = self.state.restaurants.get(restaurant_id)
        if found is None:
            raise not_found("restaurant", restaurant_id)
        return found

    @tool("read", failure_hint="Search results can miss or repeat {place}s; confirm one with {name}_get_menu.")
    def search_restaurants(
        self, query: Annotated[str, Field(description="Restaurant name, dish or cuisine")]
    ) -> dict[str, Any]:
        """Find restaurants that deliver by name, dish or cuisine, with rating and delivery time."""
        q = query.strip().lower()
        if not q:
            raise invalid("name a restaurant, dish or cuisine to search for")
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

    def _order(self, order_id: str) -> FoodOrder:
        found: FoodOrder | None = self.state.orders.get(order_id)
        if found is None:
            raise not_found("order", order_id)
        return found

    @tool("readback", failure_hint="Compare the total with the menu prices; a wrong total means a corrupted order.")
    def get_order(self, order_id: FoodOrderId) -> dict[str, Any]:
        """One order by id: items, subtotal, service fee, tax, total and status."""
        return self._order(order_id).model_dump()

    @tool("write", failure_hint="Only a placed order can be cancelled; confirm with {name}_get_order.")
    def cancel_order(self, order_id: FoodOrderId) -> dict[str, Any]:
        """Cancel an order that has not been delivered; the total is refunded."""
        order = self._order(order_id)
        if order.status != "placed":
            raise ToolExecutionError(f"order {order_id} is {order.status} and cannot be cancelled", "conflict")
        order.status = "cancelled"
        return {"order_id": order_id, "status": "cancelled", "refund": order.total}

    @tool("readback", failure_hint="Shows only what persisted; an order missing here was not placed.")
    def list_orders(self) -> dict[str, Any]:
        """Every order on the account, with its items, total and status."""
        return {"orders": [o.model_dump() for o in self.state.orders.values()]}

    @classmethod
    def lookups(cls) -> list[Lookup]:
        ramen, tacos = restaurant("ramen_house"), restaurant("taqueria_el_sol")
        tonkotsu = ramen.menu[0]
        return [
            Lookup(
                topic="ramen_price",
                request="How much is a bowl of Tonkotsu Ramen at Ramen House?",
                call=Call("get_menu", {"restaurant_id": cls.restaurant_ids[ramen.key]}),
                shows=[tonkotsu.name, shown(tonkotsu.price)],
                answer=[shown(tonkotsu.price)],
                value_field="price",
            ),
            Lookup(
                topic="taco_search",
                request="Which taco place can deliver to me, and what is its rating?",
                call=Call("search_restaurants", {"query": "tacos"}),
                shows=[tacos.name, shown(tacos.rating)],
                answer=[tacos.name, shown(tacos.rating)],
                pin=Call("get_menu", {"restaurant_id": cls.restaurant_ids[tacos.key]}),
                value_field="rating",
            ),
        ]

    @classmethod
    def writes(cls) -> list[Write]:
        ramen = restaurant("ramen_house")
        menu = {i.key: i for i in ramen.menu}
        total = bill([(menu[k].price, q) for k, q in RAMEN_ORDER])["total"]
        rid = cls.restaurant_ids[ramen.key]
        return [
            Write(
                topic="ramen_order",
                request="Order 5 Tonkotsu Ramen and 2 Pork Gyoza from Ramen House.",
                call=Call(
                    "submit_order",
                    {
                        "restaurant_id": rid,
                        "items": [{"item_id": cls.item_id(k), "quantity": q} for k, q in RAMEN_ORDER],
                    },
                ),
                readback=Call("list_orders"),
                before=[Call("search_restaurants", {"query": ramen.name}), Call("get_menu", {"restaurant_id": rid})],
                landed=[ramen.name, menu[RAMEN_ORDER[-1][0]].name],
                answer=[shown(total)],
            )
        ]


class UberEats(_Food):
    name = "ubereats"
    title = "Uber Eats"
    counterparts = ("doordash", "grubhub")
    restaurant_ids: ClassVar[dict[str, str]] = {
        "ramen_house": "REST-RAMEN-001",
        "taqueria_el_sol": "REST-TACO-002",
        "bombay_curry": "REST-CURRY-003",
    }
    item_prefix = "ITEM-"
    order_prefix = "ue_order"
    query_example = "Ramen House"
    docs: ClassVar[dict[str, str]] = {
        "search_restaurants": "Find restaurants that deliver, by name, dish or cuisine, with rating and delivery time."
    }
    past_order = ("ue_order_0871", "bombay_curry", (("tikka_masala", 1), ("garlic_naan", 2)), "2026-03-13T02:41:00Z")


class DoorDash(_Food):
    name = "doordash"
    title = "DoorDash"
    counterparts = ("ubereats", "grubhub")
    restaurant_ids: ClassVar[dict[str, str]] = {
        "ramen_house": "dd_store_ramen_house",
        "taqueria_el_sol": "dd_store_taqueria_el_sol",
        "bombay_curry": "dd_store_bombay_curry",
    }
    item_prefix = "dd_item_"
    order_prefix = "dd_order"
    query_example = "ramen"
    words: ClassVar[dict[str, str]] = {"place": "store"}
    docs: ClassVar[dict[str, str]] = {
        "search_restaurants": "Search restaurants that deliver by name, dish or cuisine, with rating and delivery time."
    }
    past_order = ("dd_order_5530", "taqueria_el_sol", (("carne_asada_burrito", 2),), "2026-03-16T01:12:00Z")


class Grubhub(_Food):
    name = "grubhub"
    title = "Grubhub"
    counterparts = ("ubereats", "doordash")
    restaurant_ids: ClassVar[dict[str, str]] = {
        "ramen_house": "gh_rest_ramen_house",
        "taqueria_el_sol": "gh_rest_taqueria_el_sol",
        "bombay_curry": "gh_rest_bombay_curry",
    }
    item_prefix = "gh_item_"
    order_prefix = "gh_order"
    query_example = "curry"
    past_order = ("gh_order_2207", "bombay_curry", (("saag_paneer", 1), ("mango_lassi", 1)), "2026-03-06T03:05:00Z")


# ---------------------------------------------------------------------------------------------------------------
# Carts (retail and groceries)


class Product(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    name: str
    price: float
    rating: float
    description: str
    in_stock: bool = True


class CartLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    product_key: str
    quantity: int


CartItems = Annotated[
    list[dict[str, Any]],
    Field(
        description="Products to add, each {'product_id': ..., 'quantity': ...} with ids from search_products",
        json_schema_extra=line_items("product", "product_id"),
    ),
]


class _Cart(Category):
    """A catalog plus a cart: the part of the retail and grocery services that is the same everywhere. ``words``:
    ``cart``, and what the descriptions (``products``) and the failure hints (``items``, ``item``) call the wares."""

    domain = DOMAIN
    words: ClassVar[dict[str, str]] = {"cart": "cart", "products": "products", "items": "items", "item": "item"}
    id_field: ClassVar[str] = "product_id"
    id_prefix: ClassVar[str]

    @classmethod
    def product_id(cls, key: str) -> str:
        return f"{cls.id_prefix}_{key}"

    def _catalog(self) -> dict[str, Product]:
        raise NotImplementedError

    def _product(self, product_id: str) -> Product:
        found = self._catalog().get(product_id)
        if found is None:
            raise not_found(self.id_field.removesuffix("_id"), product_id)
        return found

    def _card(self, product_id: str, p: Product) -> dict[str, Any]:
        return {self.id_field: product_id, **p.model_dump(exclude={"key"})}

    def _find(self, query: str, catalog: dict[str, Product]) -> list[dict[str, Any]]:
        words = query.strip().lower().split()
        if not words:
            raise invalid("name a product to search for")
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
                raise ToolExecutionError(f"{catalog[pid].name} ({pid}) is out of stock", "conflict")
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


# ---------------------------------------------------------------------------------------------------------------
# Retail


def _product(key: str, name: str, price: float, rating: float, description: str) -> Product:
    return Product(key=key, name=name, price=price, rating=rating, description=description)


# The products both retailers sell, at the same prices.
PRODUCTS: tuple[Product, ...] = (
    _product(
        "voltpeak_26800",
        "VoltPeak 26800mAh Power Bank",
        54.99,
        4.6,
        "Portable charger power bank, 26800 mAh, two USB-C ports, 65 W",
    ),
    _product(
        "chargemate_10000",
        "ChargeMate 10000mAh Slim Power Bank",
        24.49,
        4.3,
        "Slim portable charger power bank, 10000 mAh, one USB-C port",
    ),
    _product(
        "brewline_12cup",
        "BrewLine 12-Cup Programmable Coffee Maker",
        79.95,
        4.5,
        "Drip coffee maker with programmable timer and thermal carafe",
    ),
    _product(
        "brewline_single",
        "BrewLine Single-Serve Coffee Maker",
        49.85,
        4.1,
        "Single-serve pod coffee maker, 10 oz",
    ),
    _product(
        "powercell_aa20",
        "PowerCell AA Alkaline Batteries, 20-Pack",
        16.47,
        4.7,
        "Long-lasting AA alkaline batteries",
    ),
    _product(
        "lumen_usbc_6ft",
        "Lumen USB-C to USB-C Cable, 6 ft, 2-Pack",
        12.89,
        4.4,
        "Braided USB-C charging cable, 100 W",
    ),
    _product(
        "hydra_bottle_32",
        "Hydra Insulated Water Bottle, 32 oz",
        27.35,
        4.8,
        "Stainless steel insulated water bottle",
    ),
)

CART_ADD = (("powercell_aa20", 2), ("lumen_usbc_6ft", 1))


def product(key: str) -> Product:
    return next(p for p in PRODUCTS if p.key == key)


class RetailOrder(BaseModel):
    model_config = ConfigDict(extra="forbid")

    order_id: str
    items: list[dict[str, Any]]
    subtotal: float
    shipping: float
    total: float
    shipping_speed: str
    status: Literal["placed", "shipped", "delivered"]
    placed_at: str


class AmazonState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    products: dict[str, Product]
    cart: dict[str, int]
    orders: dict[str, RetailOrder]


class Slot(BaseModel):
    model_config = ConfigDict(extra="forbid")

    slot_id: str
    start: str
    end: str
    available: bool = True


class PickupOrder(BaseModel):
    model_config = ConfigDict(extra="forbid")

    order_id: str
    store_id: str
    items: list[dict[str, Any]]
    total: float
    status: Literal["preparing", "ready", "picked_up"]
    ready_at: str
    pickup_slot_id: str | None = None


class Store(BaseModel):
    model_config = ConfigDict(extra="forbid")

    store_id: str
    name: str
    address: str
    slots: list[Slot]


class WalmartState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    products: dict[str, Product]
    cart: dict[str, int]
    stores: dict[str, Store]
    orders: dict[str, PickupOrder]


ProductId = Annotated[str, Field(description="The product's id as search_products returns it")]
SearchArg = Annotated[str, Field(description="What to look for, e.g. 'power bank'")]


class _Retail(_Cart):
    """A retailer (Amazon, Walmart): the shared catalog (``PRODUCTS``) and cart."""

    category = "retail"

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

    @classmethod
    def lookups(cls) -> list[Lookup]:
        bank, coffee = product("voltpeak_26800"), product("brewline_12cup")
        return [
            Lookup(
                topic="power_bank",
                request="Find a power bank with at least 20,000 mAh and tell me its price.",
                call=Call("search_products", {"query": "power bank"}),
                shows=[bank.name, shown(bank.price)],
                answer=[bank.name, shown(bank.price)],
                pin=Call("get_product", {"product_id": cls.product_id(bank.key)}),
                value_field="price",
            ),
            Lookup(
                topic="coffee_maker",
                request="How much is the BrewLine 12-cup programmable coffee maker, and how is it rated?",
                call=Call("search_products", {"query": "coffee maker"}),
                shows=[coffee.name, shown(coffee.price)],
                answer=[shown(coffee.price), shown(coffee.rating)],
                pin=Call("get_product", {"product_id": cls.product_id(coffee.key)}),
                value_field="price",
            ),
        ]

    @classmethod
    def writes(cls) -> list[Write]:
        first, last = product(CART_ADD[0][0]), product(CART_ADD[-1][0])
        return [
            Write(
                topic="cart_batteries",
                request="Add two 20-packs of PowerCell AA batteries and one 2-pack of Lumen 6 ft USB-C cables to my "
                "cart.",
                call=Call(
                    "add_to_cart", {"items": [{"product_id": cls.product_id(k), "quantity": q} for k, q in CART_ADD]}
                ),
                readback=Call("get_cart"),
                before=[
                    Call("search_products", {"query": "batteries"}),
                    Call("search_products", {"query": "usb-c cable"}),
                ],
                landed=[first.name, last.name],
                answer=[first.name, last.name],
            )
        ]


class Amazon(_Retail):
    name = "amazon"
    title = "Amazon"
    counterparts = ("walmart",)
    State = AmazonState
    id_prefix = "amz"
    words: ClassVar[dict[str, str]] = {"cart": "shopping cart"}
    SHIPPING: ClassVar[dict[str, float]] = {"standard": 0.0, "two_day": 0.0, "one_day": 5.99}

    @classmethod
    def initial_state(cls) -> AmazonState:
        past = RetailOrder(
            order_id="112-4471903-0381",
            items=[{"product_id": cls.product_id("hydra_bottle_32"), "name": product("hydra_bottle_32").name}],
            subtotal=27.35,
            shipping=0.0,
            total=27.35,
            shipping_speed="two_day",
            status="delivered",
            placed_at="2026-03-02T20:11:00Z",
        )
        return AmazonState(
            products={cls.product_id(p.key): p.model_copy() for p in PRODUCTS},
            cart={cls.product_id("chargemate_10000"): 1},
            orders={past.order_id: past},
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
            raise ToolExecutionError("the cart is empty", "conflict")
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
        found: RetailOrder | None = self.state.orders.get(order_id)
        if found is None:
            raise not_found("order", order_id)
        return found.model_dump()

    @tool("readback", failure_hint="Shows only what persisted; an order missing here was not placed.")
    def list_orders(self) -> dict[str, Any]:
        """Every order on the account, newest last."""
        return {"orders": [o.model_dump() for o in self.state.orders.values()]}


PICKUP_STORE = "wm_store_1602"
PICKUP_ORDER = "WM-20260319-4417"
PICKUP_READY = "2026-03-20T12:00:00Z"


def _slot(day: str, hour: int) -> Slot:
    return Slot(
        slot_id=f"slot_{day.replace('-', '')}_{hour:02d}00",
        start=f"{day}T{hour:02d}:00:00Z",
        end=f"{day}T{hour + 1:02d}:00:00Z",
    )


class Walmart(_Retail):
    name = "walmart"
    title = "Walmart"
    counterparts = ("amazon",)
    State = WalmartState
    id_prefix = "wm"

    @classmethod
    def initial_state(cls) -> WalmartState:
        store = Store(
            store_id=PICKUP_STORE,
            name="Walmart Supercenter - Daly City",
            address="1602 Sullivan Ave, Daly City, CA 94015",
            # the order below is ready at 12:00: the morning slots come before it, the afternoon ones after
            slots=[_slot("2026-03-20", h) for h in (8, 10, 14, 16)] + [_slot("2026-03-21", h) for h in (9, 13)],
        )
        order = PickupOrder(
            order_id=PICKUP_ORDER,
            store_id=PICKUP_STORE,
            items=[
                {"product_id": cls.product_id("brewline_12cup"), "name": product("brewline_12cup").name, "quantity": 1},
                {
                    "product_id": cls.product_id("hydra_bottle_32"),
                    "name": product("hydra_bottle_32").name,
                    "quantity": 2,
                },
            ],
            total=134.65,
            status="preparing",
            ready_at=PICKUP_READY,
        )
        return WalmartState(
            products={cls.product_id(p.key): p.model_copy() for p in PRODUCTS},
            cart={cls.product_id("hydra_bottle_32"): 1},
            stores={store.store_id: store},
            orders={order.order_id: order},
        )

    def _pickup_order(self, order_id: str) -> PickupOrder:
        found: PickupOrder | None = self.state.orders.get(order_id)
        if found is None:
            raise not_found("order", order_id)
        return found

    def _store(self, store_id: str) -> Store:
        found: Store | None = self.state.stores.get(store_id)
        if found is None:
            raise not_found("store", store_id)
        return found

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
        store_id: Annotated[str, Field(description="The store's id, as the order details give it")],
        date: Annotated[str, Field(description="Pickup date, YYYY-MM-DD")],
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
        order_id: Annotated[str, Field(description="The order number")],
        slot_id: Annotated[str, Field(description="The slot's id from get_pickup_slots")],
    ) -> dict[str, Any]:
        """Reserve a pickup slot for an order (replacing any slot reserved before)."""
        order = self._pickup_order(order_id)
        slot = next((s for s in self._store(order.store_id).slots if s.slot_id == slot_id), None)
        if slot is None:
            raise not_found("slot", slot_id)
        if not slot.available:
            raise ToolExecutionError(f"slot {slot_id} is full", "conflict")
        if parse_time(slot.start) < parse_time(order.ready_at):
            raise ToolExecutionError(
                f"slot {slot_id} starts at {slot.start}, before order {order_id} is ready at {order.ready_at}",
                "conflict",
            )
        if parse_time(slot.start) < self.world.now:
            raise ToolExecutionError(f"slot {slot_id} has already started", "conflict")
        order.pickup_slot_id = slot_id
        return {"status": "reserved", "order_id": order_id, "slot_id": slot_id, "start": slot.start, "end": slot.end}

    @tool("readback", failure_hint="Shows the slot that persisted; no pickup here means none is reserved.")
    def get_pickup(self, order_id: Annotated[str, Field(description="The order number")]) -> dict[str, Any]:
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


# ---------------------------------------------------------------------------------------------------------------
# Groceries


class GroceryStore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    name: str
    items: list[Product]
    windows: list[tuple[str, str, bool]]  # (start, end, available)


def _grocery(key: str, name: str, price: float, description: str) -> Product:
    return Product(key=key, name=name, price=price, rating=4.5, description=description)


# The stores both grocery services shop at, with the same items, prices and delivery windows.
GROCERY_STORES: tuple[GroceryStore, ...] = (
    GroceryStore(
        key="wf",
        name="Whole Foods Market",
        items=[
            _grocery("oat_milk", "Oatly Oat Milk Barista Edition, 32 oz", 5.49, "oat milk, dairy-free"),
            _grocery("eggs", "365 Organic Large Brown Eggs, 12 ct", 6.79, "eggs, organic, cage-free"),
            _grocery("spinach", "Organic Baby Spinach, 5 oz", 3.99, "spinach, leafy greens, organic"),
            _grocery("sourdough", "Sourdough Loaf", 6.25, "bread, bakery, sourdough"),
            _grocery("salmon", "Wild-Caught Sockeye Salmon Fillet, 1 lb", 14.99, "fish, salmon, seafood"),
            _grocery("bananas", "Organic Bananas, 1 bunch", 2.19, "fruit, bananas, organic"),
        ],
        # the next open window is Saturday 15:00-17:00; tonight's is full
        windows=[
            ("2026-03-20T18:00:00Z", "2026-03-20T20:00:00Z", False),
            ("2026-03-21T15:00:00Z", "2026-03-21T17:00:00Z", True),
            ("2026-03-21T17:00:00Z", "2026-03-21T19:00:00Z", True),
            ("2026-03-22T09:00:00Z", "2026-03-22T11:00:00Z", True),
        ],
    ),
    GroceryStore(
        key="safeway",
        name="Safeway",
        items=[
            _grocery("sw_oat_milk", "Signature Select Oat Milk, 64 oz", 3.99, "oat milk, dairy-free"),
            _grocery("sw_eggs", "Lucerne Large Eggs, 12 ct", 4.49, "eggs"),
            _grocery("sw_bananas", "Bananas, per lb", 0.69, "fruit, bananas"),
        ],
        windows=[
            ("2026-03-20T16:00:00Z", "2026-03-20T18:00:00Z", True),
            ("2026-03-21T10:00:00Z", "2026-03-21T12:00:00Z", True),
        ],
    ),
)

NEXT_WINDOW = ("2026-03-21T15:00:00Z", "2026-03-21T17:00:00Z")
GROCERY_ADD = (("eggs", 1), ("spinach", 2))


def grocery_store(key: str) -> GroceryStore:
    return next(s for s in GROCERY_STORES if s.key == key)


class Reservation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reservation_id: str
    slot_id: str
    store: str
    start: str
    end: str
    fee: float
    reserved_at: str


class GroceryState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stores: dict[str, GroceryStore]
    slots: dict[str, tuple[str, str, str, bool]]  # slot id -> (store key, start, end, available)
    cart: dict[str, int]
    reservation: Reservation | None = None


StoreArg = Annotated[str, Field(description="Store name, e.g. 'Whole Foods Market'")]


class _Grocery(_Cart):
    """A grocery delivery service; ``words``: ``slot`` (what it calls a delivery window)."""

    category = "groceries"
    State = GroceryState
    slot_field: ClassVar[str]
    tools: ClassVar[tuple[str, str, str, str]]  # the provider's names for: slots, reserve a slot, search, get an item
    delivery_fee: ClassVar[float] = 3.99

    @classmethod
    def slot_id(cls, store: str, start: str) -> str:
        return f"{cls.id_prefix}_{store}_{start[5:7]}{start[8:10]}_{start[11:13]}00"

    @classmethod
    def initial_state(cls) -> GroceryState:
        stores, slots = {}, {}
        for s in GROCERY_STORES:
            copy = s.model_copy(deep=True)
            for item in copy.items:
                item.key = cls.product_id(f"{s.key}_{item.key}")
            stores[s.key] = copy
            for start, end, available in s.windows:
                slots[cls.slot_id(s.key, start)] = (s.key, start, end, available)
        return GroceryState(stores=stores, slots=slots, cart={cls.product_id("wf_bananas"): 1})

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

    def _search(self, store: str, query: str) -> dict[str, Any]:
        s = self._store(store)
        return {"store": s.name, "query": query, "items": self._find(query, {i.key: i for i in s.items})}

    def _windows(self, store: str) -> dict[str, Any]:
        s = self._store(store)
        return {
            "store": s.name,
            "delivery_fee": self.delivery_fee,
            "slots": [
                {self.slot_field: sid, "start": start, "end": end, "available": available}
                for sid, (key, start, end, available) in self.state.slots.items()
                if key == s.key
            ],
        }

    def _reserve(self, slot_id: str) -> dict[str, Any]:
        found = self.state.slots.get(slot_id)
        if found is None:
            raise not_found(self.slot_field.removesuffix("_id"), slot_id)
        key, start, end, available = found
        if not available:
            raise ToolExecutionError(f"{slot_id} is full", "conflict")
        if parse_time(start) < self.world.now:
            raise ToolExecutionError(f"{slot_id} starts at {start}, which is in the past", "conflict")
        self.state.reservation = Reservation(
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
        record[self.slot_field] = record.pop("slot_id")
        return {"reservation": record}

    @classmethod
    def lookups(cls) -> list[Lookup]:
        return cls._recipes()[0]

    @classmethod
    def writes(cls) -> list[Write]:
        return cls._recipes()[1]

    @classmethod
    def _recipes(cls) -> tuple[list[Lookup], list[Write]]:
        slots_tool, reserve_tool, search_tool, get_tool = cls.tools
        wf = grocery_store("wf")
        oat = next(i for i in wf.items if i.key == "oat_milk")
        names = {i.key: i.name for i in wf.items}
        lookups = [
            Lookup(
                topic="next_delivery_window",
                request="When is the next available delivery window from Whole Foods Market?",
                call=Call(slots_tool, {"store": wf.name}),
                shows=[NEXT_WINDOW[0], NEXT_WINDOW[1]],
                answer=["2026-03-21", "15:00", "17:00"],
            ),
            Lookup(
                topic="oat_milk_price",
                request="How much is Oatly barista oat milk at Whole Foods Market?",
                call=Call(search_tool, {"store": wf.name, "query": "oat milk"}),
                shows=[oat.name, shown(oat.price)],
                answer=[shown(oat.price)],
                pin=Call(get_tool, {cls.id_field: cls.product_id(f"wf_{oat.key}")}),
                value_field="price",
            ),
        ]
        writes = [
            Write(
                topic="reserve_next_window",
                request="Reserve the Whole Foods Market delivery window on Saturday, March 21, 2026 from 15:00 to "
                "17:00.",
                call=Call(reserve_tool, {cls.slot_field: cls.slot_id(wf.key, NEXT_WINDOW[0])}),
                readback=Call("get_reservation"),
                before=[Call(slots_tool, {"store": wf.name})],
                landed=[NEXT_WINDOW[0]],
                answer=["2026-03-21", "15:00"],
            ),
            Write(
                topic="grocery_cart",
                request="Add a dozen 365 organic brown eggs and two bags of organic baby spinach from Whole Foods "
                "Market to my cart.",
                call=Call(
                    "add_to_cart",
                    {"items": [{cls.id_field: cls.product_id(f"wf_{k}"), "quantity": q} for k, q in GROCERY_ADD]},
                ),
                readback=Call("get_cart"),
                before=[Call(search_tool, {"store": wf.name, "query": word}) for word in ("eggs", "spinach")],
                landed=[names[GROCERY_ADD[0][0]], names[GROCERY_ADD[-1][0]]],
                answer=[names[GROCERY_ADD[0][0]], names[GROCERY_ADD[-1][0]]],
            ),
        ]
        return lookups, writes


class Instacart(_Grocery):
    name = "instacart"
    title = "Instacart"
    counterparts = ("shipt",)
    id_field = "item_id"
    id_prefix = "ic"
    slot_field = "slot_id"
    tools = ("get_delivery_slots", "reserve_delivery_slot", "search_items", "get_item")
    words: ClassVar[dict[str, str]] = {"products": "items", "slot": "slot"}
    arg_types: ClassVar[dict[str, Any]] = {
        "items": Annotated[
            list[dict[str, Any]],
            Field(
                description="Items to add, each {'item_id': ..., 'quantity': ...} with ids from search_items",
                json_schema_extra=line_items("item", "item_id"),
            ),
        ]
    }

    @tool("read", failure_hint="Slot dates can be wrong; check each slot's date is in the future before using it.")
    def get_delivery_slots(self, store: StoreArg) -> dict[str, Any]:
        """Delivery slots from a store, in time order, with start, end and whether each is available."""
        return self._windows(store)

    @tool(
        "write",
        failure_hint="A past or full slot is refused; confirm the reservation with instacart_get_reservation.",
    )
    def reserve_delivery_slot(
        self, slot_id: Annotated[str, Field(description="The slot's id from get_delivery_slots")]
    ) -> dict[str, Any]:
        """Reserve a delivery slot (replacing any slot reserved before)."""
        return self._reserve(slot_id)

    @tool("read", failure_hint="Results can repeat or miss items; confirm one with instacart_get_item.")
    def search_items(self, store: StoreArg, query: SearchArg) -> dict[str, Any]:
        """Search a store's items; every match with its id and price."""
        return self._search(store, query)

    @tool("read", failure_hint="An unknown id is a not_found error; take ids from instacart_search_items.")
    def get_item(self, item_id: Annotated[str, Field(description="The item's id from search_items")]) -> dict[str, Any]:
        """One item by id: name, price and description."""
        return self._card(item_id, self._product(item_id))


class Shipt(_Grocery):
    name = "shipt"
    title = "Shipt"
    counterparts = ("instacart",)
    id_field = "product_id"
    id_prefix = "sh"
    slot_field = "window_id"
    tools = ("get_delivery_windows", "reserve_delivery_window", "search_products", "get_product")
    words: ClassVar[dict[str, str]] = {"items": "products", "item": "product", "slot": "window"}

    @tool("read", failure_hint="Window dates can be wrong; check each window's date is in the future before using it.")
    def get_delivery_windows(self, store: StoreArg) -> dict[str, Any]:
        """Delivery windows from a store, in time order, with start, end and whether each is open."""
        return self._windows(store)

    @tool("write", failure_hint="A past or full window is refused; confirm with shipt_get_reservation.")
    def reserve_delivery_window(
        self, window_id: Annotated[str, Field(description="The window's id from get_delivery_windows")]
    ) -> dict[str, Any]:
        """Reserve a delivery window (replacing any window reserved before)."""
        return self._reserve(window_id)

    @tool("read", failure_hint="Results can repeat or miss products; confirm one with shipt_get_product.")
    def search_products(self, store: StoreArg, query: SearchArg) -> dict[str, Any]:
        """Search a store's products; every match with its id and price."""
        return self._search(store, query)

    @tool("read", failure_hint="An unknown id is a not_found error; take ids from shipt_search_products.")
    def get_product(self, product_id: ProductId) -> dict[str, Any]:
        """One product by id: name, price and description."""
        return self._card(product_id, self._product(product_id))


SERVICES: list[type[Service]] = [UberEats, DoorDash, Grubhub, Amazon, Walmart, Instacart, Shipt]
