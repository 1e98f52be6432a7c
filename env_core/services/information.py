"""Information services: weather (Weather.com, Yahoo Weather, AccuWeather, National Weather Service), reviews
(Google Reviews, Yelp, Tripadvisor) and news (Google News, Reuters).

Counterparts seed from the same module-level facts (one forecast table, one set of alerts, one set of restaurants
and review texts, one set of news stories), so a fallback from one provider to another reaches the same answer.
Every forecast carries a fixed ``generated_at``; reads never show the clock.
"""

from __future__ import annotations

import random
from datetime import date as Date
from datetime import timedelta
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from undertow.env_core.services.base import Call, Lookup, Service, Write, not_found, tool
from undertow.env_core.tools import ToolExecutionError

DOMAIN = "information"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _norm(text: str) -> str:
    return " ".join(text.lower().replace(",", " , ").split()).replace(" ,", ",")


# --- weather: shared facts -----------------------------------------------------------------------------------------

FIRST_DAY = Date(2026, 3, 20)  # the simulated clock's day (a Friday)
FORECAST_DAYS = 10

LOCATIONS: list[dict[str, Any]] = [
    # key, display name, extra names people use, US or not (NWS covers the US only), climate, provider ids
    {"key": "napa", "name": "Napa Valley, CA", "aliases": ["napa", "napa, ca", "napa valley"], "us": True,
     "high": 66, "low": 46, "woeid": "2457170", "accu": "337153"},
    {"key": "sf", "name": "San Francisco, CA", "aliases": ["sf", "san francisco"], "us": True,
     "high": 62, "low": 50, "woeid": "2487956", "accu": "347629"},
    {"key": "memphis", "name": "Memphis, TN", "aliases": ["memphis"], "us": True,
     "high": 63, "low": 47, "woeid": "2449323", "accu": "351089"},
    {"key": "maui", "name": "Maui, HI", "aliases": ["maui", "maui, hawaii", "kahului"], "us": True,
     "high": 81, "low": 68, "woeid": "2443950", "accu": "2245862"},
    {"key": "bali", "name": "Bali, Indonesia", "aliases": ["bali", "denpasar", "bali, id"], "us": False,
     "high": 88, "low": 76, "woeid": "1047012", "accu": "202521"},
    {"key": "chicago", "name": "Chicago, IL", "aliases": ["chicago"], "us": True,
     "high": 49, "low": 34, "woeid": "2379574", "accu": "348308"},
    {"key": "seattle", "name": "Seattle, WA", "aliases": ["seattle"], "us": True,
     "high": 54, "low": 41, "woeid": "2490383", "accu": "351409"},
    {"key": "nashville", "name": "Nashville, TN", "aliases": ["nashville"], "us": True,
     "high": 65, "low": 45, "woeid": "2457202", "accu": "351090"},
    {"key": "nyc", "name": "New York, NY", "aliases": ["new york", "new york city", "nyc", "manhattan"], "us": True,
     "high": 52, "low": 38, "woeid": "2459115", "accu": "349727"},
]  # fmt: skip

_PRECIP = {"Sunny": 5, "Mostly Sunny": 10, "Partly Cloudy": 15, "Cloudy": 25, "Showers": 55, "Rain": 70}

# the facts the recipes (and the paper's trace cards) rest on; the rest of the table is seeded noise
FORECAST_FACTS: dict[tuple[str, str], tuple[str, int, int, int]] = {
    ("napa", "2026-03-20"): ("Cloudy", 64, 48, 30),
    ("napa", "2026-03-21"): ("Thunderstorms", 61, 50, 80),  # the wedding Saturday
    ("napa", "2026-03-22"): ("Showers", 60, 47, 50),
    ("memphis", "2026-03-20"): ("Heavy Rain", 58, 49, 90),
    ("memphis", "2026-03-21"): ("Rain", 57, 46, 70),
    ("maui", "2026-03-24"): ("Partly Cloudy", 82, 69, 20),
    ("bali", "2026-03-24"): ("Thunderstorms", 87, 76, 65),
}

# hour ranges (inclusive) that differ from the day's condition: Napa's Saturday storms arrive in the afternoon
HOURLY_FACTS: dict[tuple[str, str], list[tuple[int, int, str, int]]] = {
    ("napa", "2026-03-21"): [
        (0, 10, "Cloudy", 40),
        (11, 12, "Showers", 60),
        (13, 20, "Thunderstorms", 80),
        (21, 23, "Rain", 60),
    ],
}


def _build_forecasts() -> dict[str, list[dict[str, Any]]]:
    rng = random.Random(20260320)
    pool = ["Sunny", "Mostly Sunny", "Partly Cloudy", "Partly Cloudy", "Cloudy", "Showers", "Rain"]
    table: dict[str, list[dict[str, Any]]] = {}
    for location in LOCATIONS:
        days = []
        for offset in range(FORECAST_DAYS):
            day = FIRST_DAY + timedelta(days=offset)
            condition = rng.choice(pool)
            high = location["high"] + rng.randint(-4, 4)
            low = location["low"] + rng.randint(-3, 3)
            precip = _PRECIP[condition] + rng.randint(-5, 5)
            fact = FORECAST_FACTS.get((location["key"], day.isoformat()))
            if fact:
                condition, high, low, precip = fact
            days.append(
                {
                    "date": day.isoformat(),
                    "weekday": day.strftime("%A"),
                    "condition": condition,
                    "high_f": high,
                    "low_f": low,
                    "precip_chance": max(0, precip),
                }
            )
        table[location["key"]] = days
    return table


FORECASTS = _build_forecasts()


def _hourly(key: str, day: dict[str, Any]) -> list[dict[str, Any]]:
    """24 hourly points derived from the day: coolest near dawn, warmest mid-afternoon."""
    spans = HOURLY_FACTS.get((key, day["date"]), [])
    hours = []
    for hour in range(24):
        if 5 <= hour <= 15:
            warmth = (hour - 5) / 10
        elif hour > 15:
            warmth = 1 - (hour - 15) / 14
        else:
            warmth = 0.3 * (5 - hour) / 5
        condition, precip = day["condition"], day["precip_chance"]
        for first, last, span_condition, span_precip in spans:
            if first <= hour <= last:
                condition, precip = span_condition, span_precip
        hours.append(
            {
                "time": f"{day['date']}T{hour:02d}:00",
                "condition": condition,
                "temp_f": round(day["low_f"] + (day["high_f"] - day["low_f"]) * warmth),
                "precip_chance": precip,
            }
        )
    return hours


ALERTS: list[dict[str, Any]] = [
    {
        "key": "memphis_flood",
        "location": "memphis",
        "event": "Flood Warning",
        "severity": "Severe",
        "area": "Memphis, TN and Shelby County",
        "summary": "Flooding along the Wolf River is ongoing; the Mississippi River at Memphis is expected to crest "
        "above flood stage early next week. Avoid low-lying roads near the Wolf River.",
        "issued": "2026-03-20T03:12:00Z",
        "expires": "2026-03-24T18:00:00Z",
        "zones": ["Shelby County, TN (TNZ088)", "Crittenden County, AR (ARZ058)", "DeSoto County, MS (MSZ001)"],
        "crest": "Mississippi River at Memphis: crest near 39.2 ft Monday, March 23 (flood stage 34 ft)",
        "instructions": "Turn around, don't drown. Residents of Frayser and Raleigh near the Wolf River should move "
        "valuables to higher ground.",
        "office": "NWS Memphis TN",
    },
    {
        "key": "napa_storms",
        "location": "napa",
        "event": "Special Weather Statement",
        "severity": "Moderate",
        "area": "Napa Valley, CA",
        "summary": "Thunderstorms likely Saturday afternoon and evening with lightning, small hail and gusts to 40 "
        "mph. Outdoor events should have a plan to shelter.",
        "issued": "2026-03-20T04:40:00Z",
        "expires": "2026-03-22T06:00:00Z",
        "zones": ["Napa County, CA (CAZ507)", "Sonoma Valley, CA (CAZ506)"],
        "crest": "",
        "instructions": "Move indoors at the first sound of thunder; secure tents and canopies.",
        "office": "NWS San Francisco Bay Area/Monterey CA",
    },
]


