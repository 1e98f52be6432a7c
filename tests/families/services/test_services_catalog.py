"""All 30 simulated services (env_core.services.catalog) held to one contract: each service's shape, each tool spec,
reads that show the seeded facts (the same facts at every counterpart), writes that a readback confirms and only
after the write, batches a partial write visibly cuts, and episodes that never share a write. The calls and what
they show are written out by hand from the data files (``env_core/services/data``). What one service module alone
seeds or does (the paper's cards, particular tool behaviours and errors) is tested beside it, in
test_services_<module>.py."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta
from types import ModuleType
from typing import Any

import pytest
from simulated_services import call, episode, fresh, ok, run, text

from undertow.env_core.environment import Environment
from undertow.env_core.faults import partial_arguments
from undertow.env_core.model import Action, ToolCall, ToolSpec
from undertow.env_core.services import commerce, communication, finance, information, travel
from undertow.env_core.services.base import DOMAINS, Service
from undertow.env_core.services.catalog import BY_NAME, SERVICES, all_specs
from undertow.env_core.services.tools import pristine_world

# each service module's one domain, and its categories with their services
TAXONOMY: dict[ModuleType, tuple[str, dict[str, set[str]]]] = {
    travel: ("travel & lodging", {"lodging": {"booking", "expedia", "airbnb"}, "rides": {"uber", "lyft"}}),
    finance: ("payments & finance", {"payments": {"zelle", "venmo", "paypal"}, "trading": {"robinhood", "etrade"}}),
    commerce: (
        "commerce & food",
        {
            "food_delivery": {"ubereats", "doordash", "grubhub"},
            "retail": {"amazon", "walmart"},
            "groceries": {"instacart", "shipt"},
        },
    ),
    communication: (
        "communication & productivity",
        {"email": {"gmail", "outlook_mail"}, "calendar": {"google_calendar", "outlook_calendar"}},
    ),
    information: (
        "information",
        {
            "weather": {"weathercom", "yahoo_weather", "accuweather", "nws"},
            "reviews": {"google_reviews", "yelp", "tripadvisor"},
            "news": {"google_news", "reuters"},
        },
    ),
}
# Walmart carries the card's four pickup tools beside the retail catalog and cart
MAX_TOOLS: dict[str, int] = {"walmart": 8}
READ_ONLY = {"nws", "google_news", "reuters"}  # the contract lets these offer no writes
# the arguments that make a read a search, whose service then opens a record it found by id (a pin), by domain
SEARCH_ARGUMENTS: dict[str, set[str]] = {
    "travel & lodging": {"query", "city", "location"},
    "payments & finance": {"query"},
    "commerce & food": {"query"},
}

Arguments = dict[str, Any]


@dataclass(frozen=True)
class Pin:
    """A read that opens one record by its id (the record a search found), and what the record shows."""

    method: str
    arguments: Arguments
    shows: str


@dataclass(frozen=True)
class Read:
    """A read of one service on the seeded world; its result shows the facts of its topic (``FACTS``)."""

    topic: str
    service: str
    method: str
    arguments: Arguments
    pin: Pin | None = None


@dataclass(frozen=True)
class Change:
    """A write of one service on the seeded world: ``readback`` (a readback tool) shows ``landed`` once the write has
    landed and not before; ``states`` are what the write's own result or the readback states; ``before`` are the
    reads a request makes first (the search before a booking, the menu before an order)."""

    topic: str
    service: str
    method: str
    arguments: Arguments
    readback: tuple[str, Arguments]
    landed: tuple[str, ...]
    states: tuple[str, ...] = ()
    before: tuple[tuple[str, Arguments], ...] = ()


# The facts each topic's reads show, at every service that serves it (prices and values as the result's JSON writes
# them). From the data files: the cheapest Manhattan hotel (Budget Midtown at 171.35 a night, stays.jsonl); the fare of
# a standard ride SFO -> Moscone Center, 14.9 road miles and round(14.9 * 2.1 + 5) = 36 minutes, so 2.55 + 1.38 * 14.9
# + 0.41 * 36 = 37.87 (fare_classes.jsonl, ride_places.jsonl), and Union Square -> Chase Center, 2.3 miles and 10
# minutes, 9.82; the forecast facts of Saturday, March 21 in Napa and Tuesday, March 24 on Maui (forecast_facts.jsonl,
# hourly_facts.jsonl: thunderstorms from 13:00).
FACTS: dict[str, tuple[str, ...]] = {
    "manhattan_hotels": ("Budget Midtown", '"nightly_price": 171.35'),
    "lisbon_stay": ("Principe Real Studio", '"nightly_price": 118.35'),
    "stay_policy": ("Free cancellation until 7 days before check-in", '"check_in_time": "16:00"'),
    "airport_fare": ("Moscone Center", '"fare": 37.87', '"duration_min": 36'),
    "arena_fare": ("Chase Center", '"fare": 9.82'),
    "priya_contact": ("Priya Nair", "priya.nair@example.com", "+1-415-555-0187"),
    "dana_contact": ("Dana Whitfield", "dana.whitfield@example.com", "+1-510-555-0123"),
    "nvda_quote": ("NVDA", '"last_price": 131.42'),
    "total_market_fund": ("VTI", "281.64"),
    "ramen_price": ("Tonkotsu Ramen", '"price": 16.5'),
    "taco_search": ("Taqueria El Sol", '"rating": 4.7'),
    "power_bank": ("VoltPeak 26800mAh Power Bank", '"price": 54.99'),
    "coffee_maker": ("BrewLine 12-Cup Programmable Coffee Maker", '"price": 79.95', '"rating": 4.5'),
    "next_delivery_window": ("2026-03-21T15:00:00Z", "2026-03-21T17:00:00Z"),
    "oat_milk_price": ("Oatly Oat Milk Barista Edition, 32 oz", '"price": 5.49'),
    "email_flight_confirmation": ("HX7Q2P", "DL 1184", "08:15"),
    "email_dentist_reminder": ("Dr. Okafor", "March 26", "3:30 PM"),
    "email_rent_notice": ("2,850.00", "valve replacement", "March 24"),
    "calendar_monday_agenda": ("Team standup", "Quarterly planning review", "10:00", "Conference Room 4B"),
    "calendar_dentist_time": ("Dr. Okafor", "2026-03-26T15:30", "1820 Fillmore St"),
    "weather_napa_saturday": ("2026-03-21", "Thunderstorms", '"precip_chance": 80'),
    "weather_napa_saturday_hourly": ("2026-03-21T13:00", "Thunderstorms"),
    "weather_maui_tuesday": ("2026-03-24", "Partly Cloudy", '"high_f": 82'),
    "weather_memphis_flood_alert": ("Flood Warning", "Severe", "Wolf River"),
    "weather_memphis_flood_details": ("TNZ088", "39.2 ft", "Shelby County"),
    "reviews_nashville_bbq": ("Martin's Bar-B-Que Joint", "Peg Leg Porker", '"rating": 4.6'),
    "reviews_martins_details": ("Martin's Bar-B-Que Joint", '"rating": 4.6', "410 4th Ave S"),
    "reviews_martins_brisket": ("Dana K.", "peppery bark", "sold out"),
    "reviews_peg_leg_brisket": ("Chris B.", "pink ring", "sold out"),
    "news_fed_decision": ("Fed holds rates steady", "3.50%-3.75%", "10-2"),
    "news_memphis_crest": ("39.2 feet", "Wolf River"),
    "news_chip_plant": ("Northwind Semiconductor", "Ohio", "1,800"),
}

MANHATTAN: Arguments = {"check_in": "2026-04-07", "check_out": "2026-04-09", "guests": 2}
LISBON: Arguments = {"check_in": "2026-05-14", "check_out": "2026-05-17", "guests": 2}
AIRPORT = {"pickup": "SFO", "dropoff": "Moscone Center"}
ARENA = {"pickup": "Union Square", "dropoff": "Chase Center"}
NASHVILLE = {"location": "Nashville, TN"}
WHOLE_FOODS = {"store": "Whole Foods Market"}
NAPA, MAUI = "Napa Valley, CA", "Maui, HI"
NAPA_HOURS = {"location": NAPA, "date": "2026-03-21"}
MARTINS = "Martin's Bar-B-Que Joint"
VTI = {"symbol": "VTI"}
YELP_MARTINS, YELP_PEG_LEG = "martins-bar-b-que-joint-nashville", "peg-leg-porker-nashville"


def _contacts(topic: str, key: str, name: str) -> list[Read]:
    """A person's contact card at the three payment services (searched by name, or opened by id)."""
    return [
        Read(
            topic,
            "zelle",
            "search_recipients",
            {"query": name},
            Pin("get_recipient", {"recipient_id": f"zr_{key}"}, name),
        ),
        Read(topic, "venmo", "get_contact", {"contact_id": f"vn_{key}"}),
        Read(
            topic, "paypal", "search_contacts", {"query": name}, Pin("get_contact", {"contact_id": f"pp_{key}"}, name)
        ),
    ]


