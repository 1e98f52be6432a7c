"""Weather services: Weather.com, Yahoo Weather, AccuWeather and the National Weather Service.

The four forecast from one table (``forecasts(day)``: ten days from the world's day, seeded noise around each
location's normals, with the facts the scenarios rest on from ``data/forecast_facts.jsonl``) and know the same alerts
(``data/alerts.jsonl``), so a fallback from one provider to another reaches the same answer. Every forecast carries
a fixed ``generated_at``; reads never show the clock. In a world of an earlier day (what a ``stale`` fault reads)
the forecast is the one issued then: its ten days start that day, with that day's facts and normals.
"""

from __future__ import annotations

import functools
import random
from datetime import date as Date
from datetime import timedelta
from typing import Annotated, Any, ClassVar

from pydantic import Field

from undertow.env_core.services.base import Category, peers
from undertow.env_core.services.helpers import add_new, conflict, invalid, normalized, not_found
from undertow.env_core.services.histories import saved_of
from undertow.env_core.services.seeds import TODAY, Alert, Location, tables
from undertow.env_core.services.states import FavoritesState, NoState, SavedLocationsState
from undertow.env_core.tools import tool

DOMAIN = "information"
FORECAST_DAYS = 10
SEVERITIES = ("Extreme", "Severe", "Moderate", "Minor")  # most severe first


_PRECIP = {"Sunny": 5, "Mostly Sunny": 10, "Partly Cloudy": 15, "Cloudy": 25, "Showers": 55, "Rain": 70}


Draw = tuple[str, int, int, int]  # a day's seeded condition and offsets of its high, low and chance of rain


@functools.cache
def _draws(issued: Date) -> dict[tuple[str, str], Draw]:
    """The seeded draws of the forecast issued on ``issued``, by location key and date: one random stream seeded by
    the day (20260320 today), location by location, day by day."""
    rng = random.Random(int(issued.strftime("%Y%m%d")))
    pool = ["Sunny", "Mostly Sunny", "Partly Cloudy", "Partly Cloudy", "Cloudy", "Showers", "Rain"]
    draws: dict[tuple[str, str], Draw] = {}
    for location in tables(issued).locations:
        for offset in range(FORECAST_DAYS):
            day = (issued + timedelta(days=offset)).isoformat()
            draws[(location.key, day)] = (rng.choice(pool), rng.randint(-4, 4), rng.randint(-3, 3), rng.randint(-5, 5))
    return draws


@functools.cache
def forecasts(issued: Date = TODAY) -> dict[str, list[dict[str, Any]]]:
    """The forecast issued on ``issued``: ten days from that day at every location, seeded noise around the
    location's normals, the facts of that day where there are facts. A day that today's forecast covers keeps
    today's draw, so an earlier forecast differs from today's only where the data's older snapshots do (and in the
    days before today it covers)."""
    today, own = _draws(TODAY), _draws(issued)
    seeds = tables(issued)
    table: dict[str, list[dict[str, Any]]] = {}
    for location in seeds.locations:
        days = []
        for offset in range(FORECAST_DAYS):
            day = issued + timedelta(days=offset)
            key = (location.key, day.isoformat())
            condition, high_off, low_off, precip_off = today.get(key) or own[key]
            high, low, precip = location.high + high_off, location.low + low_off, _PRECIP[condition] + precip_off
            fact = seeds.forecast_facts.get(key)
            if fact:
                condition, high, low, precip = fact.condition, fact.high_f, fact.low_f, fact.precip_chance
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
        table[location.key] = days
    return table