def _location(text: str) -> dict[str, Any]:
    """The location a name refers to ("Napa Valley", "napa, ca", "Maui"); an unknown name is not_found."""
    wanted = _norm(text).removesuffix(", usa").removesuffix(", us")
    if wanted:
        for location in LOCATIONS:
            name = _norm(location["name"])
            if wanted in (name, name.split(",")[0], *location["aliases"]):
                return location
    raise not_found("location", text)


def _day_range(days: int) -> int:
    if not 1 <= days <= FORECAST_DAYS:
        raise ToolExecutionError(f"days must be between 1 and {FORECAST_DAYS}", "invalid_request")
    return days


def _forecast_day(key: str, date: str) -> dict[str, Any]:
    for day in FORECASTS[key]:
        if day["date"] == date.strip():
            return day
    last = FIRST_DAY + timedelta(days=FORECAST_DAYS - 1)
    raise ToolExecutionError(
        f"no forecast for {date!r}: forecasts cover {FIRST_DAY.isoformat()} to {last.isoformat()} (YYYY-MM-DD)",
        "invalid_request",
    )


def _alert_ids(prefix: str) -> dict[str, str]:
    return {alert["key"]: f"{prefix}{alert['key']}" for alert in ALERTS}


def _alert_brief(alert: dict[str, Any], alert_id: str) -> dict[str, Any]:
    return {
        "alert_id": alert_id,
        "event": alert["event"],
        "severity": alert["severity"],
        "area": alert["area"],
        "summary": alert["summary"],
        "expires": alert["expires"],
    }


def _alert_full(alert: dict[str, Any], alert_id: str) -> dict[str, Any]:
    full = _alert_brief(alert, alert_id)
    full.update(
        issued=alert["issued"],
        zones=alert["zones"],
        crest=alert["crest"],
        instructions=alert["instructions"],
        source=alert["office"],
    )
    return full


class SavedLocationsState(_Record):
    saved: list[str]  # display names of saved locations, in the order they were added


class _WeatherService(Service):
    domain = DOMAIN
    category = "weather"
    generated_at: ClassVar[str] = "2026-03-20T05:00:00Z"
    alert_prefix: ClassVar[str] = ""
    alert_tool: ClassVar[str] = ""  # the tool that shows one alert's full text by id ("": no alert recipes)

    def _daily(self, location: dict[str, Any], days: int) -> dict[str, Any]:
        return {
            "location": location["name"],
            "generated_at": self.generated_at,
            "days": [dict(day) for day in FORECASTS[location["key"]][: _day_range(days)]],
        }

    def _hourly_for(self, location: dict[str, Any], date: str) -> dict[str, Any]:
        day = _forecast_day(location["key"], date)
        return {
            "location": location["name"],
            "date": day["date"],
            "generated_at": self.generated_at,
            "hours": _hourly(location["key"], day),
        }

    def _alerts_at(self, location: dict[str, Any]) -> list[dict[str, Any]]:
        ids = _alert_ids(self.alert_prefix)
        return [_alert_brief(a, ids[a["key"]]) for a in ALERTS if a["location"] == location["key"]]

    def _alert(self, alert_id: str) -> dict[str, Any]:
        for alert in ALERTS:
            if f"{self.alert_prefix}{alert['key']}" == alert_id.strip():
                return alert
        raise not_found("alert", alert_id)

    def _alert_details(self, alert_id: str) -> dict[str, Any]:
        return _alert_full(self._alert(alert_id), alert_id.strip())

    @classmethod
    def _daily_call(cls, location: str) -> Call:
        """The call that serves a week's daily forecast for a place (the recipes' daily lookups)."""
        return Call("get_daily_forecast", {"location": location, "days": 7})

    @classmethod
    def _napa_pin(cls) -> Call | None:
        return None

    @classmethod
    def _memphis_alert_calls(cls) -> tuple[Call, Call, Call] | None:
        """The calls of the Memphis alert recipes: the alert list, the alert's details by id (the list's pin) and
        the details lookup's call; None where the provider has no alerts."""
        if not cls.alert_tool:
            return None
        details = Call(cls.alert_tool, {"alert_id": f"{cls.alert_prefix}memphis_flood"})
        return Call("get_alerts", {"location": "Memphis, TN"}), details, details

    @classmethod
    def lookups(cls) -> list[Lookup]:
        lookups = [
            Lookup(
                topic="weather_napa_saturday",
                request="We have an outdoor wedding in Napa Valley this Saturday, March 21. Will it storm, and should "
                "we rent a rain tent?",
                call=cls._daily_call("Napa Valley, CA"),
                shows=["2026-03-21", "Thunderstorms"],
                answer=["Thunderstorms", "80"],
                pin=cls._napa_pin(),
                value_field="precip_chance",
            ),
            Lookup(
                topic="weather_napa_saturday_hourly",
                request="What time on Saturday, March 21 do thunderstorms start in Napa Valley? The ceremony is "
                "outdoors.",
                call=Call("get_hourly_forecast", {"location": "Napa Valley, CA", "date": "2026-03-21"}),
                shows=["2026-03-21T13:00", "Thunderstorms"],
                answer=["Thunderstorms", "13:00"],
                value_field="precip_chance",
            ),
            Lookup(
                topic="weather_maui_tuesday",
                request="What's the weather forecast for Maui on Tuesday, March 24: conditions and the high?",
                call=cls._daily_call("Maui, HI"),
                shows=["2026-03-24", "Partly Cloudy"],
                answer=["Partly Cloudy", "82"],
                value_field="high_f",
            ),
        ]
        alert_calls = cls._memphis_alert_calls()
        if alert_calls:
            listing, pin, details = alert_calls
            lookups += [
                Lookup(
                    topic="weather_memphis_flood_alert",
                    request="Are there any weather alerts for Memphis, TN right now? Summarize the most serious one.",
                    call=listing,
                    shows=["Flood Warning", "Severe"],
                    answer=["Flood Warning", "Wolf River"],
                    pin=pin,
                ),
                Lookup(
                    topic="weather_memphis_flood_details",
                    request="Pull the full details of the flood warning for Memphis: which zones are affected and how "
                    "high is the Mississippi expected to crest?",
                    call=details,
                    shows=["TNZ088", "39.2 ft"],
                    answer=["Shelby County", "39.2 ft"],
                ),
            ]
        return lookups


def _locations_matching(query: str) -> list[dict[str, Any]]:
    """The locations whose name or an alias contains the query (a provider's location search)."""
    needle = _norm(query)
    if not needle:
        raise ToolExecutionError("query must not be empty", "invalid_request")
    return [
        loc for loc in LOCATIONS if needle in _norm(loc["name"]) or any(needle in alias for alias in loc["aliases"])
    ]


def _save_maui_write(call: Call, readback: Call) -> Write:
    return Write(
        topic="weather_save_maui",
        request="Save Maui to my weather favorites so I can keep an eye on it this week.",
        call=call,
        readback=readback,
        landed=["Maui, HI"],
        answer=["Maui"],
    )


def _save_pair_write(call: Call, readback: Call) -> Write:
    return Write(
        topic="weather_save_maui_bali",
        request="Save Maui and Bali to my weather favorites so I can compare their forecasts throughout the week.",
        call=call,
        readback=readback,
        landed=["Maui, HI", "Bali, Indonesia"],
        answer=["Maui", "Bali"],
    )


_LOCATION_ARG = Annotated[str, Field(description="City or place name, e.g. 'Napa Valley, CA' or 'Maui'")]
_DAYS_ARG = Annotated[int, Field(description="Number of days, starting today (1-10)", ge=1, le=FORECAST_DAYS)]
_DATE_ARG = Annotated[str, Field(description="Local date, YYYY-MM-DD")]
_LOCATION_KEY_ARG = Annotated[str, Field(description="Location key from search_locations, or a place name")]