def _weather(topic: str, place: str) -> list[Read]:
    """A week's daily forecast of ``place`` at the four weather services (Yahoo's also by the place's WOEID)."""
    week = {"location": place, "days": 7}
    woeid = Pin("get_forecast_by_woeid", {"woeid": "2457170", "days": 7}, "Thunderstorms") if place == NAPA else None
    return [
        Read(topic, "weathercom", "get_daily_forecast", week),
        Read(topic, "yahoo_weather", "get_daily_forecast", week, woeid),
        Read(topic, "accuweather", "get_daily_forecast", week),
        Read(topic, "nws", "get_forecast", {"location": place}),
    ]


WEATHER = ("weathercom", "yahoo_weather", "accuweather", "nws")

READS: list[Read] = [
    *(
        Read(
            topic, site, "search_hotels", {"city": city, **dates}, Pin("get_hotel", {"hotel_id": f"{id_}_{key}"}, name)
        )
        for topic, site, id_, city, dates, key, name in (
            ("manhattan_hotels", "booking", "bdc", "Manhattan", MANHATTAN, "budget_midtown", "Budget Midtown"),
            ("manhattan_hotels", "expedia", "exp", "Manhattan", MANHATTAN, "budget_midtown", "Budget Midtown"),
            ("lisbon_stay", "booking", "bdc", "Lisbon", LISBON, "principe_real_studio", "Principe Real Studio"),
        )
    ),
    Read(
        "lisbon_stay",
        "airbnb",
        "search_listings",
        {"location": "Lisbon", **LISBON},
        Pin("get_listing", {"listing_id": "abnb_principe_real_studio"}, "Principe Real Studio"),
    ),
    Read("stay_policy", "expedia", "get_hotel", {"hotel_id": "exp_alfama_loft"}),
    Read("stay_policy", "airbnb", "get_listing", {"listing_id": "abnb_alfama_loft"}),
    *(Read("airport_fare", s, "get_fare_estimates", AIRPORT) for s in ("uber", "lyft")),
    *(Read("arena_fare", s, "get_fare_estimates", ARENA) for s in ("uber", "lyft")),
    *_contacts("priya_contact", "priya_nair", "Priya Nair"),
    *_contacts("dana_contact", "dana_whitfield", "Dana Whitfield"),
    *(Read("nvda_quote", s, "get_quote", {"symbol": "NVDA"}) for s in ("robinhood", "etrade")),
    *(
        Read("total_market_fund", s, search, {"query": "Vanguard Total Stock Market"}, Pin("get_quote", VTI, "VTI"))
        for s, search in (("robinhood", "search_instruments"), ("etrade", "lookup_symbol"))
    ),
    *(
        read
        for site, ramen, tacos in (
            ("ubereats", "REST-RAMEN-001", "REST-TACO-002"),
            ("doordash", "dd_store_ramen_house", "dd_store_taqueria_el_sol"),
            ("grubhub", "gh_rest_ramen_house", "gh_rest_taqueria_el_sol"),
        )
        for read in (
            Read("ramen_price", site, "get_menu", {"restaurant_id": ramen}),
            Read(
                "taco_search",
                site,
                "search_restaurants",
                {"query": "tacos"},
                Pin("get_menu", {"restaurant_id": tacos}, "Taqueria El Sol"),
            ),
        )
    ),
    *(
        Read(topic, site, "search_products", {"query": query}, Pin("get_product", {"product_id": f"{id_}_{key}"}, name))
        for site, id_ in (("amazon", "amz"), ("walmart", "wm"))
        for topic, query, key, name in (
            ("power_bank", "power bank", "voltpeak_26800", "VoltPeak 26800mAh Power Bank"),
            ("coffee_maker", "coffee maker", "brewline_12cup", "BrewLine 12-Cup Programmable Coffee Maker"),
        )
    ),
    *(
        read
        for site, slots, search, item in (
            (
                "instacart",
                "get_delivery_slots",
                "search_items",
                Pin("get_item", {"item_id": "ic_wf_oat_milk"}, "Oatly"),
            ),
            (
                "shipt",
                "get_delivery_windows",
                "search_products",
                Pin("get_product", {"product_id": "sh_wf_oat_milk"}, "Oatly"),
            ),
        )
        for read in (
            Read("next_delivery_window", site, slots, WHOLE_FOODS),
            Read("oat_milk_price", site, search, {**WHOLE_FOODS, "query": "oat milk"}, item),
        )
    ),
    *(
        Read(topic, mail, "search_inbox", {"query": query}, Pin("get_message", {"message_id": f"{id_}_{key}"}, shows))
        for mail, id_ in (("gmail", "gm"), ("outlook_mail", "olm"))
        for topic, query, key, shows in (
            ("email_flight_confirmation", "Delta confirmation", "delta", "HX7Q2P"),
            ("email_dentist_reminder", "Bright Smile appointment", "dentist", "Dr. Okafor"),
            ("email_rent_notice", "from:harborview rent", "landlord", "2,850.00"),
        )
    ),
    *(
        read
        for site, primary, id_ in (
            ("google_calendar", "cal_001", "gev"),
            ("outlook_calendar", "olcal_calendar", "olev"),
        )
        for read in (
            # the agenda lists the standup first; its pin opens the planning review the question is about
            Read(
                "calendar_monday_agenda",
                site,
                "list_events",
                {"calendar_id": primary, "date": "2026-03-23"},
                Pin("get_event", {"event_id": f"{id_}_planning"}, "Conference Room 4B"),
            ),
            Read(
                "calendar_dentist_time",
                site,
                "search_events",
                {"query": "dentist"},
                Pin("get_event", {"event_id": f"{id_}_dentist"}, "Dr. Okafor"),
            ),
        )
    ),
    *_weather("weather_napa_saturday", NAPA),
    *(Read("weather_napa_saturday_hourly", s, "get_hourly_forecast", NAPA_HOURS) for s in WEATHER),
    *_weather("weather_maui_tuesday", MAUI),
    *(
        read
        for site, where, details, alert in (
            ("weathercom", "location", "get_alert_details", "alert_memphis_flood"),
            ("accuweather", "location", "get_alert", "aw_memphis_flood"),
            ("nws", "area", "get_alert_bulletin", "NWS-memphis_flood"),
        )
        for read in (
            Read(
                "weather_memphis_flood_alert",
                site,
                "get_alerts",
                {where: "Memphis, TN"},
                Pin(details, {"alert_id": alert}, "Flood Warning"),
            ),
            # the National Weather Service's bulletin also takes the area it covers
            Read(
                "weather_memphis_flood_details",
                site,
                details,
                {"area": "Memphis, TN"} if site == "nws" else {"alert_id": alert},
            ),
        )
    ),
    *(
        read
        for site, search, term, open_place, place_id, martins, peg_leg in (
            ("google_reviews", "search_places", "query", "get_place", "place_id", "gp_martins", "gp_peg_leg"),
            ("yelp", "search_businesses", "term", "get_business", "business_id", YELP_MARTINS, YELP_PEG_LEG),
            ("tripadvisor", "search_restaurants", "query", "get_restaurant", "location_id", "ta_4367121", "ta_2390871"),
        )
        for read in (
            Read("reviews_nashville_bbq", site, search, {term: "BBQ", **NASHVILLE}),
            Read(
                "reviews_martins_details",
                site,
                search,
                {term: MARTINS, **NASHVILLE},
                Pin(open_place, {place_id: martins}, MARTINS),
            ),
            Read("reviews_martins_brisket", site, "get_reviews", {place_id: martins}),
            Read("reviews_peg_leg_brisket", site, "get_reviews", {place_id: peg_leg}),
        )
    ),
    *(
        Read(topic, site, search, {query: words}, Pin("get_article", {"article_id": f"{id_}{key}"}, shows))
        for site, id_, search, query in (
            ("google_news", "gn_", "search_news", "query"),
            ("reuters", "reu_", "search_articles", "keywords"),
        )
        for topic, words, key, shows in (
            ("news_fed_decision", "Federal Reserve", "fed", "3.50%-3.75%"),
            ("news_memphis_crest", "Memphis crest", "memphis", "39.2 feet"),
            ("news_chip_plant", "Northwind", "chip", "1,800"),
        )
    ),
]