def _hourly(key: str, day: dict[str, Any], issued: Date = TODAY) -> list[dict[str, Any]]:
    """24 hourly points derived from the day: coolest near dawn, warmest mid-afternoon (the facts of ``issued``)."""
    spans = tables(issued).hourly_facts.get((key, day["date"]), [])
    hours = []
    for hour in range(24):
        if 5 <= hour <= 15:
            warmth = (hour - 5) / 10
        elif hour > 15:
            warmth = 1 - (hour - 15) / 14
        else:
            warmth = 0.3 * (5 - hour) / 5
        condition, precip = day["condition"], day["precip_chance"]
        for span in spans:
            if span.first <= hour <= span.last:
                condition, precip = span.condition, span.precip_chance
        hours.append(
            {
                "time": f"{day['date']}T{hour:02d}:00",
                "condition": condition,
                "temp_f": round(day["low_f"] + (day["high_f"] - day["low_f"]) * warmth),
                "precip_chance": precip,
            }
        )
    return hours


def _location(text: str, day: Date = TODAY) -> Location:
    """The location a name refers to ("Napa Valley", "napa, ca", "Maui"), as of ``day``; an unknown name is
    not_found."""
    wanted = normalized(text).removesuffix(", usa").removesuffix(", us")
    if wanted:
        for location in tables(day).locations:
            name = normalized(location.name)
            if wanted in (name, name.split(",")[0], *location.aliases):
                return location
    raise not_found("location", text)


def _locations_matching(query: str, day: Date) -> list[Location]:
    """The locations whose name or an alias contains the query (a provider's location search), as of ``day``."""
    needle = normalized(query)
    if not needle:
        raise invalid("query must not be empty")
    known = tables(day).locations
    return [loc for loc in known if needle in normalized(loc.name) or any(needle in a for a in loc.aliases)]


def _day_range(days: int) -> int:
    if not 1 <= days <= FORECAST_DAYS:
        raise invalid(f"days must be between 1 and {FORECAST_DAYS}")
    return days


def _forecast_day(key: str, date: str, issued: Date = TODAY) -> dict[str, Any]:
    for day in forecasts(issued)[key]:
        if day["date"] == date.strip():
            return day
    last = issued + timedelta(days=FORECAST_DAYS - 1)
    raise invalid(f"no forecast for {date!r}: forecasts cover {issued.isoformat()} to {last.isoformat()} (YYYY-MM-DD)")


def _alert_brief(alert: Alert, alert_id: str) -> dict[str, Any]:
    return {
        "alert_id": alert_id,
        "event": alert.event,
        "severity": alert.severity,
        "area": alert.area,
        "summary": alert.summary,
        "expires": alert.expires,
    }


def _alert_full(alert: Alert, alert_id: str) -> dict[str, Any]:
    full = _alert_brief(alert, alert_id)
    full.update(
        issued=alert.issued,
        zones=alert.zones,
        crest=alert.crest,
        instructions=alert.instructions,
        source=alert.office,
    )
    return full


LocationArg = Annotated[str, Field(description="City or place name, e.g. 'Napa Valley, CA' or 'Maui'")]
DaysArg = Annotated[int, Field(description="Number of days, starting today (1-10)", ge=1, le=FORECAST_DAYS)]
DateArg = Annotated[str, Field(description="Local date, YYYY-MM-DD")]
LocationKeyArg = Annotated[str, Field(description="Location key from search_locations, or a place name")]
AlertDetailsId = Annotated[str, Field(description="Alert id from get_alerts, e.g. alert_memphis_flood")]