class WeatherCom(_WeatherService):
    name = "weathercom"
    title = "Weather.com"
    counterparts = ("yahoo_weather", "accuweather", "nws")
    State = SavedLocationsState
    state: SavedLocationsState
    alert_prefix = "alert_"
    alert_tool = "get_alert_details"

    @classmethod
    def initial_state(cls) -> SavedLocationsState:
        return SavedLocationsState(saved=["San Francisco, CA"])

    @tool(
        "read",
        failure_hint="Check generated_at: a forecast generated days ago is stale; cross-check another provider "
        "before relying on it.",
    )
    def get_daily_forecast(self, location: _LOCATION_ARG, days: _DAYS_ARG = 7) -> dict[str, Any]:
        """Daily forecast for a location: condition, high/low (F) and chance of precipitation for each day."""
        return self._daily(_location(location), days)

    @tool(
        "read",
        failure_hint="Make sure the hours returned are for the date you asked about; a mismatched or stale window "
        "is not an answer.",
    )
    def get_hourly_forecast(self, location: _LOCATION_ARG, date: _DATE_ARG) -> dict[str, Any]:
        """Hour-by-hour forecast for one date at a location (temperature, condition, chance of precipitation)."""
        return self._hourly_for(_location(location), date)

    @tool(
        "write",
        failure_hint="A status of 'added' does not prove the save persisted; confirm with "
        "weathercom_get_saved_locations.",
    )
    def add_saved_location(self, location: _LOCATION_ARG) -> dict[str, Any]:
        """Add a location to the user's saved locations (favorites)."""
        name = _location(location)["name"]
        if name in self.state.saved:
            return {"status": "already_saved", "location": name}
        if len(self.state.saved) >= 10:
            raise ToolExecutionError("at most 10 saved locations; remove one first", "conflict")
        self.state.saved.append(name)
        return {"status": "added", "location": name}

    @tool(
        "write",
        failure_hint="A 'removed' status may not persist; confirm with weathercom_get_saved_locations.",
    )
    def remove_saved_location(self, location: _LOCATION_ARG) -> dict[str, Any]:
        """Remove a location from the user's saved locations."""
        name = _location(location)["name"]
        if name not in self.state.saved:
            raise not_found("saved location", location)
        self.state.saved.remove(name)
        return {"status": "removed", "location": name}

    @tool(
        "readback",
        failure_hint="This is the source of truth for saves: a location missing here was not saved, whatever the "
        "add call answered.",
    )
    def get_saved_locations(self) -> dict[str, Any]:
        """List the user's saved locations."""
        return {"locations": list(self.state.saved)}

    @tool(
        "read",
        failure_hint="An empty list means no active alerts for that place, not that the service failed; check the "
        "location name resolved to the place you meant.",
    )
    def get_alerts(self, location: _LOCATION_ARG) -> dict[str, Any]:
        """Active weather alerts for a location, each with a summary; use get_alert_details for zones and crests."""
        place = _location(location)
        return {"location": place["name"], "alerts": self._alerts_at(place)}

    @tool(
        "read",
        failure_hint="Detail records can be temporarily unavailable; the alert list's summary still holds the main "
        "facts and the National Weather Service bulletin has the full text.",
    )
    def get_alert_details(
        self, alert_id: Annotated[str, Field(description="Alert id from get_alerts, e.g. alert_memphis_flood")]
    ) -> dict[str, Any]:
        """Full details of one alert: affected zones, river crest, instructions, issuing office."""
        return self._alert_details(alert_id)

    @classmethod
    def writes(cls) -> list[Write]:
        return [_save_maui_write(Call("add_saved_location", {"location": "Maui"}), Call("get_saved_locations"))]


class FavoritesState(_Record):
    favorites: list[str]  # display names


class _FavoritesWeather(_WeatherService):
    """Weather providers whose favorites take a batch of locations."""

    State = FavoritesState
    state: FavoritesState
    start_favorites: ClassVar[list[str]]

    @classmethod
    def initial_state(cls) -> FavoritesState:
        return FavoritesState(favorites=list(cls.start_favorites))

    def _add_favorites(self, locations: list[str]) -> list[str]:
        if not locations:
            raise ToolExecutionError("give at least one location", "invalid_request")
        names = [self._resolve_favorite(text)["name"] for text in locations]  # all resolve before any is saved
        added = []
        for name in names:
            if name not in self.state.favorites:
                self.state.favorites.append(name)
                added.append(name)
        return added

    def _resolve_favorite(self, text: str) -> dict[str, Any]:
        return _location(text)

    def _favorites_view(self, id_field: str, id_key: str) -> dict[str, Any]:
        by_name = {location["name"]: location for location in LOCATIONS}
        return {"favorites": [{id_field: by_name[name][id_key], "name": name} for name in self.state.favorites]}

    @classmethod
    def writes(cls) -> list[Write]:
        return [_save_pair_write(Call("add_favorites", {"locations": ["Maui", "Bali"]}), Call("get_favorites"))]


class YahooWeather(_FavoritesWeather):
    name = "yahoo_weather"
    title = "Yahoo Weather"
    counterparts = ("weathercom", "accuweather", "nws")
    start_favorites: ClassVar[list[str]] = ["Seattle, WA"]

    @tool(
        "read",
        failure_hint="Check generated_at and that the days cover the date you need; cross-check another provider "
        "if the data looks stale or odd.",
    )
    def get_daily_forecast(self, location: _LOCATION_ARG, days: _DAYS_ARG = 7) -> dict[str, Any]:
        """Daily forecast for a location: condition, high/low (F) and chance of precipitation for each day."""
        return self._daily(_location(location), days)

    @tool("read", failure_hint="Make sure the hours returned are for the date you asked about.")
    def get_hourly_forecast(self, location: _LOCATION_ARG, date: _DATE_ARG) -> dict[str, Any]:
        """Hour-by-hour forecast for one date at a location (temperature, condition, chance of precipitation)."""
        return self._hourly_for(_location(location), date)

    @tool("read", failure_hint="No match means the place is not covered; try the city name without the region.")
    def search_locations(
        self, query: Annotated[str, Field(description="Place name to look up, e.g. 'Napa'")]
    ) -> dict[str, Any]:
        """Find locations by name; each has a WOEID (Where On Earth ID) that names it exactly."""
        hits = [{"woeid": loc["woeid"], "name": loc["name"]} for loc in _locations_matching(query)]
        return {"query": query, "locations": hits}

    @tool(
        "read",
        failure_hint="A WOEID from another provider or a mistyped one is not found; get it from search_locations.",
    )
    def get_forecast_by_woeid(
        self,
        woeid: Annotated[str, Field(description="WOEID from search_locations")],
        days: _DAYS_ARG = 7,
    ) -> dict[str, Any]:
        """Daily forecast for the location a WOEID names exactly."""
        for location in LOCATIONS:
            if location["woeid"] == woeid.strip():
                return {"woeid": location["woeid"], **self._daily(location, days)}
        raise not_found("woeid", woeid)

    @tool(
        "write",
        failure_hint="Part of a batch may not be saved even when the call succeeds; confirm every location with "
        "get_favorites.",
    )
    def add_favorites(
        self, locations: Annotated[list[str], Field(description="Place names to add to favorites")]
    ) -> dict[str, Any]:
        """Add one or more locations to the user's favorite locations."""
        added = self._add_favorites(locations)
        return {"status": "added", "added": added, "favorites_count": len(self.state.favorites)}

    @tool("write", failure_hint="Confirm with get_favorites that the location is gone.")
    def remove_favorite(self, location: _LOCATION_ARG) -> dict[str, Any]:
        """Remove a location from the user's favorites."""
        name = _location(location)["name"]
        if name not in self.state.favorites:
            raise not_found("favorite", location)
        self.state.favorites.remove(name)
        return {"status": "removed", "location": name}

    @tool("readback", failure_hint="A location missing here was not saved, whatever add_favorites answered.")
    def get_favorites(self) -> dict[str, Any]:
        """List the user's favorite locations with their WOEIDs."""
        return self._favorites_view("woeid", "woeid")

    @classmethod
    def _napa_pin(cls) -> Call:
        napa = next(loc for loc in LOCATIONS if loc["key"] == "napa")
        return Call("get_forecast_by_woeid", {"woeid": napa["woeid"], "days": 7})

    @classmethod
    def writes(cls) -> list[Write]:
        return [
            _save_maui_write(Call("add_favorites", {"locations": ["Maui"]}), Call("get_favorites")),
            *super().writes(),
        ]