# Writes. The totals: The Manhattan Beacon Hotel at 342.75 a night for 2 nights is 685.5 and the Alfama Riverside Loft
# at 142.65 for 3 nights 427.95 (stays.jsonl); 5 Tonkotsu Ramen at 16.50 and 2 Pork Gyoza at 7.25 are 97.00, with the
# 10% service fee (9.70) and 9.5% tax (9.215, so 9.22) 115.92 (restaurants.jsonl).
OFFSITE = ["dana.whitfield@example.com", "jordan.lee@example.com", "sam.patel@example.com"]
OFFSITE_SUBJECT = "Draft agenda: April 2 team offsite"
OFFSITE_MAIL = {"to": OFFSITE, "subject": OFFSITE_SUBJECT, "body": "Draft agenda, April 2."}
INVITEES = ["dana.whitfield@example.com", "jordan.lee@example.com"]  # the planning review seats Alex and Sam
COWORKERS = ("jordan_lee", "sam_patel", "mei_chen", "luis_ortega")
SPLIT = ("Jordan Lee", "Luis Ortega")  # the first and the last of the four a split asks
BBQ = ("Martin's Bar-B-Que Joint", "Peg Leg Porker")
CART = ("PowerCell AA Alkaline Batteries, 20-Pack", "Lumen USB-C to USB-C Cable, 6 ft, 2-Pack")
GROCERIES = ("365 Organic Large Brown Eggs, 12 ct", "Organic Baby Spinach, 5 oz")
STORIES = ("Fed holds rates steady, signals two cuts later this year", "Northwind Semiconductor picks Ohio")
TAXES = {"start": "2026-03-25T14:00", "end": "2026-03-25T16:00"}
ALFAMA = ("Alfama Riverside Loft", "Principe Real Studio")
BEACON = ("The Manhattan Beacon Hotel", '"check_in": "2026-04-07"')
# Booking.com already holds the Principe Real Studio up to May 14 (histories/bookings.jsonl): a check-in is what is new
LOFT = ("Alfama Riverside Loft", '"check_in": "2026-05-14"')
IN_MANHATTAN, IN_LISBON = {"city": "Manhattan", **MANHATTAN}, {"city": "Lisbon", **LISBON}
DANA = {"amount": 85.4, "note": "Concert tickets"}
MEI = {"amount": 32.75, "note": "Team lunch on Friday"}
SENT = ("list_sent", {"limit": 10})
N: Arguments = {}  # no arguments

