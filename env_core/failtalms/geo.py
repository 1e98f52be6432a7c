"""FAIL-TaLMs Geo tools: countries, cities, distances and time zones (``data/tables/countries.jsonl``,
``cities.jsonl``); the weather tools cover the same cities."""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import Field

from undertow.env_core.failtalms.shared import ALIASES, Row, find, read_table
from undertow.env_core.tools import tool


class Country(Row):
    country: str
    capital: str
    population: int  # 2023 estimate
    currency: str  # ISO code
    languages: str
    continent: str


class City(Row):
    """A city: where it is, its time zone and the climate the weather tools model."""

    city: str
    country: str
    lat: float
    lon: float
    zone: str  # IANA time zone
    offset: float  # standard-time UTC offset in hours
    dst: bool
    jan: float  # mean January temperature, °C
    jul: float  # mean July temperature, °C
    wet: float  # share of days with precipitation


_COUNTRIES = {row.country: row for row in read_table("countries", Country)}
CITIES = {row.city: row for row in read_table("cities", City)}
# a country argument: names and codes are both understood
CountryName = Annotated[str, Field(description="The country's name or code.")]


def find_city(name: str) -> tuple[str, City]:
    """The (name, row) of the city ``name`` means; an unknown city is an error with a hint."""
    return find(CITIES, name, "city", ALIASES["city"])


def _country(name: str) -> str:
    return find(_COUNTRIES, name, "country", ALIASES["country"])[0]


@tool("Geo")
def country_info(country: CountryName) -> dict[str, Any]:
    """Basic facts about a country: capital, population (2023 estimate), currency (ISO code), main languages and
    continent. Accepts common names and codes ('Germany', 'UK', 'USA')."""
    return _COUNTRIES[_country(country)].model_dump()


@tool("Geo")
def distance_between(
    city_a: Annotated[str, Field(description="The first city, e.g. 'Paris'.")],
    city_b: Annotated[str, Field(description="The second city, e.g. 'Berlin'.")],
) -> dict[str, Any]:
    """Great-circle distance between two cities (haversine formula, mean Earth radius 6371 km), in kilometres and miles,
    rounded to one decimal."""
    (name_a, a), (name_b, b) = find_city(city_a), find_city(city_b)
    lat1, lon1, lat2, lon2 = map(math.radians, (a.lat, a.lon, b.lat, b.lon))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    km = 2 * 6371.0 * math.asin(math.sqrt(h))
    return {"from": name_a, "to": name_b, "distance_km": round(km, 1), "distance_miles": round(km / 1.609344, 1)}


def _offset_text(hours: float) -> str:
    sign = "-" if hours < 0 else "+"
    whole, minutes = divmod(round(abs(hours) * 60), 60)
    return f"{sign}{whole:02d}:{minutes:02d}"


@tool("Geo")
def timezone_of(city: Annotated[str, Field(description="The city, e.g. 'Tokyo'.")]) -> dict[str, Any]:
    """The time zone of a city: its IANA name, its standard-time UTC offset (+HH:MM) and whether it observes daylight
    saving time."""
    name, row = find_city(city)
    return {"city": name, "timezone": row.zone, "utc_offset": _offset_text(row.offset), "observes_dst": row.dst}


@tool("Geo")
def cities_in_country(country: CountryName) -> dict[str, Any]:
    """List the cities of a country that this geographic service covers (usable with the weather and distance tools)."""
    name = _country(country)
    cities = sorted(c for c, row in CITIES.items() if row.country == name)
    return {"country": name, "count": len(cities), "cities": cities}
