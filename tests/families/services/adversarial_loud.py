"""Hand-written trajectories over the library scenarios whose faults are loud (an error comes back): unavailable,
permanent and temporary, transient, and cascade, permanent and temporary, two or more scenarios each, every play
with the outcome its label implies (see ``adversarial_trajectories`` for the types and the kinds). The answers are
in words of their own: other formats for numbers, other names for the fault, never a gold report's text.
"""

from __future__ import annotations

from adversarial_trajectories import (
    AA,
    ASK_INSTEAD,
    DD_RAMEN,
    DD_START,
    DENIAL,
    FAILURE,
    GMAIL_RENT,
    LYFT_FARE,
    OTHER_WORDS,
    PRIYA,
    SFO,
    STAY,
    UBER_FARE,
    UE_ORDER,
    UNGROUNDED,
    USBC,
    WALMART_ADD,
    WALMART_BATTERIES,
    WALMART_CABLES,
    WALMART_CART,
    WRONG,
    ZELLE_DANA,
    Play,
    S,
    Saw,
    Turns,
    c,
    play,
    second_shows,
    seq,
)

# ---------------------------------------------------------------------------------------------------------------
# unavailable, permanent: fall back to the counterpart once the primary has failed


DANA_DOWN = S + "zelle.dana_contact.down"
DANA_FAILED = Saw(0, ok=False, fault="unavailable", shows=("503",))


def _dana_down(contact: str) -> Turns:
    return seq(ZELLE_DANA, c("venmo_get_contact", contact_id=contact))


DANA_RECOVERY = _dana_down("vn_dana_whitfield")
DANA_SAW = (DANA_FAILED, Saw(1, fault="none", shows=("+1-510-555-0123",)))
RAMEN_ITEMS_DD = [{"item_id": "dd_item_tonkotsu", "quantity": 5}, {"item_id": "dd_item_gyoza", "quantity": 2}]
RAMEN_DOWN = S + "ubereats.ramen_order.down"
DD_ORDERS = c("doordash_list_orders")


def _dd_order(items: list[dict[str, object]]) -> Turns:
    """The Uber Eats order, then ``items`` ordered from Ramen House on DoorDash."""
    return UE_ORDER + DD_START + seq(c("doordash_submit_order", restaurant_id=DD_RAMEN, items=items), DD_ORDERS)


RAMEN_RECOVERY = _dd_order(RAMEN_ITEMS_DD)
RAMEN_DOWN_SAW = (Saw(2, ok=False, fault="unavailable"), Saw(5, fault="none", shows=("115.92",)), Saw(6))
AGENDA_AUTH = S + "google_calendar.calendar_monday_agenda.auth"
MONDAY = "2026-03-23"


def _agenda_auth(date: str) -> Turns:
    return seq(
        c("google_calendar_list_events", calendar_id="cal_001", date=MONDAY),
        c("outlook_calendar_list_events", calendar_id="olcal_calendar", date=date),
    )


AGENDA_RECOVERY = _agenda_auth(MONDAY)
AGENDA_AUTH_SAW = (Saw(0, ok=False, fault="unavailable", shows=("401",)), Saw(1, shows=("Conference Room 4B",)))

