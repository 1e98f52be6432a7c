"""FAIL-TaLMs Inspiration tools: jokes picked by a seed and a collection of quotations
(``data/tables/jokes.jsonl``, ``quotes.jsonl``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from undertow.env_core.failtalms.shared import Row, fail, find, grouped, iso_date, read_table, seeded
from undertow.env_core.tools import tool


class Joke(Row):
    category: str
    joke: str


class Quote(Row):
    """A saying long in the public domain, in a common English rendering."""

    author: str
    quote: str


_JOKES = {
    category: [row.joke for row in rows]
    for category, rows in grouped(read_table("jokes", Joke), lambda row: row.category).items()
}
_QUOTES = [(row.author, row.quote) for row in read_table("quotes", Quote)]


@tool(
    "Inspiration",
    description=f"""A joke from a category ({", ".join(_JOKES)}). The pick is fixed by the seed: the same category
    and seed always give the same joke, a different seed usually another one.""",
)
def random_joke(
    category: Annotated[str, Field(description="The joke category, e.g. 'programming'.")],
    seed: Annotated[int, Field(description="Any whole number choosing the joke.", ge=0)],
) -> dict[str, Any]:
    name, jokes = find(_JOKES, category, "joke category")
    if seed < 0:
        fail("seed: give a whole number of 0 or more")
    index = int(seeded("joke", name, seed) * len(jokes))
    return {"category": name, "id": f"{name}-{index + 1}", "joke": jokes[index]}


@tool("Inspiration")
def quote_of_the_day(date: Annotated[str, Field(description="The day, YYYY-MM-DD.")]) -> dict[str, Any]:
    """The quote of the day for a given date, with its author. Every date has one quote, the same for everyone."""
    day = iso_date(date)
    author, text = _QUOTES[int(seeded("quote", day) * len(_QUOTES))]
    return {"date": day.isoformat(), "quote": text, "author": author}


@tool("Inspiration")
def quotes_by_author(author: Annotated[str, Field(description="The author, e.g. 'Mark Twain'.")]) -> dict[str, Any]:
    """All quotes of an author in the quotation collection (full name or surname)."""
    authors = {a: a for a, _ in _QUOTES}
    surnames = {a.split()[-1]: a for a in authors if " " in a}
    name, _ = find(authors, author, "author", surnames)
    quotes = [text for a, text in _QUOTES if a == name]
    return {"author": name, "count": len(quotes), "quotes": quotes}