class AccuWeather(_FavoritesWeather):
    name = "accuweather"
    title = "AccuWeather"
    counterparts = ("weathercom", "yahoo_weather", "nws")
    start_favorites: ClassVar[list[str]] = ["Chicago, IL"]
    generated_at = "2026-03-20T05:15:00Z"
    alert_prefix = "aw_"
    alert_tool = "get_alert"

    def _place(self, text: str) -> dict[str, Any]:
        # AccuWeather names places by location key; a plain name is accepted too
        for location in LOCATIONS:
            if location["accu"] == text.strip():
                return location
        return _location(text)

    def _resolve_favorite(self, text: str) -> dict[str, Any]:
        return self._place(text)

    @tool("read", failure_hint="No match means the place is not covered; try the city name without the region.")
    def search_locations(
        self, query: Annotated[str, Field(description="Place name to look up, e.g. 'Napa'")]
    ) -> dict[str, Any]:
        """Find locations by name; each has a location key that names it exactly."""
        hits = [
            {"location_key": loc["accu"], "name": loc["name"], "country": "US" if loc["us"] else "ID"}
            for loc in _locations_matching(query)
        ]
        return {"query": query, "locations": hits}

    @tool(
        "read",
        failure_hint="Check generated_at and the dates covered; cross-check another provider if the data looks "
        "stale or inconsistent.",
    )
    def get_daily_forecast(
        self,
        location: _LOCATION_KEY_ARG,
        days: _DAYS_ARG = 7,
    ) -> dict[str, Any]:
        """Daily forecast: condition, high/low (F) and chance of precipitation for each day."""
        place = self._place(location)
        return {"location_key": place["accu"], **self._daily(place, days)}

    @tool("read", failure_hint="Make sure the hours returned are for the date you asked about.")
    def get_hourly_forecast(
        self,
        location: _LOCATION_KEY_ARG,
        date: _DATE_ARG,
    ) -> dict[str, Any]:
        """Hour-by-hour forecast for one date (temperature, condition, chance of precipitation)."""
        place = self._place(location)
        return {"location_key": place["accu"], **self._hourly_for(place, date)}

    @tool("read", failure_hint="An empty list means no active alerts there; check the location resolved correctly.")
    def get_alerts(self, location: _LOCATION_KEY_ARG) -> dict[str, Any]:
        """Active severe-weather alerts for a location, each with a summary."""
        place = self._place(location)
        return {"location": place["name"], "alerts": self._alerts_at(place)}

    @tool("read", failure_hint="Ids are per provider: use an alert id from AccuWeather's get_alerts.")
    def get_alert(self, alert_id: Annotated[str, Field(description="Alert id from get_alerts")]) -> dict[str, Any]:
        """Full text of one alert: zones, river crest, instructions, issuing office."""
        return self._alert_details(alert_id)

    @tool(
        "write",
        failure_hint="Part of a batch may not be saved even when the call succeeds; confirm every location with "
        "get_favorites.",
    )
    def add_favorites(
        self,
        locations: Annotated[list[str], Field(description="Location keys or place names to add to favorites")],
    ) -> dict[str, Any]:
        """Add one or more locations to the user's favorite locations."""
        added = self._add_favorites(locations)
        return {"status": "ok", "added": added}

    @tool("readback", failure_hint="A location missing here was not saved, whatever add_favorites answered.")
    def get_favorites(self) -> dict[str, Any]:
        """List the user's favorite locations with their location keys."""
        return self._favorites_view("location_key", "accu")


class NoState(_Record):
    """A read-only service keeps nothing per episode."""


class NWS(_WeatherService):
    name = "nws"
    title = "National Weather Service"
    counterparts = ("weathercom", "yahoo_weather", "accuweather")
    State = NoState
    generated_at = "2026-03-20T04:58:00Z"
    alert_prefix = "NWS-"

    @classmethod
    def initial_state(cls) -> NoState:
        return NoState()

    @classmethod
    def _daily_call(cls, location: str) -> Call:
        return Call("get_forecast", {"location": location})

    @classmethod
    def _memphis_alert_calls(cls) -> tuple[Call, Call, Call]:
        return (
            Call("get_alerts", {"area": "Memphis, TN"}),
            Call("get_alert_bulletin", {"alert_id": "NWS-memphis_flood"}),
            Call("get_alert_bulletin", {"area": "Memphis, TN"}),
        )

    @staticmethod
    def _us(text: str) -> dict[str, Any]:
        location = _location(text)
        if not location["us"]:
            raise ToolExecutionError(
                f"{location['name']} is outside National Weather Service coverage (US only)", "invalid_request"
            )
        return location

    @tool(
        "read",
        failure_hint="The NWS covers US locations only; check generated_at and that the periods cover your dates.",
    )
    def get_forecast(self, location: _LOCATION_ARG) -> dict[str, Any]:
        """Seven-day point forecast as named periods (Friday, Saturday, ...) with a short and a detailed text."""
        place = self._us(location)
        periods = []
        for day in FORECASTS[place["key"]][:7]:
            periods.append(
                {
                    "name": day["weekday"],
                    "date": day["date"],
                    "short_forecast": day["condition"],
                    "high_f": day["high_f"],
                    "low_f": day["low_f"],
                    "precip_chance": day["precip_chance"],
                    "detailed_forecast": f"{day['condition']}. High near {day['high_f']}, low around "
                    f"{day['low_f']}. Chance of precipitation is {day['precip_chance']}%.",
                }
            )
        return {"location": place["name"], "generated_at": self.generated_at, "periods": periods}

    @tool("read", failure_hint="The NWS covers US locations only; make sure the hours are for the date you asked.")
    def get_hourly_forecast(self, location: _LOCATION_ARG, date: _DATE_ARG) -> dict[str, Any]:
        """Hourly forecast for one date at a US location."""
        return self._hourly_for(self._us(location), date)

    @tool("read", failure_hint="An empty list means no active alerts for the area; check the area name resolved.")
    def get_alerts(
        self, area: Annotated[str, Field(description="US city or area, e.g. 'Memphis, TN'")]
    ) -> dict[str, Any]:
        """Active watches, warnings and advisories for a US area."""
        place = self._us(area)
        return {"area": place["name"], "alerts": self._alerts_at(place)}

    @tool(
        "read",
        failure_hint="Give an alert_id from get_alerts or an area; with an area and no active alert the call fails.",
    )
    def get_alert_bulletin(
        self,
        alert_id: Annotated[str, Field(description="Alert id from get_alerts, e.g. NWS-memphis_flood")] = "",
        area: Annotated[str, Field(description="Or a US area, for its most severe active alert")] = "",
    ) -> dict[str, Any]:
        """The full bulletin of an alert: affected zones, river crest forecast, instructions, issuing office."""
        if alert_id.strip():
            return self._alert_details(alert_id)
        if not area.strip():
            raise ToolExecutionError("give alert_id or area", "invalid_request")
        place = self._us(area)
        ranked = sorted(
            (a for a in ALERTS if a["location"] == place["key"]),
            key=lambda a: ["Extreme", "Severe", "Moderate", "Minor"].index(a["severity"]),
        )
        if not ranked:
            raise not_found("active alert for area", area)
        return _alert_full(ranked[0], f"{self.alert_prefix}{ranked[0]['key']}")


# --- reviews: shared facts -----------------------------------------------------------------------------------------