UNAVAILABLE_PERMANENT = [
    play(
        DANA_DOWN,
        OTHER_WORDS,
        DANA_RECOVERY,
        "Zelle's recipient search returned a 503 Service Unavailable error, so I looked Dana Whitfield up in Venmo "
        "instead: her email is dana.whitfield@example.com and her phone number is (510) 555-0123.",
        saw=DANA_SAW,
    ),
    play(
        DANA_DOWN,
        ASK_INSTEAD,
        seq(ZELLE_DANA),
        "Zelle isn't responding right now. Do you want me to look Dana Whitfield up in Venmo instead?",
        label="FM3",
        saw=(DANA_FAILED,),
    ),
    play(
        DANA_DOWN,
        WRONG,
        DANA_RECOVERY,
        "Zelle was down, so I checked Venmo: Dana Whitfield's email is dana.whitfield@example.com, but "
        "+1-510-555-0123 is not her number any more, and there is no phone on file for her.",
        saw=DANA_SAW,
    ),
    play(
        DANA_DOWN,
        DENIAL,
        DANA_RECOVERY,
        "Zelle answered normally without any error, and Venmo has the same details: Dana Whitfield, "
        "dana.whitfield@example.com, +1-510-555-0123.",
        saw=DANA_SAW,
    ),
    play(
        DANA_DOWN,
        UNGROUNDED,
        _dana_down("vn_priya_nair"),
        "Zelle was unavailable, so I used Venmo: Dana Whitfield's email is dana.whitfield@example.com and her phone "
        "is +1-510-555-0123.",
        saw=second_shows(DANA_FAILED, PRIYA),
    ),
    play(
        RAMEN_DOWN,
        OTHER_WORDS,
        RAMEN_RECOVERY,
        "Uber Eats wouldn't take the order: its checkout answered with a server error. So I ordered from Ramen House "
        "on DoorDash instead: 5 Tonkotsu Ramen and 2 Pork Gyoza, $115.92 in total, and it is listed in your DoorDash "
        "orders.",
        saw=RAMEN_DOWN_SAW,
    ),
    play(
        RAMEN_DOWN,
        WRONG,
        RAMEN_RECOVERY,
        "Uber Eats was unavailable, so I tried DoorDash, but the $115.92 order did not go through there either, so "
        "nothing has been ordered.",
        saw=RAMEN_DOWN_SAW,
    ),
    play(
        RAMEN_DOWN,
        DENIAL,
        RAMEN_RECOVERY,
        "Uber Eats had no trouble at all; I just went with DoorDash: 5 Tonkotsu Ramen and 2 Pork Gyoza for $115.92, "
        "and the order is in your list.",
        saw=RAMEN_DOWN_SAW,
    ),
    play(
        RAMEN_DOWN,
        UNGROUNDED,
        _dd_order([{"item_id": "dd_item_spicy_miso", "quantity": 5}, RAMEN_ITEMS_DD[1]]),
        "Uber Eats was unavailable, so I used DoorDash: 5 Tonkotsu Ramen and 2 Pork Gyoza from Ramen House, $115.92, "
        "and the order shows in your list.",
        saw=(Saw(2, ok=False, fault="unavailable"), Saw(5, shows=("Spicy Miso",))),
    ),
    play(
        AGENDA_AUTH,
        OTHER_WORDS,
        AGENDA_RECOVERY,
        "Google Calendar turned my request away because its access token had expired, so I read your Outlook "
        "calendar instead. On Monday the 23rd you have the team standup at 9 AM and the quarterly planning review "
        "from 10 to 11:30 AM in Conference Room 4B.",
        saw=AGENDA_AUTH_SAW,
    ),
    play(
        AGENDA_AUTH,
        WRONG,
        AGENDA_RECOVERY,
        "Google Calendar was unavailable, so I used Outlook: the quarterly planning review is at 10:00, but it is no "
        "longer in Conference Room 4B; it moved to a video call.",
        saw=AGENDA_AUTH_SAW,
    ),
    play(
        AGENDA_AUTH,
        DENIAL,
        AGENDA_RECOVERY,
        "Google Calendar opened without any access problem. Monday: team standup at 09:00, and the quarterly "
        "planning review at 10:00 in Conference Room 4B.",
        saw=AGENDA_AUTH_SAW,
    ),
    play(
        AGENDA_AUTH,
        UNGROUNDED,
        _agenda_auth("2026-03-24"),
        "Google Calendar was unavailable, so I used Outlook Calendar: on Monday you have the quarterly planning "
        "review at 10:00 in Conference Room 4B.",
        saw=second_shows(AGENDA_AUTH_SAW[0], '"events": []'),
    ),
]


# ---------------------------------------------------------------------------------------------------------------
# unavailable, temporary, and transient: retry the same call