class _Weather(Category, domain=DOMAIN, category="weather"):
    """A weather provider. Its hourly forecast is shared; ``_place`` resolves the place a call names (a provider
    may take its own ids, or cover the US only) and ``_forecast_ref`` gives the id fields a forecast shows first."""

    generated_at: ClassVar[str] = "2026-03-20T05:00:00Z"
    alert_prefix: ClassVar[str] = ""

    def _place(self, text: str) -> Location:
        return _location(text, self.world.as_of)

    def _forecast_ref(self, location: Location) -> dict[str, Any]:
        return {}

    def _daily(self, location: Location, days: int) -> dict[str, Any]:
        return {
            "location": location.name,
            "generated_at": self.generated_at,
            "days": [dict(day) for day in forecasts(self.world.as_of)[location.key][: _day_range(days)]],
        }

    @tool("read", failure_hint="Make sure the hours returned are for the date you asked about.")
    def get_hourly_forecast(self, location: LocationArg, date: DateArg) -> dict[str, Any]:
        """Hour-by-hour forecast for one date at a location (temperature, condition, chance of precipitation)."""
        place = self._place(location)
        day = _forecast_day(place.key, date, self.world.as_of)
        return {
            **self._forecast_ref(place),
            "location": place.name,
            "date": day["date"],
            "generated_at": self.generated_at,
            "hours": _hourly(place.key, day, self.world.as_of),
        }

    def _alerts(self, text: str, field: str = "location") -> dict[str, Any]:
        """The alerts active at the place ``text`` names (shown as ``field``)."""
        place = self._place(text)
        return {
            field: place.name,
            "alerts": [_alert_brief(a, self.alert_id(a)) for a in self._alert_table() if a.location == place.key],
        }

    def _alert_table(self) -> tuple[Alert, ...]:
        """The alerts of the world's day."""
        return tables(self.world.as_of).alerts

    def _remove(self, saved: list[str], location: str, what: str) -> dict[str, Any]:
        name = _location(location, self.world.as_of).name
        if name not in saved:
            raise not_found(what, location)
        saved.remove(name)
        return {"status": "removed", "location": name}

    @classmethod
    def alert_id(cls, alert: Alert) -> str:
        return f"{cls.alert_prefix}{alert.key}"

    def _alert_details(self, alert_id: str) -> dict[str, Any]:
        for alert in self._alert_table():
            if self.alert_id(alert) == alert_id.strip():
                return _alert_full(alert, alert_id.strip())
        raise not_found("alert", alert_id)


class _DailyWeather(_Weather):
    """A provider with a daily forecast by place name."""

    @tool(
        "read",
        failure_hint="Check generated_at and that the days cover the date you need; cross-check another provider "
        "if the data looks stale or odd.",
    )
    def get_daily_forecast(self, location: LocationArg, days: DaysArg = 7) -> dict[str, Any]:
        """Daily forecast for a location: condition, high/low (F) and chance of precipitation for each day."""
        place = self._place(location)
        return {**self._forecast_ref(place), **self._daily(place, days)}


class WeatherCom(_DailyWeather, name="weathercom", title="Weather.com"):
    state: SavedLocationsState
    alert_prefix = "alert_"
    hints: ClassVar[dict[str, str]] = {
        "get_daily_forecast": "Check generated_at: a forecast generated days ago is stale; cross-check another "
        "provider before relying on it.",
        "get_hourly_forecast": "Make sure the hours returned are for the date you asked about; a mismatched or stale "
        "window is not an answer.",
    }

    @classmethod
    def initial_state(cls, day: Date = TODAY) -> SavedLocationsState:
        return SavedLocationsState(saved=saved_of(cls.name, day))

    @tool(
        "write",
        failure_hint="A status of 'added' does not prove the save persisted; confirm with "
        "weathercom_get_saved_locations.",
    )
    def add_saved_location(self, location: LocationArg) -> dict[str, Any]:
        """Add a location to the user's saved locations (favorites)."""
        name = _location(location, self.world.as_of).name
        if name in self.state.saved:
            return {"status": "already_saved", "location": name}
        if len(self.state.saved) >= 10:
            raise conflict("at most 10 saved locations; remove one first")
        self.state.saved.append(name)
        return {"status": "added", "location": name}

    @tool("write", failure_hint="A 'removed' status may not persist; confirm with weathercom_get_saved_locations.")
    def remove_saved_location(self, location: LocationArg) -> dict[str, Any]:
        """Remove a location from the user's saved locations."""
        return self._remove(self.state.saved, location, "saved location")

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
    def get_alerts(self, location: LocationArg) -> dict[str, Any]:
        """Active weather alerts for a location, each with a summary; use get_alert_details for zones and crests."""
        return self._alerts(location)

    @tool(
        "read",
        failure_hint="Detail records can be temporarily unavailable; the alert list's summary still holds the main "
        "facts and the National Weather Service bulletin has the full text.",
    )
    def get_alert_details(self, alert_id: AlertDetailsId) -> dict[str, Any]:
        """Full details of one alert: affected zones, river crest, instructions, issuing office."""
        return self._alert_details(alert_id)