PLACES: list[dict[str, Any]] = [
    {
        "key": "martins",
        "name": "Martin's Bar-B-Que Joint",
        "city": "Nashville, TN",
        "address": "410 4th Ave S, Nashville, TN 37201",
        "category": "Barbecue",
        "tags": ["bbq", "barbecue", "brisket", "ribs", "smokehouse"],
        "rating": 4.6,
        "review_count": 2841,
        "price": "$$",
        "ids": {"google": "gp_martins", "yelp": "martins-bar-b-que-joint-nashville", "tripadvisor": "ta_4367121"},
    },
    {
        "key": "peg_leg",
        "name": "Peg Leg Porker",
        "city": "Nashville, TN",
        "address": "903 Gleaves St, Nashville, TN 37203",
        "category": "Barbecue",
        "tags": ["bbq", "barbecue", "brisket", "ribs", "dry rub"],
        "rating": 4.5,
        "review_count": 1967,
        "price": "$$",
        "ids": {"google": "gp_peg_leg", "yelp": "peg-leg-porker-nashville", "tripadvisor": "ta_2390871"},
    },
    {
        "key": "cumberland",
        "name": "Cumberland Hot Chicken",
        "city": "Nashville, TN",
        "address": "1520 Church St, Nashville, TN 37203",
        "category": "Southern",
        "tags": ["hot chicken", "chicken", "southern", "fried chicken"],
        "rating": 4.3,
        "review_count": 812,
        "price": "$",
        "ids": {"google": "gp_cumberland", "yelp": "cumberland-hot-chicken-nashville", "tripadvisor": "ta_9931050"},
    },
    {
        "key": "vine_ember",
        "name": "Vine & Ember Bistro",
        "city": "Napa, CA",
        "address": "1250 Main St, Napa, CA 94559",
        "category": "Californian",
        "tags": ["californian", "bistro", "wine bar", "dinner"],
        "rating": 4.7,
        "review_count": 604,
        "price": "$$$",
        "ids": {"google": "gp_vine_ember", "yelp": "vine-and-ember-bistro-napa", "tripadvisor": "ta_7719033"},
    },
    {
        "key": "hearthstone",
        "name": "Hearthstone Pizza Co.",
        "city": "Chicago, IL",
        "address": "2210 N Clark St, Chicago, IL 60614",
        "category": "Pizza",
        "tags": ["pizza", "deep dish", "italian"],
        "rating": 4.4,
        "review_count": 1330,
        "price": "$$",
        "ids": {"google": "gp_hearthstone", "yelp": "hearthstone-pizza-co-chicago", "tripadvisor": "ta_5120448"},
    },
]

REVIEWS: dict[str, list[dict[str, Any]]] = {
    "martins": [
        {"n": 1, "author": "Dana K.", "rating": 5, "date": "2026-03-14", "helpful": 12,
         "text": "The brisket had a peppery bark and stayed juicy all the way through; easily the best plate we "
         "had in Nashville."},
        {"n": 2, "author": "Marcus T.", "rating": 4, "date": "2026-03-09", "helpful": 5,
         "text": "Brisket was tender but a little dry on the ends by 8 PM; the whole-hog pulled pork made up for it."},
        {"n": 3, "author": "Leah W.", "rating": 5, "date": "2026-02-27", "helpful": 9,
         "text": "Go early for the brisket: they sold out of the fatty cut before 7. Ribs were great too."},
    ],
    "peg_leg": [
        {"n": 1, "author": "Chris B.", "rating": 5, "date": "2026-03-16", "helpful": 7,
         "text": "Dry-rub ribs are the star. The brisket special was smoky with a deep pink ring, though the "
         "portion was small."},
        {"n": 2, "author": "Aisha R.", "rating": 4, "date": "2026-03-05", "helpful": 4,
         "text": "Brisket was solid but not as juicy as Martin's; the Kool-Aid pickles are a must."},
        {"n": 3, "author": "Tom H.", "rating": 3, "date": "2026-02-20", "helpful": 2,
         "text": "Long line, and the brisket was sold out by 6:30."},
    ],
    "cumberland": [
        {"n": 1, "author": "Nina P.", "rating": 4, "date": "2026-03-11", "helpful": 3,
         "text": "Medium heat was plenty; the crinkle fries are underrated."},
    ],
    "vine_ember": [
        {"n": 1, "author": "Grace L.", "rating": 5, "date": "2026-03-15", "helpful": 6,
         "text": "Wood-fired halibut and a great local Cabernet list; book the patio early."},
    ],
    "hearthstone": [
        {"n": 1, "author": "Owen D.", "rating": 4, "date": "2026-03-12", "helpful": 8,
         "text": "Deep dish takes 45 minutes, so order ahead; the sausage pie is worth the wait."},
    ],
}  # fmt: skip


class Review(_Record):
    review_id: str
    place_key: str
    author: str
    rating: int
    date: str
    text: str
    helpful_count: int


class ReviewsState(_Record):
    reviews: list[Review]
    votes: list[str]  # review ids the user marked helpful
    saved: list[str]  # place keys on the user's list


def _seed_reviews(review_prefix: str, saved: list[str]) -> ReviewsState:
    reviews = [
        Review(
            review_id=f"{review_prefix}_{key}_{r['n']}",
            place_key=key,
            author=r["author"],
            rating=r["rating"],
            date=r["date"],
            text=r["text"],
            helpful_count=r["helpful"],
        )
        for key, items in REVIEWS.items()
        for r in items
    ]
    return ReviewsState(reviews=reviews, votes=[], saved=list(saved))


def _places_matching(query: str, location: str) -> list[dict[str, Any]]:
    words = _norm(query)
    if not words:
        raise ToolExecutionError("query must not be empty", "invalid_request")
    city = _norm(location).split(",")[0].strip()
    hits = []
    for place in PLACES:
        place_city = _norm(place["city"]).split(",")[0]
        if city and city not in place_city and place_city not in city:
            continue
        by_name = words in _norm(place["name"])
        by_tag = any(w in place["tags"] or w == place["category"].lower() for w in [words, *words.split()])
        if by_name or by_tag:
            hits.append(place)
    return sorted(hits, key=lambda p: -p["rating"])