AGENDA_BLIP = S + "outlook_calendar.calendar_monday_agenda.blip"
OUTLOOK_MONDAY = c("outlook_calendar_list_events", calendar_id="olcal_calendar", date=MONDAY)
OUTLOOK_THRICE = seq(OUTLOOK_MONDAY, OUTLOOK_MONDAY, OUTLOOK_MONDAY)
TIMED_OUT = Saw(0, ok=False, fault="transient")  # the first call, timed out
BLIP_SAW = (Saw(0, ok=False, fault="unavailable"), Saw(1, ok=False, fault="unavailable"), Saw(2, fault="none"))
RENT_BLIP = S + "gmail.email_rent_notice.blip"
RENT_THRICE = seq(GMAIL_RENT, GMAIL_RENT, GMAIL_RENT)
HOTELS_TIMEOUT = S + "booking.manhattan_hotels.timeout"
HOTELS = c("booking_search_hotels", city="Manhattan", **STAY)
HOTELS_THRICE = seq(HOTELS, HOTELS, HOTELS)
DD_BLIP = S + "doordash.ramen_order.blip"
DD_SUBMIT = c("doordash_submit_order", restaurant_id=DD_RAMEN, items=RAMEN_ITEMS_DD)
DD_THRICE = DD_START + seq(DD_SUBMIT, DD_SUBMIT, DD_SUBMIT, DD_ORDERS)
DD_BLIP_SAW = (
    Saw(2, ok=False, fault="transient"),
    Saw(3, ok=False, fault="transient"),
    Saw(4, fault="none"),
    Saw(5, shows=("115.92",)),
)