CHANGES: list[Change] = [
    Change("manhattan_booking", "booking", "create_booking", {"hotel_id": "bdc_manhattan_beacon", **MANHATTAN},
           ("list_bookings", N), BEACON, ('"total_price": 685.5',), (("search_hotels", IN_MANHATTAN),)),
    Change("manhattan_booking", "expedia", "book_hotel", {"hotel_id": "exp_manhattan_beacon", **MANHATTAN},
           ("list_trips", N), BEACON, ('"total_price": 685.5',), (("search_hotels", IN_MANHATTAN),)),
    Change("lisbon_booking", "booking", "create_booking", {"hotel_id": "bdc_alfama_loft", **LISBON},
           ("list_bookings", N), LOFT, ('"total_price": 427.95',), (("search_hotels", IN_LISBON),)),
    Change("lisbon_booking", "airbnb", "book_listing", {"listing_id": "abnb_alfama_loft", **LISBON},
           ("list_reservations", N), LOFT, ('"total_price": 427.95',),
           (("search_listings", {"location": "Lisbon", **LISBON}),)),
    Change("lisbon_shortlist", "expedia", "save_hotels", {"hotel_ids": ["exp_alfama_loft", "exp_principe_real_studio"]},
           ("get_saved_hotels", N), ALFAMA),
    Change("lisbon_shortlist", "airbnb", "add_to_wishlist",
           {"listing_ids": ["abnb_alfama_loft", "abnb_principe_real_studio"]}, ("get_wishlist", N), ALFAMA),
    *(change for site, product in (("uber", "UberX"), ("lyft", "Lyft")) for change in (
        Change("airport_ride", site, "request_ride", {**AIRPORT, "product": product}, ("list_rides", N),
               ("Moscone Center", "San Francisco International Airport (SFO)"), ('"fare": 37.87',),
               (("get_fare_estimates", AIRPORT),)),
        Change("save_places", site, "add_saved_places", {"places": ["Moscone Center", "Chase Center"]},
               ("get_saved_places", N), ("Moscone Center", "Chase Center")),
    )),
    Change("send_dana", "zelle", "send_transfer",
           {"recipient_id": "zr_dana_whitfield", "amount": 85.4, "memo": "Concert tickets"}, ("list_transfers", N),
           ("Dana Whitfield", "85.4"), (), (("search_recipients", {"query": "Dana Whitfield"}),)),
    Change("send_dana", "paypal", "send_money", {"contact_id": "pp_dana_whitfield", **DANA}, ("list_activity", N),
           ("Dana Whitfield", "85.4"), (), (("search_contacts", {"query": "Dana Whitfield"}),)),
    Change("request_mei", "venmo", "request_money", {"contact_id": "vn_mei_chen", **MEI}, ("list_requests", N),
           ("Mei Chen", "32.75"), (), (("list_contacts", N),)),
    Change("request_mei", "paypal", "request_money", {"contact_ids": ["pp_mei_chen"], **MEI}, ("list_requests", N),
           ("Mei Chen", "32.75")),
    Change("split_ramen", "venmo", "request_split",
           {"contact_ids": [f"vn_{k}" for k in COWORKERS], "amount_each": 19.72}, ("list_requests", N), SPLIT,
           ("19.72",)),
    Change("split_ramen", "paypal", "request_money", {"contact_ids": [f"pp_{k}" for k in COWORKERS], "amount": 19.72},
           ("list_requests", N), SPLIT, ("19.72",), (("search_contacts", {"query": ""}),)),
    *(change for site, order in (
        ("robinhood", {"side": "buy", "order_type": "limit"}), ("etrade", {"action": "BUY", "price_type": "LIMIT"})
    ) for change in (
        Change("buy_vti", site, "place_order", {**VTI, **order, "quantity": 4, "limit_price": 279.85},
               ("list_orders", N), ("VTI", "279.85"), (), (("get_quote", VTI),)),
        Change("chip_watchlist", site, "add_to_watchlist", {"symbols": ["AMD", "TSM", "AVGO", "INTC"]},
               ("get_watchlist", N), ("AMD", "INTC")),
    )),
    *(Change("ramen_order", site, "submit_order",
             {"restaurant_id": ramen, "items": [{"item_id": f"{item}tonkotsu", "quantity": 5},
                                                {"item_id": f"{item}gyoza", "quantity": 2}]},
             ("list_orders", N), ("Ramen House", "Pork Gyoza"), ("115.92",),
             (("search_restaurants", {"query": "Ramen House"}), ("get_menu", {"restaurant_id": ramen})))
      for site, ramen, item in (("ubereats", "REST-RAMEN-001", "ITEM-"),
                                ("doordash", "dd_store_ramen_house", "dd_item_"),
                                ("grubhub", "gh_rest_ramen_house", "gh_item_"))),
    *(Change("cart_batteries", site, "add_to_cart",
             {"items": [{"product_id": f"{id_}_powercell_aa20", "quantity": 2},
                        {"product_id": f"{id_}_lumen_usbc_6ft", "quantity": 1}]},
             ("get_cart", N), CART, (), (("search_products", {"query": "batteries"}),
                                         ("search_products", {"query": "usb-c cable"})))
      for site, id_ in (("amazon", "amz"), ("walmart", "wm"))),
    *(change for site, reserve, slot, item, id_, search in (
        ("instacart", "reserve_delivery_slot", "slot_id", "item_id", "ic", "search_items"),
        ("shipt", "reserve_delivery_window", "window_id", "product_id", "sh", "search_products"),
    ) for change in (
        Change("reserve_next_window", site, reserve, {slot: f"{id_}_wf_0321_1500"}, ("get_reservation", N),
               ("2026-03-21T15:00:00Z",), (), (("get_delivery_slots" if site == "instacart" else "get_delivery_windows",
                                                 WHOLE_FOODS),)),
        Change("grocery_cart", site, "add_to_cart",
               {"items": [{item: f"{id_}_wf_eggs", "quantity": 1}, {item: f"{id_}_wf_spinach", "quantity": 2}]},
               ("get_cart", N), GROCERIES, (), ((search, {**WHOLE_FOODS, "query": "eggs"}),)),
    )),
    *(change for site, id_, tag in (("gmail", "gm", "Fwd:"), ("outlook_mail", "olm", "FW:")) for change in (
        Change("email_offsite_agenda", site, "send_email", OFFSITE_MAIL, SENT,
               (OFFSITE_SUBJECT, "jordan.lee@example.com"), ("Dana Whitfield", "Jordan Lee", "Sam Patel")),
        Change("email_forward_flight", site, "forward_message",
               {"message_id": f"{id_}_delta", "to": ["maria.rivera@example.com"]}, SENT,
               (f"{tag} Your flight confirmation HX7Q2P", "maria.rivera@example.com")),
    )),
    *(change for site, primary, title, invite, event in (
        ("google_calendar", "cal_001", "title", "add_attendees", "gev_planning"),
        ("outlook_calendar", "olcal_calendar", "subject", "invite_attendees", "olev_planning"),
    ) for change in (
        Change("calendar_block_taxes", site, "create_event", {"calendar_id": primary, title: "Tax paperwork", **TAXES},
               ("list_events", {"calendar_id": primary, "date": "2026-03-25"}), ("Tax paperwork",), ("14:00", "16:00")),
        Change("calendar_invite_planning", site, invite, {"event_id": event, "attendees": INVITEES},
               ("get_event", {"event_id": event}), tuple(INVITEES), ("Quarterly planning review",)),
    )),
    Change("weather_save_maui", "weathercom", "add_saved_location", {"location": "Maui"}, ("get_saved_locations", N),
           ("Maui, HI",)),
    Change("weather_save_maui", "yahoo_weather", "add_favorites", {"locations": ["Maui"]}, ("get_favorites", N),
           ("Maui, HI",)),
    *(Change("weather_save_maui_bali", site, "add_favorites", {"locations": ["Maui", "Bali"]}, ("get_favorites", N),
             ("Maui, HI", "Bali, Indonesia")) for site in ("yahoo_weather", "accuweather")),
    Change("reviews_mark_helpful", "google_reviews", "mark_helpful", {"review_id": "gr_martins_1"},
           ("list_helpful_votes", N), ("gr_martins_1",), ("Dana K.",)),
    Change("reviews_mark_helpful", "yelp", "mark_useful", {"review_id": "yr_martins_1"}, ("list_my_votes", N),
           ("yr_martins_1",), ("Dana K.",)),
    Change("reviews_save_bbq", "google_reviews", "save_places", {"place_ids": ["gp_martins", "gp_peg_leg"]},
           ("get_saved_places", N), BBQ),
    Change("reviews_save_bbq", "yelp", "bookmark_businesses", {"business_ids": [YELP_MARTINS, YELP_PEG_LEG]},
           ("get_bookmarks", N), BBQ),
    Change("reviews_save_bbq", "tripadvisor", "save_to_trip",
           {"trip_id": "trip_nashville", "location_ids": ["ta_4367121", "ta_2390871"]},
           ("get_trip", {"trip_id": "trip_nashville"}), BBQ),
    *(Change("news_save_stories", site, "save_articles", {"article_ids": [f"{id_}fed", f"{id_}chip"]},
             ("get_saved_articles", N), STORIES) for site, id_ in (("google_news", "gn_"), ("reuters", "reu_"))),
]  # fmt: skip
PARTIAL = [change for change in CHANGES if partial_arguments(change.arguments) is not None]
SPECS = sorted(all_specs(), key=lambda s: s.name)