class _ReviewsService(Service):
    domain = DOMAIN
    category = "reviews"
    State = ReviewsState
    state: ReviewsState
    provider: ClassVar[str]  # key into a place's ids
    review_prefix: ClassVar[str]
    id_field: ClassVar[str]
    query_arg: ClassVar[str]  # the search tool's name for its query argument
    search_tool: ClassVar[str]  # the tool that searches places in a city
    details_tool: ClassVar[str]  # the tool that shows one place by id
    start_saved: ClassVar[list[str]] = []

    @classmethod
    def initial_state(cls) -> ReviewsState:
        return _seed_reviews(cls.review_prefix, cls.start_saved)

    @classmethod
    def pid(cls, key: str) -> str:
        place = next(p for p in PLACES if p["key"] == key)
        return str(place["ids"][cls.provider])

    def _place(self, place_id: str) -> dict[str, Any]:
        for place in PLACES:
            if place["ids"][self.provider] == place_id.strip():
                return place
        raise not_found(self.id_field.removesuffix("_id"), place_id)

    def _place_view(self, place: dict[str, Any]) -> dict[str, Any]:
        return {
            self.id_field: place["ids"][self.provider],
            "name": place["name"],
            "address": place["address"],
            "category": place["category"],
            "rating": place["rating"],
            "review_count": place["review_count"],
            "price": place["price"],
        }

    def _review(self, review_id: str) -> Review:
        for review in self.state.reviews:
            if review.review_id == review_id.strip():
                return review
        raise not_found("review", review_id)

    def _reviews_of(self, place_id: str) -> dict[str, Any]:
        place = self._place(place_id)
        reviews = sorted(
            (r for r in self.state.reviews if r.place_key == place["key"]), key=lambda r: r.date, reverse=True
        )
        return {
            self.id_field: place_id.strip(),
            "name": place["name"],
            "reviews": [r.model_dump(exclude={"place_key"}) for r in reviews],
        }

    def _search(self, query: str, location: str, key: str) -> dict[str, Any]:
        return {key: [self._place_view(p) for p in _places_matching(query, location)]}

    def _vote(self, review_id: str) -> Review:
        review = self._review(review_id)
        if review.review_id not in self.state.votes:
            self.state.votes.append(review.review_id)
            review.helpful_count += 1
        return review

    def _votes_view(self) -> dict[str, Any]:
        by_key = {p["key"]: p for p in PLACES}
        votes = []
        for review_id in self.state.votes:
            review = self._review(review_id)
            votes.append(
                {"review_id": review_id, "author": review.author, "place_name": by_key[review.place_key]["name"]}
            )
        return {"votes": votes}

    def _save(self, place_ids: list[str]) -> list[str]:
        if not place_ids:
            raise ToolExecutionError("give at least one id", "invalid_request")
        places = [self._place(pid) for pid in place_ids]  # every id resolves before anything is saved
        added = []
        for place in places:
            if place["key"] not in self.state.saved:
                self.state.saved.append(place["key"])
                added.append(place["name"])
        return added

    def _saved_view(self) -> list[dict[str, Any]]:
        by_key = {p["key"]: p for p in PLACES}
        return [{self.id_field: self.pid(key), "name": by_key[key]["name"]} for key in self.state.saved]

    @classmethod
    def lookups(cls) -> list[Lookup]:
        martins, peg_leg = cls.pid("martins"), cls.pid("peg_leg")
        return [
            Lookup(
                topic="reviews_nashville_bbq",
                request="Find BBQ restaurants in Nashville, TN for dinner and tell me how they're rated.",
                call=Call(cls.search_tool, {cls.query_arg: "BBQ", "location": "Nashville, TN"}),
                shows=["Martin's Bar-B-Que Joint", "Peg Leg Porker"],
                answer=["Martin's Bar-B-Que Joint", "Peg Leg Porker"],
                value_field="rating",
            ),
            Lookup(
                topic="reviews_martins_details",
                request="Look up Martin's Bar-B-Que Joint in Nashville: what's its rating and address?",
                call=Call(cls.search_tool, {cls.query_arg: "Martin's Bar-B-Que Joint", "location": "Nashville, TN"}),
                shows=["Martin's Bar-B-Que Joint", "4.6"],
                answer=["4.6", "410 4th Ave S"],
                pin=Call(cls.details_tool, {cls.id_field: martins}),
                value_field="rating",
            ),
            Lookup(
                topic="reviews_martins_brisket",
                request="What are recent reviewers saying about the brisket at Martin's Bar-B-Que Joint in Nashville?",
                call=Call("get_reviews", {cls.id_field: martins}),
                shows=["Dana K.", "brisket"],
                answer=["peppery bark", "sold out"],
            ),
            Lookup(
                topic="reviews_peg_leg_brisket",
                request="Show me recent reviews of the brisket at Peg Leg Porker in Nashville.",
                call=Call("get_reviews", {cls.id_field: peg_leg}),
                shows=["Chris B.", "brisket"],
                answer=["pink ring", "sold out"],
            ),
        ]

    @classmethod
    def _helpful_write(cls, mark_tool: str, votes_tool: str) -> Write:
        """The recipe that marks Dana K.'s review of Martin's helpful (``mark_tool``), read back by ``votes_tool``."""
        review_id = f"{cls.review_prefix}_martins_1"
        return Write(
            topic="reviews_mark_helpful",
            request="Mark Dana K.'s review of the brisket at Martin's Bar-B-Que Joint as helpful.",
            call=Call(mark_tool, {"review_id": review_id}),
            readback=Call(votes_tool),
            landed=[review_id],
            answer=["Dana K."],
        )

    @classmethod
    def _save_write(cls, call: Call, readback: Call) -> Write:
        """The recipe that saves both Nashville BBQ places (``call`` names them by ``bbq_ids``) to the user's list."""
        return Write(
            topic="reviews_save_bbq",
            request="Save both Nashville BBQ spots, Martin's Bar-B-Que Joint and Peg Leg Porker, to my list for the "
            "trip.",
            call=call,
            readback=readback,
            landed=["Martin's Bar-B-Que Joint", "Peg Leg Porker"],
            answer=["Martin's Bar-B-Que Joint", "Peg Leg Porker"],
        )

    @classmethod
    def bbq_ids(cls) -> list[str]:
        return [cls.pid("martins"), cls.pid("peg_leg")]


class GoogleReviews(_ReviewsService):
    name = "google_reviews"
    title = "Google Reviews"
    counterparts = ("yelp", "tripadvisor")
    provider = "google"
    review_prefix = "gr"
    id_field = "place_id"
    query_arg = "query"
    search_tool = "search_places"
    details_tool = "get_place"
    start_saved: ClassVar[list[str]] = ["vine_ember"]

    @tool("read", failure_hint="An empty list may mean the location did not match; try the city name alone.")
    def search_places(
        self,
        query: Annotated[str, Field(description="What to look for: a cuisine ('BBQ') or a place name")],
        location: Annotated[str, Field(description="City, e.g. 'Nashville, TN'")],
    ) -> dict[str, Any]:
        """Search places by cuisine or name in a city; results carry place_id, rating and price level."""
        return self._search(query, location, "places")

    @tool("read", failure_hint="Ids are per provider; use a place_id from search_places.")
    def get_place(self, place_id: Annotated[str, Field(description="Place id, e.g. gp_martins")]) -> dict[str, Any]:
        """Details of one place: address, category, rating, review count, price level."""
        return self._place_view(self._place(place_id))

    @tool(
        "read",
        failure_hint="If review details fail persistently, answer from another review provider rather than from "
        "ratings alone.",
    )
    def get_reviews(self, place_id: Annotated[str, Field(description="Place id from search_places")]) -> dict[str, Any]:
        """Recent reviews of a place, newest first, with author, rating, date, text and helpful count."""
        return self._reviews_of(place_id)

    @tool(
        "write",
        failure_hint="A success response may not persist; confirm with list_helpful_votes, and do not post a new "
        "review as a substitute.",
    )
    def mark_helpful(
        self, review_id: Annotated[str, Field(description="Review id from get_reviews")]
    ) -> dict[str, Any]:
        """Mark a review as helpful."""
        review = self._vote(review_id)
        return {"status": "marked", "review_id": review.review_id, "author": review.author}

    @tool("readback", failure_hint="A review missing here was not marked, whatever mark_helpful answered.")
    def list_helpful_votes(self) -> dict[str, Any]:
        """List the reviews the user has marked helpful."""
        return self._votes_view()

    @tool("write", failure_hint="Some places of a batch may not be saved; confirm with get_saved_places.")
    def save_places(
        self, place_ids: Annotated[list[str], Field(description="Place ids to save to the 'Want to go' list")]
    ) -> dict[str, Any]:
        """Save one or more places to the user's 'Want to go' list."""
        return {"status": "saved", "added": self._save(place_ids)}

    @tool("readback", failure_hint="A place missing here was not saved.")
    def get_saved_places(self) -> dict[str, Any]:
        """The user's 'Want to go' list."""
        return {"list": "Want to go", "places": self._saved_view()}

    @classmethod
    def writes(cls) -> list[Write]:
        return [
            cls._helpful_write("mark_helpful", "list_helpful_votes"),
            cls._save_write(Call("save_places", {"place_ids": cls.bbq_ids()}), Call("get_saved_places")),
        ]