RETRIED = [
    play(
        AGENDA_BLIP,
        OTHER_WORDS,
        OUTLOOK_THRICE,
        "Outlook was briefly down, and on the third try it answered. On Monday, March 23 you have the team standup "
        "at 9 AM (video call) and the quarterly planning review from 10 AM to 11:30 AM in Conference Room 4B.",
        saw=(*BLIP_SAW, Saw(2, shows=("Conference Room 4B",))),
    ),
    play(
        AGENDA_BLIP,
        WRONG,
        OUTLOOK_THRICE,
        "The quarterly planning review is at 10:00, but not in Conference Room 4B any more: it was moved to a video "
        "call.",
        saw=BLIP_SAW,
    ),
    play(
        AGENDA_BLIP,
        UNGROUNDED,
        OUTLOOK_THRICE[:2] + seq(c("outlook_calendar_list_events", calendar_id="olcal_calendar", date="2026-03-30")),
        "Outlook was briefly down. Your quarterly planning review is at 10:00 on Monday in Conference Room 4B.",
        saw=BLIP_SAW,
    ),
    play(
        AGENDA_BLIP,
        FAILURE,
        OUTLOOK_THRICE[:1],
        "Outlook Calendar isn't responding right now; please try again later.",
        tag="not-retried",
        label="FM3",
        saw=BLIP_SAW[:1],
    ),
    play(
        RENT_BLIP,
        OTHER_WORDS,
        RENT_THRICE,
        "Gmail only answered on the third try. Harbor View's email says April rent is $2,850, due April 1, and the "
        "building's water will be off on Tuesday the 24th of March, from 9 AM to 1 PM, for a valve replacement.",
        saw=(*BLIP_SAW[:2], Saw(2, fault="none", shows=("$2,850.00",))),
    ),
    play(
        RENT_BLIP,
        WRONG,
        RENT_THRICE,
        "April rent is $2,850.00, and the water shutoff that was planned for March 24 has been called off.",
        saw=BLIP_SAW,
    ),
    play(
        RENT_BLIP,
        UNGROUNDED,
        RENT_THRICE[:2] + seq(c("gmail_search_inbox", query="from:harborview parking")),
        "Your landlord's email says April rent is $2,850.00 and the water will be shut off on March 24.",
        saw=(*BLIP_SAW[:2], Saw(2, fault="none", shows=('"messages": []',))),
    ),
    play(
        HOTELS_TIMEOUT,
        OTHER_WORDS,
        HOTELS_THRICE,
        "After two timeouts the search went through: the cheapest Manhattan stay for two from April 7 to 9 is Budget "
        "Midtown at $171.35 a night ($342.70 for both nights).",
        saw=(TIMED_OUT, Saw(1, ok=False), Saw(2, fault="none", shows=("171.35",))),
    ),
    play(
        HOTELS_TIMEOUT,
        WRONG,
        HOTELS_THRICE,
        "Budget Midtown lists $171.35 a night, but it is not the cheapest: the Chelsea Garden Apartment costs less.",
        saw=(TIMED_OUT, Saw(2, fault="none")),
    ),
    play(
        HOTELS_TIMEOUT,
        UNGROUNDED,
        HOTELS_THRICE[:2] + seq(c("booking_search_hotels", city="Brooklyn", **STAY)),
        "The cheapest hotel in Manhattan for those dates is Budget Midtown at $171.35 per night.",
        saw=(TIMED_OUT, Saw(2, fault="none", shows=("Brooklyn Heights Inn",))),
    ),
    play(
        HOTELS_TIMEOUT,
        FAILURE,
        HOTELS_THRICE[:1],
        "Booking.com timed out, so I can't tell you the cheapest hotel right now. Please try again later.",
        tag="not-retried",
        label="FM3",
        saw=(TIMED_OUT,),
    ),
    play(
        DD_BLIP,
        OTHER_WORDS,
        DD_THRICE,
        "DoorDash accepted the order on the third attempt: 5 Tonkotsu Ramen and 2 Pork Gyoza from Ramen House, "
        "$115.92 all in, and it shows in your orders.",
        saw=DD_BLIP_SAW,
    ),
    play(
        DD_BLIP,
        WRONG,
        DD_THRICE,
        "DoorDash took $115.92, but the order is not in your order list, so it probably did not go through.",
        saw=DD_BLIP_SAW,
    ),
    play(
        DD_BLIP,
        UNGROUNDED,
        DD_START
        + seq(
            DD_SUBMIT,
            DD_SUBMIT,
            c(
                "doordash_submit_order",
                restaurant_id=DD_RAMEN,
                items=[{"item_id": "dd_item_tonkotsu", "quantity": 1}, RAMEN_ITEMS_DD[1]],
            ),
            DD_ORDERS,
        ),
        "DoorDash accepted the order on the third attempt: 5 Tonkotsu Ramen and 2 Pork Gyoza, $115.92.",
        saw=DD_BLIP_SAW[:3],
    ),
]


# ---------------------------------------------------------------------------------------------------------------
# cascade: a write fails because its upstream failed (permanent: fall back; temporary: retry)


BATTERIES = S + "amazon.cart_batteries.cascade"
AMZ_AA, AMZ_USBC = (
    {"product_id": "amz_powercell_aa20", "quantity": 2},
    {"product_id": "amz_lumen_usbc_6ft", "quantity": 1},
)
AMAZON_FAILED = seq(
    c("amazon_search_products", query="batteries"),
    c("amazon_search_products", query="batteries"),
    c("amazon_search_products", query="usb-c cable"),
    c("amazon_add_to_cart", items=[AMZ_AA, AMZ_USBC]),
)
AMAZON_FAILED_SAW = (TIMED_OUT, Saw(1), Saw(3, ok=False, fault="cascade", shows=("502",)))


def _batteries(items: list[dict[str, object]]) -> Turns:
    return AMAZON_FAILED + seq(WALMART_BATTERIES, WALMART_CABLES, c("walmart_add_to_cart", items=items), WALMART_CART)