def label(value: Any) -> str:
    return f"{value.service}-{value.topic}"


def results(env: Environment, service: type[Service], method: str, arguments: Arguments) -> list[str]:
    """A read's result as JSON text twice: called in the episode, and run straight on a pristine world."""
    return [text(ok(env, service, method, **arguments)), text(run(fresh(service, SERVICES), method, **arguments))]


@pytest.mark.parametrize("module", TAXONOMY, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_taxonomy(module: ModuleType) -> None:
    domain, expected = TAXONOMY[module]
    categories: dict[str, set[str]] = defaultdict(set)
    for service in module.SERVICES:
        assert service.domain == domain
        categories[service.category].add(service.name)
    assert categories == expected


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.name)
def test_service_shape(service: type[Service]) -> None:
    world = pristine_world(SERVICES)
    assert service(world).state is world.states[service.name]
    assert service.domain in DOMAINS and service.category and service.title
    peers = {s.name for s in SERVICES if s.category == service.category and s is not service}
    assert set(service.counterparts) == peers
    assert 4 <= len(service.tool_methods()) <= MAX_TOOLS.get(service.name, 7)
    assert 4 <= len(service.specs()) <= MAX_TOOLS.get(service.name, 7)
    if service.name not in READ_ONLY:
        assert {"write", "readback"} <= {spec.binding["kind"] for spec in service.specs()}
    # seeded the same every time, never from the wall clock
    assert service.initial_state().model_dump() == service.initial_state().model_dump()


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_tool_spec(spec: ToolSpec) -> None:
    service = BY_NAME[spec.binding["service"]]
    assert spec.name.startswith(f"{service.name}_")
    assert spec.description.startswith(f"{service.title}: ") and len(spec.description) > len(service.title) + 20
    assert spec.binding["kind"] in ("read", "write", "readback")
    assert spec.binding["failure_hint"].strip().endswith(".")
    assert spec.parameters["type"] == "object" and spec.parameters["additionalProperties"] is False
    for name, prop in spec.parameters.get("properties", {}).items():
        assert prop.get("description"), f"{spec.name}.{name} has no description"
        assert "type" in prop or "anyOf" in prop or "enum" in prop, f"{spec.name}.{name} is untyped"


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.name)
def test_every_service_is_read_and_written_here(service: type[Service]) -> None:
    """The reads and writes below reach every service: two reads or more each, a write unless the service is read-only,
    and for a service that searches, a read that opens a record the search found by its id."""
    reads = [read for read in READS if read.service == service.name]
    assert len(reads) >= 2
    searches = [read for read in reads if set(read.arguments) & SEARCH_ARGUMENTS.get(service.domain, set())]
    assert not searches or any(read.pin for read in searches), "a search needs a read by id"
    assert any(change.service == service.name for change in CHANGES) or service.name in READ_ONLY


