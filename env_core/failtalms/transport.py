"""FAIL-TaLMs Transportation tools: the seeded flight records of a fictional carrier (``data/tables/flights.jsonl``),
road-trip fuel costs and electric-car charging times."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Annotated, Any

from pydantic import Field

from undertow.env_core.errors import close_match
from undertow.env_core.failtalms.shared import REFERENCE_DAY, Row, fail, iso_date, positive, read_table, seeded
from undertow.env_core.tools import tool

_FLIGHTS_FIRST = date(2025, 1, 1)


class Flight(Row):
    """A daily flight of Zephyr Air, a fictional carrier."""

    flight: str
    origin: str
    destination: str
    departure_utc: str  # HH:MM
    minutes: int  # in the air
    aircraft: str


_FLIGHTS = {row.flight: row for row in read_table("flights", Flight)}


@tool(
    "Transportation",
    description=f"""Record of a Zephyr Air flight on a date ({_FLIGHTS_FIRST} to {REFERENCE_DAY}): route, aircraft,
    status (on time, delayed or cancelled), delay in minutes, gate, and the scheduled and actual departure and the
    arrival time, all in UTC. Flights: {", ".join(_FLIGHTS)}.""",
)
def flight_status(
    flight_number: Annotated[str, Field(description="The flight number, e.g. 'ZP101'.")],
    date: Annotated[str, Field(description="The departure day (UTC), YYYY-MM-DD.")],
) -> dict[str, Any]:
    code = re.sub(r"\s", "", flight_number).upper()
    if code not in _FLIGHTS:
        hint = close_match(code, _FLIGHTS) or f"Zephyr Air flies {', '.join(_FLIGHTS)}"
        fail(f"flight_number: no flight {flight_number!r}; {hint}")
    day = iso_date(date, "date", _FLIGHTS_FIRST, REFERENCE_DAY)
    flight = _FLIGHTS[code]
    scheduled = datetime.combine(day, datetime.strptime(flight.departure_utc, "%H:%M").time())
    u = seeded(code, day)
    record: dict[str, Any] = {
        "flight": code,
        "date": day.isoformat(),
        "origin": flight.origin,
        "destination": flight.destination,
        "aircraft": flight.aircraft,
        "scheduled_departure_utc": scheduled.strftime("%Y-%m-%d %H:%M"),
    }
    if u < 0.03:
        return record | {"status": "cancelled", "delay_minutes": None, "gate": None, "actual_departure_utc": None,
                         "arrival_utc": None}  # fmt: skip
    delay = 0 if u < 0.65 else 5 * round(1 + 23 * seeded(code, day, "delay") ** 2)
    actual = scheduled + timedelta(minutes=delay)
    gate = f"{'ABC'[int(3 * seeded(code, day, 'terminal'))]}{1 + int(30 * seeded(code, day, 'gate'))}"
    return record | {
        "status": "delayed" if delay > 15 else "on time",
        "delay_minutes": delay,
        "gate": gate,
        "actual_departure_utc": actual.strftime("%Y-%m-%d %H:%M"),
        "arrival_utc": (actual + timedelta(minutes=flight.minutes)).strftime("%Y-%m-%d %H:%M"),
    }


@tool("Transportation")
def fuel_cost(
    distance_km: Annotated[float, Field(description="Trip length in kilometres.", gt=0, le=100000)],
    litres_per_100km: Annotated[
        float, Field(description="The vehicle's consumption in litres per 100 km.", gt=0, le=100)
    ],
    price_per_litre: Annotated[float, Field(description="Fuel price per litre.", gt=0, le=100)],
) -> dict[str, Any]:
    """Fuel needed for a road trip and what it costs: litres = distance x consumption / 100, cost = litres x price (2
    decimals, in the price's currency)."""
    distance = positive(distance_km, "distance_km", 100000)
    litres = distance * positive(litres_per_100km, "litres_per_100km", 100) / 100
    return {"litres": round(litres, 2), "cost": round(litres * positive(price_per_litre, "price_per_litre", 100), 2)}


_CHARGE_EFFICIENCY = 0.9  # energy that reaches the battery
_TAPER_FROM = 80  # percent of charge above which a fast charger delivers half its power


@tool("Transportation")
def ev_charging_time(
    battery_kwh: Annotated[float, Field(description="Usable battery capacity in kWh.", gt=0, le=300)],
    from_percent: Annotated[float, Field(description="Charge level at the start, 0 to 100.", ge=0, le=100)],
    to_percent: Annotated[
        float, Field(description="Charge level wanted, above the start and at most 100.", ge=0, le=100)
    ],
    charger_kw: Annotated[float, Field(description="The charger's rated power in kW.", gt=0, le=1000)],
) -> dict[str, Any]:
    """Estimate the time to charge an electric car's battery between two charge levels: 90% charging efficiency, and
    above 80% charge the charger delivers half its rated power. Returns the energy drawn (kWh) and the minutes."""
    capacity, power = positive(battery_kwh, "battery_kwh", 300), positive(charger_kw, "charger_kw", 1000)
    if not 0 <= from_percent < to_percent <= 100:
        fail(f"charge levels: need 0 <= from_percent < to_percent <= 100, got {from_percent} and {to_percent}")
    fast = max(0.0, min(to_percent, _TAPER_FROM) - from_percent) / 100 * capacity / _CHARGE_EFFICIENCY
    slow = max(0.0, to_percent - max(from_percent, _TAPER_FROM)) / 100 * capacity / _CHARGE_EFFICIENCY
    return {"energy_kwh": round(fast + slow, 2), "minutes": round((fast / power + slow / (power / 2)) * 60)}
