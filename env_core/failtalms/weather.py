"""FAIL-TaLMs Weather tools: a seeded climate model of the Geo tools' cities (their mean January and July
temperatures and share of wet days in ``data/tables/cities.jsonl``), observed on the fixed ``REFERENCE_DAY``."""

from __future__ import annotations

import math
from datetime import date, timedelta
from typing import Annotated, Any

from pydantic import Field

from undertow.env_core.failtalms.geo import CITIES, find_city
from undertow.env_core.failtalms.shared import REFERENCE_DAY, in_range, iso_date, seeded, weekday_name
from undertow.env_core.tools import tool

_WEATHER_FIRST = date(1970, 1, 1)


def _day_weather(name: str, day: date) -> dict[str, Any]:
    row = CITIES[name]
    season = math.cos(2 * math.pi * (day.timetuple().tm_yday - 15) / 365.25)  # 1 in mid-January, -1 in mid-July
    mean = (row.jan + row.jul) / 2 + (row.jan - row.jul) / 2 * season + 6 * (seeded(name, day, "t") - 0.5)
    spread = 3 + 3 * seeded(name, day, "spread")
    wet = seeded(name, day, "wet") < row.wet
    rain = round(0.5 + 24 * seeded(name, day, "mm") ** 2, 1) if wet else 0.0
    sky = seeded(name, day, "sky")
    condition = (
        ("snow" if mean < 0.5 else "rain")
        if wet
        else "cloudy"
        if sky < 0.35
        else "partly cloudy"
        if sky < 0.65
        else "sunny"
    )
    return {  # + 0.0 turns a rounded -0.0 into 0.0
        "high_c": round(mean + spread, 1) + 0.0,
        "low_c": round(mean - spread, 1) + 0.0,
        "mean_c": round(mean, 1) + 0.0,
        "precipitation_mm": rain,
        "condition": condition,
    }


@tool(
    "Weather",
    description=f"""Current conditions in a city from the latest observation of the feed (taken {REFERENCE_DAY} at
    12:00 UTC): temperature and feels-like temperature (°C), condition, relative humidity (%) and wind speed (km/h).""",
)
def current_weather(city: Annotated[str, Field(description="The city, e.g. 'Pittsburgh'.")]) -> dict[str, Any]:
    name, row = find_city(city)
    day = _day_weather(name, REFERENCE_DAY)
    temperature = round(day["mean_c"] + 0.6 * (day["high_c"] - day["mean_c"]), 1) + 0.0
    wind = round(5 + 30 * seeded(name, REFERENCE_DAY, "wind"), 1)
    humidity = round(45 + 50 * row.wet * (1.4 if day["precipitation_mm"] else 1) * seeded(name, REFERENCE_DAY, "h"))
    chill = (
        temperature - 0.15 * wind if temperature < 10 else temperature + (0.05 * humidity if temperature > 25 else 0)
    )
    return {
        "city": name,
        "observed_at": f"{REFERENCE_DAY}T12:00:00Z",
        "temperature_c": temperature,
        "feels_like_c": round(chill, 1),
        "condition": day["condition"],
        "humidity_percent": min(humidity, 100),
        "wind_kph": wind,
    }


@tool(
    "Weather",
    description=f"""Daily forecast for a city for the next 1 to 7 days, issued {REFERENCE_DAY} (the first day forecast
    is the day after). Each day: date, high and low (°C), condition and chance of precipitation (%).""",
)
def forecast(
    city: Annotated[str, Field(description="The city, e.g. 'Oslo'.")],
    days: Annotated[int, Field(description="How many days ahead, 1 to 7.", ge=1, le=7)],
) -> dict[str, Any]:
    name, row = find_city(city)
    in_range(days, "days", 1, 7)
    rows = []
    for i in range(1, days + 1):
        day = REFERENCE_DAY + timedelta(days=i)
        weather = _day_weather(name, day)
        chance = (
            70 + round(25 * seeded(name, day, "p"))
            if weather["precipitation_mm"]
            else round(60 * row.wet * seeded(name, day, "p"))
        )
        rows.append(
            {
                "date": day.isoformat(),
                "day_of_week": weekday_name(day),
                "high_c": weather["high_c"],
                "low_c": weather["low_c"],
                "condition": weather["condition"],
                "precipitation_chance_percent": chance,
            }
        )
    return {"city": name, "issued": REFERENCE_DAY.isoformat(), "days": rows}


@tool(
    "Weather",
    description=f"""Recorded weather of a city on a past day ({_WEATHER_FIRST} to the day before {REFERENCE_DAY}):
    high, low and mean temperature (°C), precipitation (mm) and the day's prevailing condition.""",
)
def historical_weather(
    city: Annotated[str, Field(description="The city, e.g. 'Madrid'.")],
    date: Annotated[str, Field(description="The day, YYYY-MM-DD.")],
) -> dict[str, Any]:
    name, _ = find_city(city)
    day = iso_date(date, "date", _WEATHER_FIRST, REFERENCE_DAY - timedelta(days=1))
    return {"city": name, "date": day.isoformat(), **_day_weather(name, day)}


_AQI_BANDS = (
    (50, "Good"),
    (100, "Moderate"),
    (150, "Unhealthy for sensitive groups"),
    (200, "Unhealthy"),
    (300, "Very unhealthy"),
    (500, "Hazardous"),
)


@tool(
    "Weather",
    description=f"""Current air quality in a city (observation of {REFERENCE_DAY}): US EPA air quality index (0-500),
    its category, the dominant pollutant and the PM2.5 concentration (µg/m³).""",
)
def air_quality(city: Annotated[str, Field(description="The city, e.g. 'Delhi'.")]) -> dict[str, Any]:
    name, _ = find_city(city)
    aqi = 12 + round(170 * seeded(name, "aqi") ** 2)
    category = next(label for top, label in _AQI_BANDS if aqi <= top)
    pollutant = ("PM2.5", "PM10", "ozone", "NO2")[int(4 * seeded(name, "pollutant"))]
    return {
        "city": name,
        "aqi": aqi,
        "category": category,
        "dominant_pollutant": pollutant,
        "pm2_5_ug_m3": round(aqi * 0.42, 1),
    }