@pytest.mark.parametrize("read", READS, ids=label)
def test_read_shows_the_seeded_facts(read: Read) -> None:
    service = BY_NAME[read.service]
    kinds = {spec.binding["method"]: spec.binding["kind"] for spec in service.specs()}
    assert kinds[read.method] != "write"  # a read, or a readback (a record by id, a list)
    env = episode(SERVICES)
    shown = results(env, service, read.method, read.arguments)
    for result in shown:
        for fact in FACTS[read.topic]:
            assert fact in result, (read.service, read.topic, fact)
    # a read is a pure function of the state: the same later on the clock, in the episode and on a later world
    for _ in range(5):
        env._state.tick()  # type: ignore[union-attr]
    assert text(ok(env, service, read.method, **read.arguments)) == shown[0]
    early, late = pristine_world(SERVICES), pristine_world(SERVICES)
    late.now += timedelta(hours=5)
    assert run(service(early), read.method, **read.arguments) == run(service(late), read.method, **read.arguments)
    if read.pin is not None:
        assert read.pin.method != read.method and kinds[read.pin.method] != "write"
        for pinned in results(env, service, read.pin.method, read.pin.arguments):
            assert read.pin.shows in pinned
            assert all(str(value) in pinned for value in read.pin.arguments.values())


@pytest.mark.parametrize("change", CHANGES, ids=label)
def test_write_lands_only_after_the_write(change: Change) -> None:
    service = BY_NAME[change.service]
    kinds = {spec.binding["method"]: spec.binding["kind"] for spec in service.specs()}
    readback, readback_arguments = change.readback
    assert kinds[change.method] == "write" and kinds[readback] == "readback"
    for method, arguments in change.before:
        assert kinds[method] != "write", (change.service, change.topic, method)
        ok(episode(SERVICES), service, method, **arguments)
    # in an episode, and run straight on a pristine world
    calls = ((readback, readback_arguments), (change.method, change.arguments), (readback, readback_arguments))
    env = episode(SERVICES)
    in_episode = [text(ok(env, service, method, **arguments)) for method, arguments in calls]
    instance = fresh(service, SERVICES)
    outside = [text(run(instance, method, **arguments)) for method, arguments in calls]
    for before, echo, after in (in_episode, outside):
        for landed in change.landed:
            assert landed not in before and landed in after, (change.service, change.topic, landed)
        for stated in change.states:
            assert stated in after or stated in echo, (change.service, change.topic, stated)
    # another episode of the same tool box never sees the write
    other = episode(SERVICES)
    assert text(ok(other, service, readback, **readback_arguments)) == in_episode[0]


