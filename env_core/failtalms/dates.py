"""FAIL-TaLMs Calendar tools: weekdays, date arithmetic and the public holidays of six countries (their rules in
``data/tables/holidays.jsonl``)."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any

from pydantic import Field

from undertow.env_core.failtalms.shared import (
    ALIASES,
    Row,
    fail,
    grouped,
    in_range,
    iso_date,
    lookup_key,
    read_table,
    weekday_name,
)
from undertow.env_core.tools import tool

_Day = date  # tools take an argument named ``date``, which shadows the class inside them

_HOLIDAY_YEARS = (2022, 2030)
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


class Holiday(Row):
    """A public holiday of a country and the rule that dates it: MM-DD (fixed), "N WEEKDAY MM" (the Nth weekday of
    the month; N = -1: the last), easter+N / easter-N, "monday-before MM-DD", "equinox spring|autumn" (Japan).
    Calendar dates, without weekend substitutes."""

    country: str
    name: str
    rule: str


_HOLIDAYS = grouped(read_table("holidays", Holiday), lambda row: row.country)


def _easter(year: int) -> date:
    """Gregorian Easter Sunday (the anonymous Gregorian algorithm)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    ell = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * ell) // 451
    month, day = divmod(h + ell - 7 * m + 114, 31)
    return date(year, month, day + 1)


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> date:
    if n > 0:
        first = date(year, month, 1)
        return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    last = (date(year + month // 12, month % 12 + 1, 1)) - timedelta(days=1)
    return last - timedelta(days=(last.weekday() - weekday) % 7)


def _rule_date(rule: str, year: int) -> date:
    parts = rule.split()
    if rule.startswith("easter"):
        return _easter(year) + timedelta(days=int(rule[6:]))
    if parts[0] == "equinox":  # the usual approximation, good for 1980-2099
        base = 20.8431 if parts[1] == "spring" else 23.2488
        day = int(base + 0.242194 * (year - 1980) - (year - 1980) // 4)
        return date(year, 3 if parts[1] == "spring" else 9, day)
    if parts[0] == "monday-before":
        limit = date(year, *map(int, parts[1].split("-")))
        return limit - timedelta(days=(limit.weekday() - 0) % 7 or 7)
    if len(parts) == 3:
        return _nth_weekday(year, int(parts[2]), _WEEKDAYS.index(parts[1]), int(parts[0]))
    return date(year, *map(int, rule.split("-")))


def _holidays(country: str, year: int) -> list[tuple[date, str]]:
    return sorted((_rule_date(holiday.rule, year), holiday.name) for holiday in _HOLIDAYS[country])


def _holiday_country(country: str) -> str:
    index = {lookup_key(k): k for k in _HOLIDAYS} | {
        lookup_key(a): k for a, k in ALIASES["country"].items() if k in _HOLIDAYS
    }
    found = index.get(lookup_key(country))
    if found is None:
        fail(f"no holiday calendar for {country!r}; calendars cover: {', '.join(_HOLIDAYS)}")
    return found


@tool("Calendar")
def day_of_week(date: Annotated[str, Field(description="The date, YYYY-MM-DD.")]) -> dict[str, Any]:
    """Tell the day of the week of a date, with its ISO week number and day of the year."""
    day = iso_date(date)
    return {
        "date": day.isoformat(),
        "day_of_week": weekday_name(day),
        "iso_week": day.isocalendar()[1],
        "day_of_year": day.timetuple().tm_yday,
    }


@tool("Calendar")
def days_between(
    start: Annotated[str, Field(description="The first date, YYYY-MM-DD.")],
    end: Annotated[str, Field(description="The second date, YYYY-MM-DD.")],
) -> dict[str, Any]:
    """Count the days from a start date to an end date (negative when the end comes first). Also returns the whole weeks
    and the number of weekdays (Monday to Friday) from the start date up to, not including, the end date."""
    first, last = iso_date(start, "start"), iso_date(end, "end")
    days = (last - first).days
    low, high = sorted((first, last))
    full_weeks, extra = divmod((high - low).days, 7)
    weekdays = full_weeks * 5 + sum((low + timedelta(days=i)).weekday() < 5 for i in range(extra))
    return {
        "start": first.isoformat(),
        "end": last.isoformat(),
        "days": days,
        "weeks": abs(days) // 7,
        "weekdays": weekdays,
    }


@tool("Calendar")
def add_days(
    date: Annotated[str, Field(description="The starting date, YYYY-MM-DD.")],
    days: Annotated[int, Field(description="Days to add; negative values count backwards.", ge=-100000, le=100000)],
) -> dict[str, Any]:
    """Add a number of days (negative to go back) to a date. Returns the resulting date and its day of the week."""
    start = iso_date(date)
    in_range(days, "days", -100000, 100000)
    try:
        result = start + timedelta(days=days)
    except OverflowError:
        fail("days: the result falls outside the years 1 to 9999")
    return {"date": start.isoformat(), "days": days, "result": result.isoformat(), "day_of_week": weekday_name(result)}


@tool(
    "Calendar",
    description=f"""List the national public holidays of a country in a year, in date order. Covers the United
    States, the United Kingdom (England and Wales), France, Germany (nationwide days), Japan and Canada (federal),
    years {_HOLIDAY_YEARS[0]} to {_HOLIDAY_YEARS[1]}. Dates are the holidays' own dates, without weekend
    substitutes.""",
)
def public_holidays(
    country: Annotated[str, Field(description="The country's name or code, e.g. 'France' or 'US'.")],
    year: Annotated[int, Field(description="The year.", ge=_HOLIDAY_YEARS[0], le=_HOLIDAY_YEARS[1])],
) -> dict[str, Any]:
    name = _holiday_country(country)
    in_range(year, "year", *_HOLIDAY_YEARS)
    rows = [{"date": d.isoformat(), "name": n, "day_of_week": weekday_name(d)} for d, n in _holidays(name, year)]
    return {"country": name, "year": year, "count": len(rows), "holidays": rows}


@tool("Calendar")
def next_holiday(
    country: Annotated[str, Field(description="The country's name or code, e.g. 'Japan' or 'UK'.")],
    date: Annotated[str, Field(description="The date to search from, YYYY-MM-DD.")],
) -> dict[str, Any]:
    """Find the first public holiday of a country on or after a date (same coverage as public_holidays). Returns its
    name, date, weekday and the number of days from the given date."""
    name = _holiday_country(country)
    start = iso_date(date, first=_Day(_HOLIDAY_YEARS[0], 1, 1), last=_Day(_HOLIDAY_YEARS[1], 12, 31))
    for year in (start.year, start.year + 1):
        for day, holiday in _holidays(name, year):
            if day >= start:
                return {
                    "country": name,
                    "name": holiday,
                    "date": day.isoformat(),
                    "day_of_week": weekday_name(day),
                    "days_away": (day - start).days,
                }
    fail(f"no holiday found after {start}")  # unreachable: every calendar has New Year's Day
