"""FAIL-TaLMs Finance tools: a simulated exchange of fictional listed companies, reference exchange rates and
crypto prices, all seeded from ``data/tables/`` (stocks, currencies, coins)."""

from __future__ import annotations

import math
from datetime import date, timedelta
from typing import Annotated, Any

from pydantic import Field

from undertow.env_core.errors import close_match
from undertow.env_core.failtalms.shared import Row, fail, find, iso_date, read_table, seeded, significant, weekday_name
from undertow.env_core.tools import tool

_MARKET_FIRST, _MARKET_LAST = date(2023, 1, 2), date(2026, 3, 20)
_FX_FIRST = date(2015, 1, 1)


class Stock(Row):
    """A company listed on the simulated Harbor Exchange (fictional), with what seeds its prices."""

    symbol: str
    company: str
    sector: str
    first_close: float  # USD, on the first day of the feed
    drift: float  # yearly
    volume: int  # average shares a day


class Currency(Row):
    code: str  # ISO 4217
    usd: float  # US dollars per unit on the first day of the feed
    names: list[str]  # what people call it ("euro"), lower case


class Coin(Row):
    coin: str
    ticker: str
    usd: float  # US dollars on 2023-01-01
    drift: float  # yearly
    volatility: float


_STOCKS = {row.symbol: row for row in read_table("stocks", Stock)}
_COMPANY_ALIASES = {row.company: symbol for symbol, row in _STOCKS.items()}
_CURRENCY_ROWS = read_table("currencies", Currency)
_CURRENCIES = {row.code: row.usd for row in _CURRENCY_ROWS}
_CURRENCY_NAMES = {name: row.code for row in _CURRENCY_ROWS for name in row.names}
_COINS = {row.coin: row for row in read_table("coins", Coin)}


def _symbol(symbol: str) -> str:
    return find(_STOCKS, symbol, "stock symbol", _COMPANY_ALIASES)[0]


def _trading_day(text: str, argument: str) -> date:
    day = iso_date(text, argument, _MARKET_FIRST, _MARKET_LAST)
    if day.weekday() >= 5:
        before = day - timedelta(days=day.weekday() - 4)
        fail(
            f"{argument}: {day} is a {weekday_name(day)} and the exchange is closed; the last trading day before it "
            f"is {before}"
        )
    return day


def _close(symbol: str, day: date) -> float:
    stock = _STOCKS[symbol]
    years = (day - _MARKET_FIRST).days / 365.25
    wave = 0.08 * math.sin(2 * math.pi * years / 1.3 + 6.28 * seeded(symbol))
    return round(
        stock.first_close * math.exp(stock.drift * years + wave) * (1 + 0.015 * (2 * seeded(symbol, day) - 1)), 2
    )


@tool(
    "Finance",
    description=f"""Daily quote of a stock listed on the Harbor Exchange (end-of-day data, {_MARKET_FIRST} to
    {_MARKET_LAST}; the exchange trades Monday to Friday). Returns the company, open, high, low and close prices in
    USD and the volume. Listed: {", ".join(f"{s} ({row.company})" for s, row in _STOCKS.items())}.""",
)
def stock_quote(
    symbol: Annotated[str, Field(description="The ticker symbol, e.g. 'NVTK' (a listed company's name also works).")],
    date: Annotated[str, Field(description="The trading day, YYYY-MM-DD.")],
) -> dict[str, Any]:
    ticker = _symbol(symbol)
    day = _trading_day(date, "date")
    close = _close(ticker, day)
    opening = round(close * (1 + 0.012 * (2 * seeded(ticker, day, "open") - 1)), 2)
    high = round(max(opening, close) * (1 + 0.01 * seeded(ticker, day, "high")), 2)
    low = round(min(opening, close) * (1 - 0.01 * seeded(ticker, day, "low")), 2)
    volume = int(_STOCKS[ticker].volume * (0.6 + 0.8 * seeded(ticker, day, "volume")))
    return {
        "symbol": ticker,
        "company": _STOCKS[ticker].company,
        "date": day.isoformat(),
        "open": opening,
        "high": high,
        "low": low,
        "close": close,
        "volume": volume,
        "currency": "USD",
    }


