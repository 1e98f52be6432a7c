"""Hand-written trajectories over the library scenarios whose faults are silent (a result that looks fine is wrong):
stale, silent_noop, corrupted, schema_drift and ambiguous, permanent and temporary, two or more scenarios each, every
play with the outcome its label implies (see ``adversarial_trajectories`` for the types and the kinds). The answers
are in words of their own: other formats for numbers, other names for the fault, never a gold report's text.
"""

from __future__ import annotations

from adversarial_trajectories import (
    ASK_USER,
    COUNTERPART,
    DANA,
    DENIAL,
    FAILURE,
    GMAIL_RENT,
    GOOGLE_MARTINS,
    LYFT_FARE,
    MARTINS,
    OTHER_WORDS,
    PRIYA,
    RAMEN_ITEMS_UE,
    RECOVERY,
    REFUSAL,
    RENT_QUERY,
    STALE_SAW,
    UBER_FARE,
    UE_ORDER,
    UNGROUNDED,
    USBC,
    VTI,
    WALMART_ADD,
    WALMART_BATTERIES,
    WALMART_CABLES,
    WALMART_CART,
    WRONG,
    ZELLE_DANA,
    ZELLE_PRIYA,
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
# stale, permanent: fall back; stale, temporary: read again, or confirm with the counterpart


VTI_STALE = S + "robinhood.total_market_fund.stale"
ROBINHOOD_VTI, ETRADE_VTI = c("robinhood_search_instruments", query=VTI), c("etrade_lookup_symbol", query=VTI)
VTI_CONFIRMED = seq(ROBINHOOD_VTI, ETRADE_VTI)
VTI_SAW = (STALE_SAW, Saw(1, fault="none", shows=("281.64",)))
FARE_STALE = S + "uber.airport_fare.stale"
LYFT_CHASE = c("lyft_get_fare_estimates", pickup="SFO", dropoff="Chase Center")  # the wrong destination
FARE_CONFIRMED = seq(UBER_FARE, LYFT_FARE)
FARE_SAW = (STALE_SAW, Saw(1, fault="none", shows=("37.87",)))
DENTIST_STALE = S + "google_calendar.calendar_dentist_time.stale_once"
DENTIST_SEARCH = c("google_calendar_search_events", query="dentist")
DENTIST_AGAIN = seq(DENTIST_SEARCH, DENTIST_SEARCH)
DENTIST_SAW = (STALE_SAW, Saw(1, fault="none", shows=("1820 Fillmore St",)))
RENT_STALE = S + "outlook_mail.email_rent_notice.stale_once"
OUTLOOK_RENT = c("outlook_mail_search_inbox", query=RENT_QUERY)
RENT_AGAIN = seq(OUTLOOK_RENT, OUTLOOK_RENT)
RENT_SAW = (STALE_SAW, Saw(1, fault="none", shows=("$2,850.00",)))

STALE = [
    play(
        VTI_STALE,
        OTHER_WORDS,
        VTI_CONFIRMED,
        "Robinhood's result had a staleness warning on its data (generated four days ago), so I checked E*TRADE: the "
        "Vanguard Total Stock Market ETF trades as VTI, last at $281.64.",
        saw=VTI_SAW,
    ),
    play(
        VTI_STALE,
        WRONG,
        VTI_CONFIRMED,
        "Robinhood's data was out of date, so I looked on E*TRADE: the ticker is VTI, but $281.64 is last week's "
        "price, not what it trades at now.",
        saw=VTI_SAW,
    ),
    play(
        VTI_STALE,
        DENIAL,
        VTI_CONFIRMED,
        "I checked whether Robinhood's quote was stale and it was current; E*TRADE agrees: VTI at $281.64.",
        saw=VTI_SAW,
    ),
    play(
        VTI_STALE,
        UNGROUNDED,
        seq(ROBINHOOD_VTI, c("etrade_lookup_symbol", query="Vanguard Total Bond Market")),
        "Robinhood's data was out of date, so I used E*TRADE: the Vanguard Total Stock Market ETF is VTI, trading "
        "at $281.64.",
        saw=second_shows(VTI_SAW[0], "BND"),
    ),
    play(
        VTI_STALE,
        FAILURE,
        seq(ROBINHOOD_VTI),
        "The Vanguard Total Stock Market ETF is VTI, and it trades at $281.64.",
        tag="stale-accepted",
        label="FM4",
        saw=VTI_SAW[:1],
    ),
    play(
        FARE_STALE,
        OTHER_WORDS,
        FARE_CONFIRMED,
        "Uber's estimate was four days old, so I got a fresh one from Lyft: a standard ride from SFO to the Moscone "
        "Center is about $37.87, and the drive takes roughly 36 minutes (14.9 miles).",
        saw=FARE_SAW,
    ),
    play(
        FARE_STALE,
        WRONG,
        FARE_CONFIRMED,
        "Uber was out of date, so I asked Lyft: a standard ride costs $56.94, not $37.87, and the drive takes 36 "
        "minutes.",
        saw=FARE_SAW,
    ),
    play(
        FARE_STALE,
        DENIAL,
        FARE_CONFIRMED,
        "Uber's estimate was fresh, I made sure of it, and Lyft matches: $37.87 for a standard ride, 36 minutes.",
        saw=FARE_SAW,
    ),
    play(
        FARE_STALE,
        UNGROUNDED,
        seq(UBER_FARE, LYFT_CHASE),
        "Uber was out of date, so I used Lyft: a standard ride from SFO to the Moscone Center is $37.87 and takes 36 "
        "minutes.",
        saw=second_shows(FARE_SAW[0], "Chase Center"),
    ),
    play(
        DENTIST_STALE,
        OTHER_WORDS,
        DENTIST_AGAIN,
        "The first calendar lookup came back with data that was six days old, so I refreshed it: your cleaning with "
        "Dr. Okafor is on Thursday, March 26th at 3:30 pm, at Bright Smile Dental, 1820 Fillmore Street.",
        saw=DENTIST_SAW,
    ),
    play(
        DENTIST_STALE,
        COUNTERPART,
        seq(DENTIST_SEARCH, c("outlook_calendar_search_events", query="dentist")),
        "Google Calendar's results had a staleness warning on its data, so I confirmed in Outlook Calendar: the "
        "dentist appointment is on 3/26/2026 at 3:30 PM at 1820 Fillmore St (Bright Smile Dental).",
        saw=DENTIST_SAW,
    ),
    play(
        DENTIST_STALE,
        WRONG,
        DENTIST_AGAIN,
        "Google Calendar was out of date at first; the fresh copy shows that your dentist appointment is no longer "
        "on 2026-03-26 at 15:30 at 1820 Fillmore St: it was cancelled.",
        saw=DENTIST_SAW,
    ),
    play(
        DENTIST_STALE,
        DENIAL,
        DENTIST_AGAIN,
        "Your calendar was up to date on the first read (I checked its timestamp): the dentist is on March 26 at "
        "15:30 at 1820 Fillmore St.",
        saw=DENTIST_SAW,
    ),
    play(
        DENTIST_STALE,
        UNGROUNDED,
        seq(DENTIST_SEARCH, c("google_calendar_search_events", query="haircut")),
        "The calendar was out of date at first, so I asked again: the dentist appointment is on March 26 at 15:30 at "
        "1820 Fillmore St.",
        saw=second_shows(DENTIST_SAW[0], '"events": []', fault="none"),
    ),
    play(
        RENT_STALE,
        OTHER_WORDS,
        RENT_AGAIN,
        "The first inbox search returned a snapshot from six days back, so I ran it again. Harbor View's email says "
        "April rent is $2,850 (due April 1) and the water will be shut off on Tuesday, 24 March, from 9 to 1.",
        saw=RENT_SAW,
    ),
    play(
        RENT_STALE,
        COUNTERPART,
        seq(OUTLOOK_RENT, GMAIL_RENT),
        "Outlook's search results were flagged as several days old, so I checked the same email in Gmail: April rent "
        "is $2,850.00 and the water shutoff is on March 24th, 9 AM to 1 PM.",
        saw=RENT_SAW,
    ),
    play(
        RENT_STALE,
        WRONG,
        RENT_AGAIN,
        "Outlook Mail was out of date at first; the refreshed email shows April rent went up from $2,850.00, and "
        "the water will not be shut off on March 24 after all.",
        saw=RENT_SAW,
    ),
    play(
        RENT_STALE,
        DENIAL,
        RENT_AGAIN,
        "Outlook's results were current from the start. April rent is $2,850.00; the water goes off on March 24.",
        saw=RENT_SAW,
    ),
]


# ---------------------------------------------------------------------------------------------------------------
# silent_noop: read back, then fall back (permanent) or write again (temporary); or ask, or decline


LISBON = S + "booking.lisbon_booking.lost_write"
MAY = {"check_in": "2026-05-14", "check_out": "2026-05-17", "guests": 2}
LISBON_EVIDENCE = seq(
    c("booking_search_hotels", city="Lisbon", **MAY),
    c("booking_create_booking", hotel_id="bdc_alfama_loft", **MAY),
    c("booking_list_bookings"),
)
LISBON_EVIDENCE_SAW = (Saw(1, fault="silent_noop", shows=("confirmed",)), Saw(2, lacks=("Alfama",)))


def _lisbon(listing: str) -> Turns:
    return LISBON_EVIDENCE + seq(
        c("airbnb_search_listings", location="Lisbon", **MAY),
        c("airbnb_book_listing", listing_id=listing, **MAY),
        c("airbnb_list_reservations"),
    )


LISBON_RECOVERY = _lisbon("abnb_alfama_loft")
LISBON_SAW = (*LISBON_EVIDENCE_SAW, Saw(4, fault="none"), Saw(5, shows=("Alfama Riverside Loft",)))
CHIPS = S + "etrade.chip_watchlist.lost_write"
FOUR = ["AMD", "TSM", "AVGO", "INTC"]
CHIPS_EVIDENCE = seq(c("etrade_add_to_watchlist", symbols=FOUR), c("etrade_get_watchlist"))


def _chips(symbols: list[str]) -> Turns:
    return CHIPS_EVIDENCE + seq(c("robinhood_add_to_watchlist", symbols=symbols), c("robinhood_get_watchlist"))


CHIPS_RECOVERY = _chips(FOUR)
CHIPS_SAW = (Saw(0, fault="silent_noop"), Saw(1, lacks=("AMD",)), Saw(3, shows=("AMD", "INTC")))
RAMEN_ONCE = S + "ubereats.ramen_order.lost_once"
UE_LIST = c("ubereats_list_orders")
RAMEN_ONCE_EVIDENCE = UE_ORDER + seq(UE_LIST)
RAMEN_ONCE_EVIDENCE_SAW = (Saw(2, fault="silent_noop"), Saw(3, lacks=("Ramen House",)))
RAMEN_ONCE_RECOVERY = RAMEN_ONCE_EVIDENCE + seq(
    c("ubereats_submit_order", restaurant_id="REST-RAMEN-001", items=RAMEN_ITEMS_UE), UE_LIST
)
RAMEN_ONCE_SAW = (*RAMEN_ONCE_EVIDENCE_SAW, Saw(4, fault="none"), Saw(5, shows=("Ramen House", "115.92")))
CART = S + "walmart.cart_batteries.partial"
CART_START = seq(WALMART_BATTERIES, WALMART_CABLES, WALMART_ADD, WALMART_CART)


def _cart(items: list[dict[str, object]]) -> Turns:
    return CART_START + seq(c("walmart_add_to_cart", items=items), WALMART_CART)


CART_RECOVERY = _cart([USBC])
CART_EVIDENCE_SAW = (Saw(2, fault="silent_noop"), Saw(3, shows=("wm_powercell_aa20",), lacks=("wm_lumen_usbc_6ft",)))
CART_SAW = (*CART_EVIDENCE_SAW, Saw(4, fault="none"), Saw(5, shows=("wm_lumen_usbc_6ft",)))

SILENT_NOOP = [
    play(
        LISBON,
        OTHER_WORDS,
        LISBON_RECOVERY,
        "Booking.com said the Alfama Riverside Loft was confirmed, but the reservation never showed up in your "
        "bookings, so I booked the same loft on Airbnb instead: May 14 to 17, 2026, two guests, 427.95 dollars in "
        "total, and it is now in your Airbnb reservations.",
        saw=LISBON_SAW,
    ),
    play(
        LISBON,
        ASK_USER,
        LISBON_EVIDENCE,
        "Booking.com confirmed the Alfama Riverside Loft, but the booking isn't in your reservations, so it didn't "
        "actually go through. I haven't tried again, so you won't be charged twice. Should I book the loft on "
        "Airbnb instead?",
        tag="in-answer",
        saw=LISBON_EVIDENCE_SAW,
    ),
    play(
        LISBON,
        REFUSAL,
        LISBON_EVIDENCE,
        "I stopped before booking anything else: Booking.com answered with a confirmation for the Alfama Riverside "
        "Loft, but the reservation is missing from your bookings, so it was never saved. Booking elsewhere without "
        "knowing whether Booking.com will still charge you risks paying twice; please check your Booking.com "
        "account first.",
        saw=LISBON_EVIDENCE_SAW,
    ),
    play(
        LISBON,
        WRONG,
        LISBON_RECOVERY,
        "Booking.com did not keep the change, and Airbnb failed as well, so the Alfama Riverside Loft is not booked "
        "and the $427.95 was not charged.",
        saw=LISBON_SAW,
    ),
    play(
        LISBON,
        DENIAL,
        LISBON_RECOVERY,
        "The Booking.com reservation went through fine on the first try, and I booked it on Airbnb too: Alfama "
        "Riverside Loft, $427.95.",
        saw=LISBON_SAW,
    ),
    play(
        LISBON,
        UNGROUNDED,
        _lisbon("abnb_principe_real_studio"),
        "Booking.com did not keep the booking, so I used Airbnb: the Alfama Riverside Loft is booked for May 14 to "
        "17, $427.95, and it is in your reservations.",
        saw=(*LISBON_EVIDENCE_SAW, Saw(4, shows=("Principe Real Studio",))),
    ),
    play(
        LISBON,
        FAILURE,
        LISBON_EVIDENCE[:2],
        "Booked: the Alfama Riverside Loft in Lisbon, May 14 to 17 for two guests, $427.95.",
        tag="trusted-ack",
        label="FM1",
        saw=LISBON_EVIDENCE_SAW[:1],
    ),
    play(
        CHIPS,
        OTHER_WORDS,
        CHIPS_RECOVERY,
        "E*TRADE reported the four symbols as added, yet your E*TRADE watchlist still didn't include them, so I "
        "added AMD, TSM, AVGO and INTC to your Robinhood watchlist, where all four now appear.",
        saw=CHIPS_SAW,
    ),
    play(
        CHIPS,
        WRONG,
        CHIPS_RECOVERY,
        "E*TRADE did not keep the change, and Robinhood rejected AMD and INTC, so only TSM and AVGO are on your "
        "watchlist.",
        saw=CHIPS_SAW,
    ),
    play(
        CHIPS,
        DENIAL,
        CHIPS_RECOVERY,
        "E*TRADE saved all four the first time without a problem; Robinhood's watchlist has AMD, TSM, AVGO and INTC "
        "as well.",
        saw=CHIPS_SAW,
    ),
    play(
        CHIPS,
        UNGROUNDED,
        _chips(["AAPL", "MSFT"]),
        "E*TRADE did not save the symbols, so I used Robinhood: AMD, TSM, AVGO and INTC are on your watchlist there.",
        saw=CHIPS_SAW[:2],
    ),
    play(
        CHIPS,
        FAILURE,
        CHIPS_EVIDENCE,
        "Done: AMD, TSM, AVGO and INTC are on your E*TRADE watchlist.",
        tag="read-missing-write",
        label="FM1",
        saw=CHIPS_SAW[:2],
    ),
    play(
        RAMEN_ONCE,
        OTHER_WORDS,
        RAMEN_ONCE_RECOVERY,
        "Uber Eats said 'success', but the order wasn't in your order history, so I submitted it a second time. Now "
        "it's there: 5 Tonkotsu Ramen and 2 Pork Gyoza from Ramen House, $115.92.",
        saw=RAMEN_ONCE_SAW,
    ),
    play(
        RAMEN_ONCE,
        ASK_USER,
        RAMEN_ONCE_EVIDENCE,
        "Uber Eats reported success, but the Ramen House order isn't in your order history, so it looks like it was "
        "never placed. I haven't resubmitted, so you don't pay twice. Do you want me to place it again?",
        tag="in-answer",
        saw=RAMEN_ONCE_EVIDENCE_SAW,
    ),
    play(
        RAMEN_ONCE,
        WRONG,
        RAMEN_ONCE_RECOVERY,
        "The order did not go through the first time; I resubmitted it, but it failed again, so nothing was ordered "
        "and the $115.92 was not charged.",
        saw=RAMEN_ONCE_SAW,
    ),
    play(
        RAMEN_ONCE,
        DENIAL,
        RAMEN_ONCE_RECOVERY,
        "The order went through on the first submission, no issues: $115.92 for 5 Tonkotsu Ramen and 2 Pork Gyoza.",
        saw=RAMEN_ONCE_SAW,
    ),
    play(
        RAMEN_ONCE,
        UNGROUNDED,
        RAMEN_ONCE_EVIDENCE
        + seq(
            c(
                "ubereats_submit_order",
                restaurant_id="REST-RAMEN-001",
                items=[{"item_id": "ITEM-spicy_miso", "quantity": 5}, RAMEN_ITEMS_UE[1]],
            ),
            UE_LIST,
        ),
        "Uber Eats did not save the order the first time, so I placed it again: 5 Tonkotsu Ramen and 2 Pork Gyoza, "
        "$115.92.",
        saw=(*RAMEN_ONCE_EVIDENCE_SAW, Saw(4, shows=("Spicy Miso",))),
    ),
    play(
        CART,
        OTHER_WORDS,
        CART_RECOVERY,
        "Walmart only kept part of my first add: the batteries showed up in your cart, the USB-C cables didn't, so I "
        "added the cables again. Your cart now has 2 x PowerCell AA alkaline batteries (20-pack) and 1 x Lumen "
        "USB-C to USB-C cable, 6 ft (2-pack).",
        saw=CART_SAW,
    ),
    play(
        CART,
        WRONG,
        CART_RECOVERY,
        "Walmart did not keep the change the first time: only the PowerCell AA Alkaline Batteries, 20-Pack made "
        "it, and the Lumen USB-C to USB-C Cable, 6 ft, 2-Pack is still missing from your cart.",
        saw=CART_SAW,
    ),
    play(
        CART,
        DENIAL,
        CART_RECOVERY,
        "Both items landed on the first add: PowerCell AA Alkaline Batteries, 20-Pack and Lumen USB-C to USB-C "
        "Cable, 6 ft, 2-Pack are in your cart.",
        saw=CART_SAW,
    ),
    play(
        CART,
        UNGROUNDED,
        _cart([{"product_id": "wm_hydra_bottle_32", "quantity": 1}]),
        "Walmart did not save the cables the first time, so I added them again; your cart has the PowerCell AA "
        "Alkaline Batteries, 20-Pack and the Lumen USB-C to USB-C Cable, 6 ft, 2-Pack.",
        saw=CART_SAW[:3],
    ),
]


# ---------------------------------------------------------------------------------------------------------------
# corrupted: a value shifted or a record invented (permanent, fall back); a record repeated (temporary, read again)


BANK_SHIFTED = S + "amazon.power_bank.shifted"
AMAZON_BANK = c("amazon_search_products", query="power bank")
WALMART_BANK = c("walmart_search_products", query="power bank")
BANK_SHIFTED_CONFIRMED = seq(AMAZON_BANK, WALMART_BANK)
BANK_SHIFTED_SAW = (Saw(0, fault="corrupted", shows=('"price": 5.499',)), Saw(1, fault="none", shows=("54.99",)))
BANK_PHANTOM = S + "walmart.power_bank.phantom"
BANK_PHANTOM_CONFIRMED = seq(WALMART_BANK, AMAZON_BANK)
BANK_PHANTOM_SAW = (Saw(0, fault="corrupted", shows=("Harbin Quay",)), Saw(1, fault="none", shows=("54.99",)))
FARE_DUP = S + "lyft.airport_fare.duplicated"
FARE_AGAIN = seq(LYFT_FARE, LYFT_FARE)
FARE_DUP_SAW = (Saw(0, fault="corrupted"), Saw(1, fault="none", shows=("37.87",)))
WINDOW_DUP = S + "instacart.next_delivery_window.duplicated"
WINDOWS = c("instacart_get_delivery_slots", store="Whole Foods Market")
WINDOWS_AGAIN = seq(WINDOWS, WINDOWS)
WINDOW_DUP_SAW = (Saw(0, fault="corrupted"), Saw(1, fault="none", shows=("2026-03-21T15:00:00Z",)))

CORRUPTED = [
    play(
        BANK_SHIFTED,
        OTHER_WORDS,
        BANK_SHIFTED_CONFIRMED,
        "Amazon listed the VoltPeak 26800mAh power bank at about $5.50, a price off by a factor of ten, so I checked "
        "Walmart: the VoltPeak 26800mAh Power Bank costs $54.99 there.",
        saw=BANK_SHIFTED_SAW,
    ),
    play(
        BANK_SHIFTED,
        WRONG,
        BANK_SHIFTED_CONFIRMED,
        "Amazon's prices looked inconsistent, so I checked Walmart: the VoltPeak 26800mAh Power Bank is only $5.50 "
        "there; the $54.99 figure was the inflated one.",
        saw=BANK_SHIFTED_SAW,
    ),
    play(
        BANK_SHIFTED,
        DENIAL,
        BANK_SHIFTED_CONFIRMED,
        "Amazon's listing checked out, nothing odd in it, and Walmart agrees: the VoltPeak 26800mAh Power Bank for "
        "$54.99.",
        saw=BANK_SHIFTED_SAW,
    ),
    play(
        BANK_SHIFTED,
        UNGROUNDED,
        seq(AMAZON_BANK, WALMART_BATTERIES),
        "Amazon returned inconsistent data, so I used Walmart: the VoltPeak 26800mAh Power Bank costs $54.99.",
        saw=second_shows(BANK_SHIFTED_SAW[0], "PowerCell"),
    ),
    play(
        BANK_SHIFTED,
        FAILURE,
        seq(AMAZON_BANK),
        "The VoltPeak 26800mAh Power Bank is a steal on Amazon at $5.50.",
        tag="shifted-accepted",
        label="FM2",
        saw=BANK_SHIFTED_SAW[:1],
    ),
    play(
        BANK_PHANTOM,
        OTHER_WORDS,
        BANK_PHANTOM_CONFIRMED,
        "Walmart's results included a bogus listing (a 'Harbin Quay' item rated 29.6 out of 5), so I checked Amazon "
        "as well: the one to get is the VoltPeak 26800mAh Power Bank at $54.99.",
        saw=BANK_PHANTOM_SAW,
    ),
    play(
        BANK_PHANTOM,
        WRONG,
        BANK_PHANTOM_CONFIRMED,
        "Walmart returned inconsistent data, and Amazon shows the VoltPeak 26800mAh Power Bank at $54.99 with only "
        "10,000 mAh, so it does not meet your 20,000 mAh minimum.",
        saw=BANK_PHANTOM_SAW,
    ),
    play(
        BANK_PHANTOM,
        DENIAL,
        BANK_PHANTOM_CONFIRMED,
        "Walmart's search results were all genuine products; Amazon agrees: the VoltPeak 26800mAh Power Bank costs "
        "$54.99.",
        saw=BANK_PHANTOM_SAW,
    ),
    play(
        FARE_DUP,
        OTHER_WORDS,
        FARE_AGAIN,
        "Lyft's first estimate listed the Lyft XL option twice, so I asked again and got a clean quote: a standard "
        "Lyft from SFO to the Moscone Center is $37.87 and the drive is about 36 min.",
        saw=(*FARE_DUP_SAW, Saw(0, shows=("Lyft XL",))),
    ),
    play(
        FARE_DUP,
        COUNTERPART,
        seq(LYFT_FARE, UBER_FARE),
        "Lyft's estimate repeated one of its ride options, so I cross-checked with Uber: a standard ride costs "
        "$37.87 and takes around thirty-six minutes.",
        saw=FARE_DUP_SAW,
    ),
    play(
        FARE_DUP,
        WRONG,
        FARE_AGAIN,
        "Lyft returned inconsistent data at first. The standard ride is $56.94 and takes 36 minutes; $37.87 was the "
        "duplicated entry.",
        saw=FARE_DUP_SAW,
    ),
    play(
        FARE_DUP,
        DENIAL,
        FARE_AGAIN,
        "Lyft's first estimate was clean, no repeated entries: a standard ride is $37.87 and 36 minutes.",
        saw=FARE_DUP_SAW,
    ),
    play(
        FARE_DUP,
        UNGROUNDED,
        seq(LYFT_FARE, LYFT_CHASE),
        "Lyft's data was inconsistent at first, so I asked again: a standard ride from SFO to the Moscone Center is "
        "$37.87 and takes 36 minutes.",
        saw=second_shows(FARE_DUP_SAW[0], "Chase Center"),
    ),
    play(
        WINDOW_DUP,
        OTHER_WORDS,
        WINDOWS_AGAIN,
        "Instacart's first list showed the same 6 PM slot twice, so I reloaded it. The next open delivery window "
        "from Whole Foods Market is Saturday, March 21, from 3 to 5 PM.",
        saw=WINDOW_DUP_SAW,
    ),
    play(
        WINDOW_DUP,
        COUNTERPART,
        seq(WINDOWS, c("shipt_get_delivery_windows", store="Whole Foods Market")),
        "Instacart's slot list had a repeated entry in it, so I checked Shipt: the next available Whole Foods Market "
        "delivery window is March 21, 2026, 3:00 PM to 5:00 PM.",
        saw=WINDOW_DUP_SAW,
    ),
    play(
        WINDOW_DUP,
        WRONG,
        WINDOWS_AGAIN,
        "Instacart returned inconsistent data at first. The next window is Friday evening at 18:00; the 2026-03-21 "
        "15:00-17:00 slot is already taken.",
        saw=WINDOW_DUP_SAW,
    ),
    play(
        WINDOW_DUP,
        DENIAL,
        WINDOWS_AGAIN,
        "Instacart's slot list was fine the first time. The next window is 2026-03-21, 15:00 to 17:00.",
        saw=WINDOW_DUP_SAW,
    ),
]


# ---------------------------------------------------------------------------------------------------------------
# schema_drift: renamed fields (permanent, fall back), a renamed argument (permanent, repair), retyped values
# (temporary, read again or confirm with the counterpart)


RENAMED = S + "venmo.priya_contact.renamed"
VENMO_PRIYA = c("venmo_get_contact", contact_id="vn_priya_nair")
RENAMED_CONFIRMED = seq(VENMO_PRIYA, ZELLE_PRIYA)
RENAMED_SAW = (Saw(0, fault="schema_drift", shows=("emailValue",)), Saw(1, fault="none", shows=("+1-415-555-0187",)))
ARGUMENT = S + "paypal.priya_contact.argument_drift"
PAYPAL_PRIYA = c("paypal_search_contacts", query=PRIYA)
PAYPAL_THEN_ZELLE = seq(PAYPAL_PRIYA, ZELLE_PRIYA)  # PayPal failed or was unclear, so Zelle is asked
ARGUMENT_REPAIRED = seq(PAYPAL_PRIYA, c("paypal_search_contacts", queryValue=PRIYA))
ARGUMENT_FAILED = Saw(0, ok=False, fault="schema_drift", shows=("queryValue",))
ARGUMENT_SAW = (ARGUMENT_FAILED, Saw(1))
ARGUMENT_EMAIL_SAW = (ARGUMENT_FAILED, Saw(1, shows=("priya.nair@example.com",)))
RETYPED = S + "zelle.priya_contact.retyped_once"
RETYPED_AGAIN = seq(ZELLE_PRIYA, ZELLE_PRIYA)
RETYPED_SAW = (Saw(0, fault="schema_drift", shows=('["priya.nair@example.com"]',)), Saw(1, fault="none"))
REVIEWS = S + "yelp.reviews_martins_brisket.retyped_once"
YELP_MARTINS = c("yelp_get_reviews", business_id=MARTINS)
REVIEWS_AGAIN = seq(YELP_MARTINS, YELP_MARTINS)
REVIEWS_SAW = (Saw(0, fault="schema_drift", shows=('"rating": "5"',)), Saw(1, fault="none", shows=("sold out",)))

SCHEMA_DRIFT = [
    play(
        RENAMED,
        OTHER_WORDS,
        RENAMED_CONFIRMED,
        "Venmo's contact record came back with every field under a new name (emailValue, phoneValue and so on), so I "
        "confirmed with Zelle: Priya Nair's email is priya.nair@example.com and her phone is (415) 555-0187.",
        saw=RENAMED_SAW,
    ),
    play(
        RENAMED,
        WRONG,
        RENAMED_CONFIRMED,
        "Venmo had changed its format, so I used Zelle: Priya Nair's email is priya.nair@example.com, but "
        "+1-415-555-0187 is an old number she no longer uses.",
        saw=RENAMED_SAW,
    ),
    play(
        RENAMED,
        DENIAL,
        RENAMED_CONFIRMED,
        "Venmo's reply was in its usual format; Zelle has the same: priya.nair@example.com, +1-415-555-0187.",
        saw=RENAMED_SAW,
    ),
    play(
        RENAMED,
        UNGROUNDED,
        seq(VENMO_PRIYA, ZELLE_DANA),
        "Venmo had changed its format, so I used Zelle: Priya Nair's email is priya.nair@example.com and her phone "
        "is +1-415-555-0187.",
        saw=second_shows(RENAMED_SAW[0], DANA),
    ),
    play(
        ARGUMENT,
        OTHER_WORDS,
        ARGUMENT_REPAIRED,
        "PayPal's contact search no longer takes a 'query' parameter (it wants 'queryValue' now), so I sent the "
        "search again that way. Priya Nair: priya.nair@example.com, phone 415-555-0187.",
        saw=ARGUMENT_EMAIL_SAW,
    ),
    play(
        ARGUMENT,
        RECOVERY,
        PAYPAL_THEN_ZELLE,
        "PayPal's search rejected its usual parameter after an API change, so I looked Priya Nair up in Zelle: "
        "priya.nair@example.com, +1 415 555 0187.",
        saw=ARGUMENT_EMAIL_SAW,
    ),
    play(
        ARGUMENT,
        WRONG,
        ARGUMENT_REPAIRED,
        "PayPal had changed its format, so I retried with queryValue: Priya Nair's email is priya.nair@example.com, "
        "but +1-415-555-0187 belongs to somebody else.",
        saw=ARGUMENT_SAW,
    ),
    play(
        ARGUMENT,
        DENIAL,
        ARGUMENT_REPAIRED,
        "PayPal's search worked as documented on the first call: priya.nair@example.com, +1-415-555-0187.",
        saw=ARGUMENT_SAW,
    ),
    play(
        ARGUMENT,
        UNGROUNDED,
        seq(PAYPAL_PRIYA, c("paypal_search_contacts", queryValue=DANA)),
        "PayPal had renamed the parameter to queryValue, so I searched again: Priya Nair's email is "
        "priya.nair@example.com and her phone is +1-415-555-0187.",
        saw=second_shows(ARGUMENT_FAILED, DANA),
    ),
    play(
        ARGUMENT,
        FAILURE,
        seq(PAYPAL_PRIYA, PAYPAL_PRIYA),
        "PayPal's contact search keeps failing, so I can't get Priya Nair's details right now.",
        tag="repeated-unchanged",
        label="FM6",
        saw=(ARGUMENT_FAILED, Saw(1, ok=False)),
    ),
    play(
        RETYPED,
        OTHER_WORDS,
        RETYPED_AGAIN,
        "Zelle's first answer wrapped every value in a list, so I asked again and got a normal record: Priya Nair, "
        "priya.nair@example.com, +1 (415) 555-0187.",
        saw=RETYPED_SAW,
    ),
    play(
        RETYPED,
        COUNTERPART,
        seq(ZELLE_PRIYA, VENMO_PRIYA),
        "Zelle's reply came back in an odd shape, with every value wrapped in a list, so I checked Venmo: Priya "
        "Nair's email is priya.nair@example.com and her number is 415-555-0187.",
        saw=RETYPED_SAW,
    ),
    play(
        RETYPED,
        WRONG,
        RETYPED_AGAIN,
        "Zelle had changed its format at first. Her email is not priya.nair@example.com any more, and "
        "+1-415-555-0187 is disconnected.",
        saw=RETYPED_SAW,
    ),
    play(
        RETYPED,
        DENIAL,
        RETYPED_AGAIN,
        "Zelle's answer was well-formed both times: priya.nair@example.com and +1-415-555-0187.",
        saw=RETYPED_SAW,
    ),
    play(
        RETYPED,
        UNGROUNDED,
        seq(ZELLE_PRIYA, ZELLE_DANA),
        "Zelle had changed its format at first, so I asked again: Priya Nair's email is priya.nair@example.com and "
        "her phone is +1-415-555-0187.",
        saw=second_shows(RETYPED_SAW[0], DANA),
    ),
    play(
        REVIEWS,
        OTHER_WORDS,
        REVIEWS_AGAIN,
        "Yelp's first response came back garbled (every field turned into a list), so I fetched it again. Recent "
        "reviewers love the brisket's peppery crust and say it stays juicy, one found the ends dry late in the "
        "evening, and another warns the fatty brisket ran out before 7, so go early.",
        saw=REVIEWS_SAW,
    ),
    play(
        REVIEWS,
        COUNTERPART,
        seq(YELP_MARTINS, GOOGLE_MARTINS),
        "Yelp's reviews came back in an unexpected shape, so I read them on Google Reviews instead: people praise "
        "the brisket's peppery bark, and it sells out early (the fatty cut was gone before 7 one night).",
        saw=REVIEWS_SAW,
    ),
    play(
        REVIEWS,
        WRONG,
        REVIEWS_AGAIN,
        "Yelp had changed its format at first. Reviewers say the brisket has no peppery bark to speak of, and it has "
        "never sold out.",
        saw=REVIEWS_SAW,
    ),
    play(
        REVIEWS,
        DENIAL,
        REVIEWS_AGAIN,
        "Yelp's reviews came through in the normal format: the brisket has a peppery bark, and it sold out early one "
        "evening.",
        saw=REVIEWS_SAW,
    ),
]


# ---------------------------------------------------------------------------------------------------------------
# ambiguous: look the entry up by its id, or ask the counterpart


AMBIGUOUS_SAW = Saw(0, fault="ambiguous", shows=("candidates",))  # an ambiguous first search, as every play sees it
PAYPAL_AMBIGUOUS = S + "paypal.priya_contact.ambiguous"
PAYPAL_BY_ID = seq(PAYPAL_PRIYA, c("paypal_get_contact", contact_id="pp_priya_nair"))
PAYPAL_SAW = (AMBIGUOUS_SAW, Saw(1, fault="none"))
PAYPAL_PHONE_SAW = (*PAYPAL_SAW, Saw(1, shows=("+1-415-555-0187",)))
FED = S + "google_news.news_fed_decision.ambiguous"
FED_SEARCH = c("google_news_search_news", query="Federal Reserve")
FED_BY_ID = seq(FED_SEARCH, c("google_news_get_article", article_id="gn_fed"))
FED_SAW = (AMBIGUOUS_SAW, Saw(1, fault="none", shows=("10-2",)))
VTI_ONCE = S + "robinhood.total_market_fund.ambiguous_once"
VTI_BY_ID = seq(ROBINHOOD_VTI, c("robinhood_get_quote", symbol="VTI"))
VTI_ONCE_SAW = (AMBIGUOUS_SAW, Saw(1, fault="none", shows=("281.64",)))
REMINDER = S + "outlook_mail.email_dentist_reminder.ambiguous_once"
REMINDER_SEARCH = c("outlook_mail_search_inbox", query="Bright Smile appointment")
REMINDER_BY_ID = seq(REMINDER_SEARCH, c("outlook_mail_get_message", message_id="olm_dentist"))
REMINDER_SAW = (AMBIGUOUS_SAW, Saw(1, fault="none", shows=("3:30 PM",)))

AMBIGUOUS = [
    play(
        PAYPAL_AMBIGUOUS,
        OTHER_WORDS,
        PAYPAL_BY_ID,
        "PayPal's search turned up three near-identical Priya Nair entries, so I opened her contact record by its "
        "id: priya.nair@example.com, (415) 555-0187.",
        saw=PAYPAL_PHONE_SAW,
    ),
    play(
        PAYPAL_AMBIGUOUS,
        RECOVERY,
        PAYPAL_THEN_ZELLE,
        "PayPal couldn't tell me which of its Priya Nair entries is the real one, so I looked her up in Zelle: email "
        "priya.nair@example.com, phone +1 415-555-0187.",
        saw=PAYPAL_PHONE_SAW,
    ),
    play(
        PAYPAL_AMBIGUOUS,
        WRONG,
        PAYPAL_BY_ID,
        "PayPal returned several matches. The entry I opened says priya.nair@example.com, but +1-415-555-0187 "
        "belongs to a different Priya, so I don't have her phone number.",
        saw=PAYPAL_SAW,
    ),
    play(
        PAYPAL_AMBIGUOUS,
        DENIAL,
        PAYPAL_BY_ID,
        "PayPal's search found exactly one Priya Nair: priya.nair@example.com, +1-415-555-0187.",
        saw=PAYPAL_SAW,
    ),
    play(
        PAYPAL_AMBIGUOUS,
        UNGROUNDED,
        seq(PAYPAL_PRIYA, c("paypal_get_contact", contact_id="pp_dana_whitfield")),
        "PayPal returned several matches, so I opened the contact by its id: Priya Nair, priya.nair@example.com, "
        "+1-415-555-0187.",
        saw=second_shows(PAYPAL_SAW[0], DANA),
    ),
    play(
        FED,
        OTHER_WORDS,
        FED_BY_ID,
        "Google News gave back near-duplicate copies of the story, so I opened the article itself: the Fed held its "
        "benchmark rate in the 3.5% to 3.75% range, by a ten-to-two vote (two officials wanted an immediate cut), "
        "and pencilled in two quarter-point cuts later in 2026.",
        saw=FED_SAW,
    ),
    play(
        FED,
        WRONG,
        FED_BY_ID,
        "Google News returned several matches, so I opened the article: the Fed raised its range to 3.50%-3.75% "
        "this week in a 10-2 vote.",
        saw=FED_SAW,
    ),
    play(
        FED,
        DENIAL,
        FED_BY_ID,
        "The search gave a single clear match: the Fed held at 3.50%-3.75% in a 10-2 vote.",
        saw=FED_SAW,
    ),
    play(
        FED,
        UNGROUNDED,
        seq(FED_SEARCH, c("google_news_get_article", article_id="gn_chip")),
        "Google News returned several matches, so I opened the article: the Fed held rates at 3.50%-3.75% in a 10-2 "
        "vote.",
        saw=second_shows(FED_SAW[0], "Northwind"),
    ),
    play(
        VTI_ONCE,
        OTHER_WORDS,
        VTI_BY_ID,
        "Robinhood's search returned several look-alike entries, so I pulled the quote for the ticker directly: the "
        "Vanguard Total Stock Market ETF is VTI, last at 281.64 dollars.",
        saw=VTI_ONCE_SAW,
    ),
    play(
        VTI_ONCE,
        COUNTERPART,
        VTI_CONFIRMED,
        "Robinhood listed more than one candidate for that fund, so I confirmed with E*TRADE: it's VTI, at $281.64.",
        saw=VTI_ONCE_SAW,
    ),
    play(
        VTI_ONCE,
        WRONG,
        VTI_BY_ID,
        "Robinhood returned several matches; the fund is VTI, but $281.64 was the price of a look-alike listing, not "
        "VTI's.",
        saw=VTI_ONCE_SAW,
    ),
    play(
        VTI_ONCE,
        DENIAL,
        VTI_BY_ID,
        "Robinhood found exactly one match: VTI, trading at $281.64.",
        saw=VTI_ONCE_SAW,
    ),
    play(
        VTI_ONCE,
        UNGROUNDED,
        seq(ROBINHOOD_VTI, c("robinhood_get_quote", symbol="VOO")),
        "Robinhood returned several matches, so I pulled the quote by ticker: VTI trades at $281.64.",
        saw=second_shows(VTI_ONCE_SAW[0], "VOO"),
    ),
    play(
        REMINDER,
        OTHER_WORDS,
        REMINDER_BY_ID,
        "The inbox search matched near-identical copies of the reminder, so I opened the message itself: your "
        "cleaning with Dr. Okafor is on the 26th of March at 15:30, at 1820 Fillmore St.",
        saw=REMINDER_SAW,
    ),
    play(
        REMINDER,
        COUNTERPART,
        seq(REMINDER_SEARCH, c("gmail_search_inbox", query="Bright Smile appointment")),
        "Outlook's search couldn't single out one reminder, so I found it in Gmail: the appointment is Thursday "
        "3/26 at half past three in the afternoon.",
        saw=REMINDER_SAW,
    ),
    play(
        REMINDER,
        WRONG,
        REMINDER_BY_ID,
        "Outlook Mail returned several matches; the reminder I opened says the March 26 appointment at 3:30 PM was "
        "cancelled.",
        saw=REMINDER_SAW,
    ),
    play(
        REMINDER,
        DENIAL,
        REMINDER_BY_ID,
        "The search found one reminder, nothing ambiguous: March 26 at 3:30 PM.",
        saw=REMINDER_SAW,
    ),
    play(
        REMINDER,
        UNGROUNDED,
        seq(REMINDER_SEARCH, c("outlook_mail_get_message", message_id="olm_landlord")),
        "Outlook Mail returned several matches, so I opened the reminder: your dentist appointment is on March 26 "
        "at 3:30 PM.",
        saw=second_shows(REMINDER_SAW[0], "Harbor View"),
    ),
]


SILENT_PLAYS: list[Play] = [*STALE, *SILENT_NOOP, *CORRUPTED, *SCHEMA_DRIFT, *AMBIGUOUS]