class _FavoritesWeather(_DailyWeather):
    """Providers that find places by their own ids (``ref``: the id's field) and keep favorites in batches;
    ``words``: ``a_ref`` and ``refs``, what the descriptions call the id."""

    state: FavoritesState

    @classmethod
    def initial_state(cls, day: Date = TODAY) -> FavoritesState:
        return FavoritesState(favorites=saved_of(cls.name, day))

    @tool("read", failure_hint="No match means the place is not covered; try the city name without the region.")
    def search_locations(
        self, query: Annotated[str, Field(description="Place name to look up, e.g. 'Napa'")]
    ) -> dict[str, Any]:
        """Find locations by name; each has a {a_ref} that names it exactly."""
        found = _locations_matching(query, self.world.as_of)
        return {"query": query, "locations": [self._found(loc) for loc in found]}

    def _ref(self, location: Location) -> dict[str, Any]:
        raise NotImplementedError  # the provider's id of a location, as its results show it

    def _found(self, location: Location) -> dict[str, Any]:
        return {**self._ref(location), "name": location.name}

    @tool(
        "write",
        failure_hint="Part of a batch may not be saved even when the call succeeds; confirm every location with "
        "get_favorites.",
    )
    def add_favorites(
        self, locations: Annotated[list[str], Field(description="Place names to add to favorites")]
    ) -> dict[str, Any]:
        """Add one or more locations to the user's favorite locations."""
        if not locations:
            raise invalid("give at least one location")
        names = [self._place(text).name for text in locations]  # all resolve before any is saved
        return self._added(add_new(self.state.favorites, names))

    def _added(self, added: list[str]) -> dict[str, Any]:
        return {"status": "added", "added": added, "favorites_count": len(self.state.favorites)}

    @tool("readback", failure_hint="A location missing here was not saved, whatever add_favorites answered.")
    def get_favorites(self) -> dict[str, Any]:
        """List the user's favorite locations with their {refs}."""
        by_name = {location.name: location for location in tables(self.world.as_of).locations}
        return {"favorites": [{**self._ref(by_name[name]), "name": name} for name in self.state.favorites]}


class YahooWeather(_FavoritesWeather, name="yahoo_weather", title="Yahoo Weather"):
    words: ClassVar[dict[str, str]] = {"a_ref": "WOEID (Where On Earth ID)", "refs": "WOEIDs"}

    def _ref(self, location: Location) -> dict[str, Any]:
        return {"woeid": location.woeid}

    @tool(
        "read",
        failure_hint="A WOEID from another provider or a mistyped one is not found; get it from search_locations.",
    )
    def get_forecast_by_woeid(
        self, woeid: Annotated[str, Field(description="WOEID from search_locations")], days: DaysArg = 7
    ) -> dict[str, Any]:
        """Daily forecast for the location a WOEID names exactly."""
        for location in tables(self.world.as_of).locations:
            if location.woeid == woeid.strip():
                return {"woeid": location.woeid, **self._daily(location, days)}
        raise not_found("woeid", woeid)

    @tool("write", failure_hint="Confirm with get_favorites that the location is gone.")
    def remove_favorite(self, location: LocationArg) -> dict[str, Any]:
        """Remove a location from the user's favorites."""
        return self._remove(self.state.favorites, location, "favorite")