@tool("Finance")
def price_history(
    symbol: Annotated[str, Field(description="The ticker symbol, e.g. 'ORBT'.")],
    start: Annotated[str, Field(description="The first day, YYYY-MM-DD.")],
    end: Annotated[str, Field(description="The last day, YYYY-MM-DD.")],
) -> dict[str, Any]:
    """Closing prices of a Harbor Exchange stock for every trading day from start to end (both included, at most 92 days
    apart), with the lowest and highest close and the percent change from the first close to the last."""
    ticker = _symbol(symbol)
    first = iso_date(start, "start", _MARKET_FIRST, _MARKET_LAST)
    last = iso_date(end, "end", _MARKET_FIRST, _MARKET_LAST)
    if last < first:
        fail(f"end ({last}) is before start ({first}); swap them")
    if (last - first).days > 92:
        fail(f"the range spans {(last - first).days} days; ask for at most 92 days at a time")
    days = [first + timedelta(days=i) for i in range((last - first).days + 1)]
    trading = [d for d in days if d.weekday() < 5]
    if not trading:
        fail(f"no trading day between {first} and {last} (a weekend); widen the range")
    values = [_close(ticker, d) for d in trading]
    return {
        "symbol": ticker,
        "start": first.isoformat(),
        "end": last.isoformat(),
        "trading_days": len(trading),
        "closes": [{"date": d.isoformat(), "close": v} for d, v in zip(trading, values, strict=True)],
        "lowest_close": min(values),
        "highest_close": max(values),
        "change_percent": round((values[-1] - values[0]) / values[0] * 100, 2),
    }


def _currency(code: str, argument: str) -> str:
    text = code.strip()
    if text.upper() in _CURRENCIES:
        return text.upper()
    found = _CURRENCY_NAMES.get(text.casefold().removesuffix("s"))
    if found is None:
        hint = close_match(text.upper(), _CURRENCIES) or f"known currencies: {', '.join(_CURRENCIES)}"
        fail(f"{argument}: unknown currency {code!r}; {hint}")
    return found


def _usd_value(currency: str, day: date) -> float:
    if currency == "USD":
        return 1.0
    years = (day - _FX_FIRST).days / 365.25
    wave = 0.04 * math.sin(2 * math.pi * years / 2.7 + 6.28 * seeded(currency))
    return _CURRENCIES[currency] * (1 + wave + 0.006 * (2 * seeded(currency, day) - 1))


def _rate(base: str, quote: str, day: date) -> float:
    return significant(_usd_value(base, day) / _usd_value(quote, day))


@tool(
    "Finance",
    description=f"""Reference exchange rate on a date ({_FX_FIRST} to {_MARKET_LAST}): how many units of the quote
    currency one unit of the base currency buys (6 significant digits). Currencies are ISO codes:
    {", ".join(_CURRENCIES)}.""",
)
def exchange_rate(
    base: Annotated[str, Field(description="The currency to convert from, e.g. 'EUR'.")],
    quote: Annotated[str, Field(description="The currency to convert to, e.g. 'JPY'.")],
    date: Annotated[str, Field(description="The day of the rate, YYYY-MM-DD.")],
) -> dict[str, Any]:
    source, target = _currency(base, "base"), _currency(quote, "quote")
    day = iso_date(date, "date", _FX_FIRST, _MARKET_LAST)
    return {"base": source, "quote": target, "date": day.isoformat(), "rate": _rate(source, target, day)}


@tool("Finance")
def convert_currency(
    amount: Annotated[float, Field(description="The amount in the base currency.", ge=0)],
    base: Annotated[str, Field(description="The currency of the amount, e.g. 'USD'.")],
    quote: Annotated[str, Field(description="The currency to convert to, e.g. 'GBP'.")],
    date: Annotated[str, Field(description="The day whose rate to use, YYYY-MM-DD.")],
) -> dict[str, Any]:
    """Convert an amount of money between currencies at the reference rate of a date (the rate exchange_rate gives for
    that day). Returns the rate used and the converted amount rounded to 2 decimals."""
    if amount < 0 or amount > 1e12:
        fail("amount: give an amount from 0 to 1000000000000")
    rate = exchange_rate(base, quote, date)
    return {**rate, "amount": amount, "converted": round(amount * rate["rate"], 2)}


def _coin_price(coin: str, day: date) -> float:
    row = _COINS[coin]
    years = (day - date(2023, 1, 1)).days / 365.25
    wave = row.volatility * math.sin(2 * math.pi * years / 1.7 + 6.28 * seeded(coin))
    return significant(row.usd * math.exp(row.drift * years + wave) * (1 + 0.03 * (2 * seeded(coin, day) - 1)), 6)


@tool(
    "Finance",
    description=f"""Daily reference price of a cryptocurrency in US dollars ({_FX_FIRST} to {_MARKET_LAST}; crypto
    trades every day), with the change from the day before in percent. Coins:
    {", ".join(f"{c} ({row.ticker})" for c, row in _COINS.items())}.""",
)
def crypto_price(
    coin: Annotated[str, Field(description="The coin's name or ticker, e.g. 'bitcoin' or 'ETH'.")],
    date: Annotated[str, Field(description="The day, YYYY-MM-DD.")],
) -> dict[str, Any]:
    name, _ = find(_COINS, coin, "coin", {row.ticker: c for c, row in _COINS.items()})
    day = iso_date(date, "date", _FX_FIRST, _MARKET_LAST)
    price, before = _coin_price(name, day), _coin_price(name, day - timedelta(days=1))
    return {
        "coin": name,
        "symbol": _COINS[name].ticker,
        "date": day.isoformat(),
        "price_usd": price,
        "change_24h_percent": round((price - before) / before * 100, 2),
    }