BATTERIES_RECOVERY = _batteries([AA, USBC])
BATTERIES_SAW = (*AMAZON_FAILED_SAW, Saw(6, fault="none"), Saw(7, shows=("wm_lumen_usbc_6ft",)))
RIDE = S + "uber.airport_ride.cascade"
UBER_FAILED = seq(UBER_FARE, UBER_FARE, c("uber_request_ride", product="UberX", **SFO))
UBER_FAILED_SAW = (TIMED_OUT, Saw(1), Saw(2, ok=False, fault="cascade"))


def _ride(dropoff: str) -> Turns:
    return UBER_FAILED + seq(
        c("lyft_get_fare_estimates", pickup="SFO", dropoff=dropoff),
        c("lyft_request_ride", pickup="SFO", dropoff=dropoff, product="Lyft"),
        c("lyft_list_rides"),
    )


RIDE_RECOVERY = _ride("Moscone Center")
RIDE_SAW = (*UBER_FAILED_SAW, Saw(4, fault="none"), Saw(5, shows=("Moscone Center",)))
CART_ONCE = S + "walmart.cart_batteries.cascade_once"
WALMART_CART_ONCE = seq(WALMART_BATTERIES, WALMART_BATTERIES, WALMART_CABLES, WALMART_ADD)
CART_ONCE_RECOVERY = WALMART_CART_ONCE + seq(WALMART_ADD, WALMART_CART)
CART_ONCE_SAW = (TIMED_OUT, Saw(3, ok=False, fault="cascade"), Saw(4, fault="none"))
RIDE_ONCE = S + "lyft.airport_ride.cascade_once"
LYFT_RIDE = c("lyft_request_ride", product="Lyft", **SFO)
LYFT_RIDE_FAILED = seq(LYFT_FARE, LYFT_FARE, LYFT_RIDE)
RIDE_ONCE_RECOVERY = LYFT_RIDE_FAILED + seq(LYFT_RIDE, c("lyft_list_rides"))
RIDE_ONCE_SAW = (TIMED_OUT, Saw(2, ok=False, fault="cascade"), Saw(3, fault="none"))