class AccuWeather(_FavoritesWeather, name="accuweather", title="AccuWeather"):
    generated_at = "2026-03-20T05:15:00Z"
    alert_prefix = "aw_"
    words: ClassVar[dict[str, str]] = {"a_ref": "location key", "refs": "location keys"}
    docs: ClassVar[dict[str, str]] = {
        "get_daily_forecast": "Daily forecast: condition, high/low (F) and chance of precipitation for each day.",
        "get_hourly_forecast": "Hour-by-hour forecast for one date (temperature, condition, chance of precipitation).",
    }
    hints: ClassVar[dict[str, str]] = {
        "get_daily_forecast": "Check generated_at and the dates covered; cross-check another provider if the data "
        "looks stale or inconsistent."
    }
    arg_types: ClassVar[dict[str, Any]] = {
        "location": LocationKeyArg,
        "locations": Annotated[list[str], Field(description="Location keys or place names to add to favorites")],
    }

    def _place(self, text: str) -> Location:
        # AccuWeather names places by location key; a plain name is accepted too
        for location in tables(self.world.as_of).locations:
            if location.accu == text.strip():
                return location
        return _location(text, self.world.as_of)

    def _ref(self, location: Location) -> dict[str, Any]:
        return {"location_key": location.accu}

    def _forecast_ref(self, location: Location) -> dict[str, Any]:
        return self._ref(location)

    def _found(self, location: Location) -> dict[str, Any]:
        return {**super()._found(location), "country": "US" if location.us else "ID"}

    def _added(self, added: list[str]) -> dict[str, Any]:
        return {"status": "ok", "added": added}

    @tool("read", failure_hint="An empty list means no active alerts there; check the location resolved correctly.")
    def get_alerts(self, location: LocationKeyArg) -> dict[str, Any]:
        """Active severe-weather alerts for a location, each with a summary."""
        return self._alerts(location)

    @tool("read", failure_hint="Ids are per provider: use an alert id from AccuWeather's get_alerts.")
    def get_alert(self, alert_id: Annotated[str, Field(description="Alert id from get_alerts")]) -> dict[str, Any]:
        """Full text of one alert: zones, river crest, instructions, issuing office."""
        return self._alert_details(alert_id)


class NWS(_Weather, name="nws", title="National Weather Service"):
    state: NoState
    generated_at = "2026-03-20T04:58:00Z"
    alert_prefix = "NWS-"
    docs: ClassVar[dict[str, str]] = {"get_hourly_forecast": "Hourly forecast for one date at a US location."}
    hints: ClassVar[dict[str, str]] = {
        "get_hourly_forecast": "The NWS covers US locations only; make sure the hours are for the date you asked."
    }

    @classmethod
    def initial_state(cls, day: Date = TODAY) -> NoState:
        return NoState()

    def _place(self, text: str) -> Location:
        location = _location(text, self.world.as_of)
        if not location.us:
            raise invalid(f"{location.name} is outside National Weather Service coverage (US only)")
        return location

    @tool(
        "read",
        failure_hint="The NWS covers US locations only; check generated_at and that the periods cover your dates.",
    )
    def get_forecast(self, location: LocationArg) -> dict[str, Any]:
        """Seven-day point forecast as named periods (Friday, Saturday, ...) with a short and a detailed text."""
        place = self._place(location)
        periods = []
        for day in forecasts(self.world.as_of)[place.key][:7]:
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
        return {"location": place.name, "generated_at": self.generated_at, "periods": periods}

    @tool("read", failure_hint="An empty list means no active alerts for the area; check the area name resolved.")
    def get_alerts(
        self, area: Annotated[str, Field(description="US city or area, e.g. 'Memphis, TN'")]
    ) -> dict[str, Any]:
        """Active watches, warnings and advisories for a US area."""
        return self._alerts(area, "area")

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
            raise invalid("give alert_id or area")
        place = self._place(area)
        active = (a for a in self._alert_table() if a.location == place.key)
        ranked = sorted(active, key=lambda a: SEVERITIES.index(a.severity))
        if not ranked:
            raise not_found("active alert for area", area)
        return _alert_full(ranked[0], self.alert_id(ranked[0]))


SERVICES = peers(WeatherCom, YahooWeather, AccuWeather, NWS)