class Yelp(_ReviewsService):
    name = "yelp"
    title = "Yelp"
    counterparts = ("google_reviews", "tripadvisor")
    provider = "yelp"
    review_prefix = "yr"
    id_field = "business_id"
    query_arg = "term"
    search_tool = "search_businesses"
    details_tool = "get_business"
    start_saved: ClassVar[list[str]] = ["hearthstone"]

    @tool("read", failure_hint="An empty list may mean the location did not match; try the city name alone.")
    def search_businesses(
        self,
        term: Annotated[str, Field(description="Search term: a cuisine ('BBQ') or a business name")],
        location: Annotated[str, Field(description="City, e.g. 'Nashville, TN'")],
    ) -> dict[str, Any]:
        """Search businesses by term in a city; results carry business_id, rating and price."""
        return self._search(term, location, "businesses")

    @tool("read", failure_hint="Ids are per provider; use a business_id from search_businesses.")
    def get_business(
        self, business_id: Annotated[str, Field(description="Business id from search_businesses")]
    ) -> dict[str, Any]:
        """Details of one business: address, category, rating, review count, price."""
        return self._place_view(self._place(business_id))

    @tool("read", failure_hint="Check the review dates: the request may ask for recent reviews only.")
    def get_reviews(
        self, business_id: Annotated[str, Field(description="Business id from search_businesses")]
    ) -> dict[str, Any]:
        """Recent reviews of a business, newest first, with author, rating, date, text and useful count."""
        return self._reviews_of(business_id)

    @tool(
        "write",
        failure_hint="A success response may not persist; confirm with list_my_votes, and do not write a new "
        "review as a substitute.",
    )
    def mark_useful(self, review_id: Annotated[str, Field(description="Review id from get_reviews")]) -> dict[str, Any]:
        """Vote a review 'Useful'."""
        review = self._vote(review_id)
        return {"status": "ok", "review_id": review.review_id, "useful": review.helpful_count}

    @tool("readback", failure_hint="A review missing here was not voted, whatever mark_useful answered.")
    def list_my_votes(self) -> dict[str, Any]:
        """List the reviews the user voted 'Useful'."""
        return self._votes_view()

    @tool("write", failure_hint="Some businesses of a batch may not be bookmarked; confirm with get_bookmarks.")
    def bookmark_businesses(
        self, business_ids: Annotated[list[str], Field(description="Business ids to bookmark")]
    ) -> dict[str, Any]:
        """Bookmark one or more businesses."""
        return {"status": "bookmarked", "added": self._save(business_ids)}

    @tool("readback", failure_hint="A business missing here was not bookmarked.")
    def get_bookmarks(self) -> dict[str, Any]:
        """The user's bookmarked businesses."""
        return {"bookmarks": self._saved_view()}

    @classmethod
    def writes(cls) -> list[Write]:
        return [
            cls._helpful_write("mark_useful", "list_my_votes"),
            cls._save_write(Call("bookmark_businesses", {"business_ids": cls.bbq_ids()}), Call("get_bookmarks")),
        ]


class Tripadvisor(_ReviewsService):
    name = "tripadvisor"
    title = "Tripadvisor"
    counterparts = ("google_reviews", "yelp")
    provider = "tripadvisor"
    review_prefix = "tr"
    id_field = "location_id"
    query_arg = "query"
    search_tool = "search_restaurants"
    details_tool = "get_restaurant"
    start_saved: ClassVar[list[str]] = ["cumberland"]  # the trip is the saved list; it starts with hot chicken
    trip_id: ClassVar[str] = "trip_nashville"
    trip_name: ClassVar[str] = "Nashville weekend"

    def _check_trip(self, trip_id: str) -> None:
        if trip_id.strip() != self.trip_id:
            raise not_found("trip", trip_id)

    @tool("read", failure_hint="An empty list may mean the location did not match; try the city name alone.")
    def search_restaurants(
        self,
        query: Annotated[str, Field(description="Cuisine ('BBQ') or restaurant name")],
        location: Annotated[str, Field(description="City, e.g. 'Nashville, TN'")],
    ) -> dict[str, Any]:
        """Search restaurants by cuisine or name in a city; results carry location_id, rating and price."""
        return self._search(query, location, "restaurants")

    @tool("read", failure_hint="Ids are per provider; use a location_id from search_restaurants.")
    def get_restaurant(
        self, location_id: Annotated[str, Field(description="Location id from search_restaurants")]
    ) -> dict[str, Any]:
        """Details of one restaurant: address, cuisine, rating, review count, price."""
        return self._place_view(self._place(location_id))

    @tool("read", failure_hint="Check the review dates: the request may ask for recent reviews only.")
    def get_reviews(
        self, location_id: Annotated[str, Field(description="Location id from search_restaurants")]
    ) -> dict[str, Any]:
        """Recent traveller reviews of a restaurant, newest first."""
        return self._reviews_of(location_id)

    @tool("read", failure_hint="Only the user's own trips are listed; save to a trip id shown here.")
    def list_trips(self) -> dict[str, Any]:
        """The user's trips (saved-item collections)."""
        return {"trips": [{"trip_id": self.trip_id, "name": self.trip_name, "items": len(self.state.saved)}]}

    @tool("write", failure_hint="Some items of a batch may not be saved; confirm with get_trip.")
    def save_to_trip(
        self,
        trip_id: Annotated[str, Field(description="Trip id from list_trips")],
        location_ids: Annotated[list[str], Field(description="Location ids to save to the trip")],
    ) -> dict[str, Any]:
        """Save one or more restaurants to one of the user's trips."""
        self._check_trip(trip_id)
        return {"status": "saved", "trip_id": self.trip_id, "added": self._save(location_ids)}

    @tool("readback", failure_hint="An item missing here was not saved to the trip.")
    def get_trip(self, trip_id: Annotated[str, Field(description="Trip id from list_trips")]) -> dict[str, Any]:
        """One trip with its saved items."""
        self._check_trip(trip_id)
        return {"trip_id": self.trip_id, "name": self.trip_name, "items": self._saved_view()}

    @classmethod
    def writes(cls) -> list[Write]:
        return [
            cls._save_write(
                Call("save_to_trip", {"trip_id": cls.trip_id, "location_ids": cls.bbq_ids()}),
                Call("get_trip", {"trip_id": cls.trip_id}),
            )
        ]


# --- news: shared facts --------------------------------------------------------------------------------------------

NewsSection = Literal["world", "us", "business", "technology", "sports"]

STORIES: list[dict[str, Any]] = [
    {
        "key": "fed",
        "section": "business",
        "title": "Fed holds rates steady, signals two cuts later this year",
        "summary": "The Federal Reserve kept its benchmark rate in the 3.50%-3.75% range in a 10-2 vote on "
        "Wednesday and penciled in two quarter-point cuts before the end of 2026.",
        "body": "Two policymakers dissented in favor of an immediate cut. Officials said inflation had eased to "
        "2.6% but the labor market remained solid, and the chair said cuts would depend on the data.",
        "author": "Elena Park",
        "published_at": "2026-03-18T19:05:00Z",
        "outlet": "Reuters",
    },
    {
        "key": "memphis",
        "section": "us",
        "title": "Mississippi River set to crest near 39.2 feet at Memphis",
        "summary": "Forecasters expect the Mississippi to crest near 39.2 feet at Memphis on Monday, about five feet "
        "above flood stage, as the Wolf River spills into low-lying Shelby County neighborhoods.",
        "body": "City crews handed out sandbags in Frayser and Raleigh. The National Weather Service flood warning "
        "runs through Tuesday.",
        "author": "Marcus Bell",
        "published_at": "2026-03-20T02:40:00Z",
        "outlet": "Mid-South Ledger",
    },
    {
        "key": "chip",
        "section": "technology",
        "title": "Northwind Semiconductor picks Ohio for $4 billion chip plant",
        "summary": "Northwind Semiconductor will build a $4 billion chip packaging plant near Columbus, Ohio, "
        "creating about 1,800 jobs when it opens in 2028.",
        "body": "The company said state incentives and a skilled workforce tipped the decision; construction "
        "starts this summer.",
        "author": "Priyanka Rao",
        "published_at": "2026-03-19T13:15:00Z",
        "outlet": "Reuters",
    },
    {
        "key": "grid",
        "section": "world",
        "title": "EU ministers agree 200 GW grid storage target for 2030",
        "summary": "European Union energy ministers agreed to a 200 gigawatt grid-scale storage target for 2030 to "
        "absorb surging solar and wind output.",
        "body": "The target still needs approval from the European Parliament; member states will report progress "
        "every two years.",
        "author": "Lena Vogel",
        "published_at": "2026-03-19T16:50:00Z",
        "outlet": "Reuters",
    },
    {
        "key": "soccer",
        "section": "sports",
        "title": "Nashville SC edges Orlando 2-1 with stoppage-time header",
        "summary": "A stoppage-time header gave Nashville SC a 2-1 win over Orlando City on Thursday night.",
        "body": "Nashville moved to third in the Eastern Conference with the win.",
        "author": "Ray Duncan",
        "published_at": "2026-03-20T03:20:00Z",
        "outlet": "Music City Sports",
    },
]


class NewsState(_Record):
    saved: list[str]  # story keys, in the order saved