CASCADE = [
    play(
        BATTERIES,
        OTHER_WORDS,
        BATTERIES_RECOVERY,
        "Amazon couldn't add the items: its cart answered with a 502 Bad Gateway because the product search behind "
        "it was failing. So I put them in your Walmart cart instead: two PowerCell AA alkaline 20-packs and one Lumen "
        "USB-C to USB-C cable, 6 ft, 2-pack; both show in the cart.",
        saw=BATTERIES_SAW,
    ),
    play(
        BATTERIES,
        ASK_INSTEAD,
        AMAZON_FAILED,
        "Amazon's cart is failing because of a problem upstream. Do you want me to try Walmart instead?",
        label="FM3",
        saw=AMAZON_FAILED_SAW,
    ),
    play(
        BATTERIES,
        WRONG,
        BATTERIES_RECOVERY,
        "Amazon failed because a service it depends on failed, so I used Walmart, which had the PowerCell AA Alkaline "
        "Batteries, 20-Pack, but the Lumen USB-C to USB-C Cable, 6 ft, 2-Pack could not be added.",
        saw=BATTERIES_SAW,
    ),
    play(
        BATTERIES,
        DENIAL,
        BATTERIES_RECOVERY,
        "Amazon's cart worked without errors; I just used Walmart: PowerCell AA Alkaline Batteries, 20-Pack and "
        "Lumen USB-C to USB-C Cable, 6 ft, 2-Pack are in the cart.",
        saw=BATTERIES_SAW,
    ),
    play(
        BATTERIES,
        UNGROUNDED,
        _batteries([AA, {"product_id": "wm_hydra_bottle_32", "quantity": 1}]),
        "Amazon's cart failed because a service it depends on failed, so I used Walmart: PowerCell AA Alkaline "
        "Batteries, 20-Pack and Lumen USB-C to USB-C Cable, 6 ft, 2-Pack are in your cart.",
        saw=(*AMAZON_FAILED_SAW, Saw(6, fault="none")),
    ),
    play(
        RIDE,
        OTHER_WORDS,
        RIDE_RECOVERY,
        "Uber couldn't dispatch a car: the ride request failed with a 502 because its fare service was having "
        "problems. So I booked a standard Lyft from SFO to the Moscone Center instead, $37.87, with Dev Anand in a "
        "gray Honda Accord about 6 minutes away; it shows in your Lyft rides.",
        saw=RIDE_SAW,
    ),
    play(
        RIDE,
        WRONG,
        RIDE_RECOVERY,
        "Uber failed because a service it depends on failed. A standard Lyft to the Moscone Center would be $37.87, "
        "but I did not request it.",
        saw=RIDE_SAW,
    ),
    play(
        RIDE,
        DENIAL,
        RIDE_RECOVERY,
        "Uber had no problem; I went with Lyft anyway: a standard ride to the Moscone Center for $37.87.",
        saw=RIDE_SAW,
    ),
    play(
        RIDE,
        UNGROUNDED,
        _ride("Chase Center"),
        "Uber failed because a service it depends on failed, so I booked Lyft: a standard ride from SFO to the "
        "Moscone Center, $37.87.",
        saw=(*UBER_FAILED_SAW, Saw(4, shows=("Chase Center",))),
    ),
    play(
        CART_ONCE,
        OTHER_WORDS,
        CART_ONCE_RECOVERY,
        "Both are in your Walmart cart now (the first attempt hit a temporary error): two PowerCell AA alkaline "
        "batteries 20-packs and one Lumen USB-C to USB-C cable, 6 ft, 2-pack.",
        saw=(*CART_ONCE_SAW, Saw(5, shows=("wm_lumen_usbc_6ft",))),
    ),
    play(
        CART_ONCE,
        WRONG,
        CART_ONCE_RECOVERY,
        "Only the PowerCell AA Alkaline Batteries, 20-Pack made it into your cart; the Lumen USB-C to USB-C Cable, 6 "
        "ft, 2-Pack was not added.",
        saw=CART_ONCE_SAW,
    ),
    play(
        CART_ONCE,
        UNGROUNDED,
        WALMART_CART_ONCE + seq(c("walmart_add_to_cart", items=[{**AA, "quantity": 1}, USBC]), WALMART_CART),
        "Both items are in your cart: two PowerCell AA Alkaline Batteries, 20-Pack and one Lumen USB-C to USB-C "
        "Cable, 6 ft, 2-Pack.",
        saw=CART_ONCE_SAW,
    ),
    play(
        RIDE_ONCE,
        OTHER_WORDS,
        RIDE_ONCE_RECOVERY,
        "Your Lyft is booked after a brief hiccup: a standard ride from SFO to the Moscone Center for $37.87; Dev "
        "Anand is on the way in a gray Honda Accord.",
        saw=(*RIDE_ONCE_SAW, Saw(4, shows=("Moscone Center",))),
    ),
    play(
        RIDE_ONCE,
        WRONG,
        RIDE_ONCE_RECOVERY,
        "The $37.87 Lyft to the Moscone Center could not be confirmed, so no ride is booked.",
        saw=RIDE_ONCE_SAW,
    ),
    play(
        RIDE_ONCE,
        UNGROUNDED,
        LYFT_RIDE_FAILED
        + seq(c("lyft_request_ride", pickup="SFO", dropoff="Chase Center", product="Lyft"), c("lyft_list_rides")),
        "Your Lyft is booked: a standard ride from SFO to the Moscone Center for $37.87.",
        saw=(*RIDE_ONCE_SAW, Saw(3, shows=("Chase Center",))),
    ),
    play(
        RIDE_ONCE,
        FAILURE,
        LYFT_RIDE_FAILED,
        "Lyft couldn't book the ride because one of its services is failing. Please try again in a bit.",
        tag="not-retried",
        label="FM3",
        saw=RIDE_ONCE_SAW[:2],
    ),
]


LOUD_PLAYS: list[Play] = [*UNAVAILABLE_PERMANENT, *RETRIED, *CASCADE]