@pytest.mark.parametrize("change", PARTIAL, ids=label)
def test_partial_batch_is_visible(change: Change) -> None:
    """A partial write (the fault layer's first half of each list) leaves a landed item missing, so the readback
    tells a cut batch from a whole one."""
    service = BY_NAME[change.service]
    cut = partial_arguments(change.arguments)
    assert cut is not None
    env = episode(SERVICES)
    observation = call(env, service, change.method, **cut)
    readback, readback_arguments = change.readback
    after = text(ok(env, service, readback, **readback_arguments))
    assert not observation.ok or not all(landed in after for landed in change.landed), (service.name, change.topic)


def test_counterparts_show_the_same_facts() -> None:
    """Each topic's facts are read at two or more services of one category: a fallback from one service to its
    counterpart reaches the same facts."""
    by_topic: dict[str, set[str]] = defaultdict(set)
    for read in READS:
        by_topic[read.topic].add(read.service)
    assert set(by_topic) == set(FACTS)
    for topic, services in by_topic.items():
        assert len(services) >= 2, f"topic {topic} has one service"
        assert len({BY_NAME[name].category for name in services}) == 1, f"topic {topic} spans categories"


def test_each_category_has_a_batch_write() -> None:
    """Every category has a write that takes a list (a batch, which a partial write can cut), and a batch write of
    each category is cut above."""
    for category in {s.category for s in SERVICES}:
        specs = [spec for s in SERVICES if s.category == category for spec in s.specs()]
        assert any(
            spec.binding["kind"] == "write"
            and any(p.get("type") == "array" for p in spec.parameters.get("properties", {}).values())
            for spec in specs
        ), category
        assert any(BY_NAME[change.service].category == category for change in PARTIAL), category


def _junk(prop: dict[str, Any]) -> Any:
    kind = prop.get("type") or next(p["type"] for p in prop.get("anyOf", []) if p.get("type") != "null")
    if "enum" in prop:
        return prop["enum"][0]
    return {"string": "zz-unknown", "integer": 3, "number": 12.5, "boolean": True}.get(kind, [])


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_bad_arguments_are_tool_errors(spec: ToolSpec) -> None:
    """Unknown ids, empty lists and odd values come back as errors the agent reads, never as a crash."""
    props = spec.parameters.get("properties", {})
    for variant in range(3):
        arguments = {}
        for name, prop in props.items():
            value = _junk(prop)
            if isinstance(value, list) and variant == 1:
                value = [{"zz": 1}]
            elif isinstance(value, list) and variant == 2:
                value = ["zz-unknown"] if prop.get("items", {}).get("type") == "string" else [{}]
            arguments[name] = value
        observation = episode(SERVICES).step(
            Action(kind="tool_call", tool_call=ToolCall(id="x", name=spec.name, arguments=arguments))
        )
        assert observation.ok or observation.error is not None