class _NewsService(Service):
    domain = DOMAIN
    category = "news"
    State = NewsState
    state: NewsState
    article_prefix: ClassVar[str]
    start_saved: ClassVar[list[str]]
    search_tool: ClassVar[str]  # the tool that searches stories
    query_arg: ClassVar[str]  # the search tool's name for its query argument

    @classmethod
    def initial_state(cls) -> NewsState:
        return NewsState(saved=list(cls.start_saved))

    @classmethod
    def aid(cls, key: str) -> str:
        return f"{cls.article_prefix}{key}"

    def _story(self, article_id: str) -> dict[str, Any]:
        for story in STORIES:
            if self.aid(story["key"]) == article_id.strip():
                return story
        raise not_found("article", article_id)

    def _brief(self, story: dict[str, Any]) -> dict[str, Any]:
        return {
            "article_id": self.aid(story["key"]),
            "title": story["title"],
            "section": story["section"],
            "published_at": story["published_at"],
            "summary": story["summary"],
        }

    def _full(self, story: dict[str, Any]) -> dict[str, Any]:
        return {**self._brief(story), "author": story["author"], "body": story["body"]}

    def _search(self, query: str) -> list[dict[str, Any]]:
        terms = _norm(query).split()
        if not terms:
            raise ToolExecutionError("query must not be empty", "invalid_request")
        hits = [s for s in STORIES if all(t in _norm(f"{s['title']} {s['summary']} {s['body']}") for t in terms)]
        return [self._brief(s) for s in sorted(hits, key=lambda s: s["published_at"], reverse=True)]

    def _save(self, article_ids: list[str]) -> list[str]:
        if not article_ids:
            raise ToolExecutionError("give at least one article id", "invalid_request")
        stories = [self._story(aid) for aid in article_ids]  # every id resolves before anything is saved
        added = []
        for story in stories:
            if story["key"] not in self.state.saved:
                self.state.saved.append(story["key"])
                added.append(self.aid(story["key"]))
        return added

    def _saved(self) -> list[dict[str, Any]]:
        by_key = {s["key"]: s for s in STORIES}
        return [{"article_id": self.aid(k), "title": by_key[k]["title"]} for k in self.state.saved]

    def _section(self, section: str) -> list[dict[str, Any]]:
        stories = sorted((s for s in STORIES if s["section"] == section), key=lambda s: s["published_at"], reverse=True)
        return [self._brief(s) for s in stories]

    @classmethod
    def lookups(cls) -> list[Lookup]:
        search, query_arg = cls.search_tool, cls.query_arg
        return [
            Lookup(
                topic="news_fed_decision",
                request="What did the Federal Reserve decide on interest rates this week, and how did the vote go?",
                call=Call(search, {query_arg: "Federal Reserve"}),
                shows=["3.50%-3.75%", "Fed holds rates steady"],
                answer=["3.50%-3.75%", "10-2"],
                pin=Call("get_article", {"article_id": cls.aid("fed")}),
            ),
            Lookup(
                topic="news_memphis_crest",
                request="What's the latest news on the Mississippi River flooding in Memphis: how high will it crest?",
                call=Call(search, {query_arg: "Memphis crest"}),
                shows=["39.2 feet", "Wolf River"],
                answer=["39.2 feet", "Wolf River"],
                pin=Call("get_article", {"article_id": cls.aid("memphis")}),
            ),
            Lookup(
                topic="news_chip_plant",
                request="Where is Northwind Semiconductor building its new chip plant, and how many jobs will it "
                "create?",
                call=Call(search, {query_arg: "Northwind"}),
                shows=["Northwind Semiconductor", "Ohio"],
                answer=["Ohio", "1,800"],
                pin=Call("get_article", {"article_id": cls.aid("chip")}),
            ),
        ]

    @classmethod
    def writes(cls) -> list[Write]:
        return [
            Write(
                topic="news_save_stories",
                request="Save the Fed rate decision story and the Northwind chip plant story so I can read them later.",
                call=Call("save_articles", {"article_ids": [cls.aid("fed"), cls.aid("chip")]}),
                readback=Call("get_saved_articles"),
                landed=[STORIES[0]["title"], STORIES[2]["title"]],
                answer=["Fed holds rates steady", "Northwind Semiconductor"],
            )
        ]


class GoogleNews(_NewsService):
    name = "google_news"
    title = "Google News"
    counterparts = ("reuters",)
    article_prefix = "gn_"
    start_saved: ClassVar[list[str]] = ["soccer"]
    search_tool = "search_news"
    query_arg = "query"

    def _brief(self, story: dict[str, Any]) -> dict[str, Any]:
        # an aggregator names the outlet that published each story
        return {**super()._brief(story), "source": story["outlet"]}

    @tool("read", failure_hint="An empty result may mean the words were too specific; retry with fewer words.")
    def search_news(
        self, query: Annotated[str, Field(description="Words that must all appear in the story")]
    ) -> dict[str, Any]:
        """Search recent news stories; every word must match. Newest first, with summary and source."""
        return {"query": query, "articles": self._search(query)}

    @tool("read", failure_hint="Headlines are per section; check published_at to be sure a story is current.")
    def get_top_headlines(self, topic: Annotated[NewsSection, Field(description="News section")]) -> dict[str, Any]:
        """Top stories in one section, newest first."""
        return {"topic": topic, "articles": self._section(topic)}

    @tool("readback", failure_hint="Ids are per provider; use an article_id from search_news or the headlines.")
    def get_article(self, article_id: Annotated[str, Field(description="Article id")]) -> dict[str, Any]:
        """One story in full: title, author, summary, body."""
        return self._full(self._story(article_id))

    @tool("write", failure_hint="Part of a batch may not be saved; confirm with get_saved_articles.")
    def save_articles(
        self, article_ids: Annotated[list[str], Field(description="Article ids to save for later")]
    ) -> dict[str, Any]:
        """Save one or more stories to the user's 'Saved stories'."""
        return {"status": "saved", "added": self._save(article_ids)}

    @tool("readback", failure_hint="A story missing here was not saved, whatever save_articles answered.")
    def get_saved_articles(self) -> dict[str, Any]:
        """The user's saved stories."""
        return {"articles": self._saved()}


class Reuters(_NewsService):
    name = "reuters"
    title = "Reuters"
    counterparts = ("google_news",)
    article_prefix = "reu_"
    start_saved: ClassVar[list[str]] = ["grid"]
    search_tool = "search_articles"
    query_arg = "keywords"

    @tool("read", failure_hint="An empty result may mean the words were too specific; retry with fewer words.")
    def search_articles(
        self, keywords: Annotated[str, Field(description="Words that must all appear in the article")]
    ) -> dict[str, Any]:
        """Search Reuters coverage; every word must match. Newest first, with summary."""
        return {"keywords": keywords, "articles": self._search(keywords)}

    @tool("read", failure_hint="Check published_at to be sure a story is current.")
    def list_section(self, section: Annotated[NewsSection, Field(description="Section")]) -> dict[str, Any]:
        """Latest articles in one section, newest first."""
        return {"section": section, "articles": self._section(section)}

    @tool("readback", failure_hint="Ids are per provider; use an article_id from search_articles or a section.")
    def get_article(self, article_id: Annotated[str, Field(description="Article id")]) -> dict[str, Any]:
        """One article in full: title, author, summary, body."""
        return self._full(self._story(article_id))

    @tool("write", failure_hint="Part of a batch may not be saved; confirm with get_saved_articles.")
    def save_articles(
        self, article_ids: Annotated[list[str], Field(description="Article ids to save for later")]
    ) -> dict[str, Any]:
        """Save one or more articles to the user's reading list."""
        return {"status": "saved", "added": self._save(article_ids)}

    @tool("readback", failure_hint="An article missing here was not saved, whatever save_articles answered.")
    def get_saved_articles(self) -> dict[str, Any]:
        """The user's reading list."""
        return {"articles": self._saved()}


SERVICES: list[type[Service]] = [
    WeatherCom,
    YahooWeather,
    AccuWeather,
    NWS,
    GoogleReviews,
    Yelp,
    Tripadvisor,
    GoogleNews,
    Reuters,
]
