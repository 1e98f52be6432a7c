"""What the FAIL-TaLMs tools of every domain share: their seed tables, read from ``data/tables/``, and the helpers
that check arguments and make the seeded daily values.

A table is a JSONL file of rows (validated by a pydantic :class:`Row` model, :func:`read_table`) or, where a table
is a mapping (aliases, factors), a JSON object (:func:`read_mapping`); a malformed one is a
:class:`~undertow.env_core.errors.DataError` naming the file, the line where it can tell, and the field.

Values that vary by day (prices, weather, flight delays) are a fixed function of their keys (:func:`seeded`), so
every call with the same arguments returns the same result on every machine. No tool reads the clock: a date is
always an argument, and the feeds' "now" is the fixed :data:`REFERENCE_DAY`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from datetime import date
from pathlib import Path
from typing import NoReturn, TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from undertow.env_core.content import data_dir, read_records
from undertow.env_core.errors import DataError, did_you_mean
from undertow.env_core.tools import ToolExecutionError

T = TypeVar("T")
R = TypeVar("R", bound="Row")

TABLES = data_dir(__file__) / "tables"
REFERENCE_DAY = date(2026, 3, 20)  # the feeds' "today": current weather, forecasts and the last flight records


class Row(BaseModel):
    """One row of a seed table: exactly its fields, with JSON's types (no text read as a number)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def read_table(name: str, model: type[R], folder: Path | None = None) -> list[R]:
    """The rows of ``<folder>/<name>.jsonl`` (the family's ``data/tables/`` by default)."""
    return read_records((folder or TABLES) / f"{name}.jsonl", model)


def read_mapping(name: str, kind: type[T], folder: Path | None = None) -> T:
    """The JSON object of ``<folder>/<name>.json``, validated as ``kind`` (``dict[str, float]``, ...)."""
    path = (folder or TABLES) / f"{name}.json"
    try:
        value = json.loads(path.read_bytes())
    except OSError as exc:
        raise DataError(f"cannot read the data file: {exc.strerror or exc}", file=str(path)) from exc
    except ValueError as exc:  # not UTF-8 (UnicodeDecodeError) or not JSON (JSONDecodeError, which has a line)
        problem = exc.msg if isinstance(exc, json.JSONDecodeError) else exc
        raise DataError(f"not JSON ({problem})", file=str(path), line=getattr(exc, "lineno", None)) from exc
    try:
        return TypeAdapter(kind).validate_python(value, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or None
        raise DataError(first["msg"], file=str(path), field=field) from exc


# other names of a country, a city, a food, a piece of music or a chord suffix, by what they name
ALIASES = read_mapping("aliases", dict[str, dict[str, str]])


def grouped(rows: Iterable[R], key: Callable[[R], str]) -> dict[str, list[R]]:
    """Rows by ``key``, in the order each key first occurs."""
    groups: dict[str, list[R]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return groups


def fail(message: str) -> NoReturn:
    """Stop a tool with an error the agent reads."""
    raise ToolExecutionError(message)


def lookup_key(name: str) -> str:
    """A lookup key: accents, case, spaces and punctuation dropped ("São Paulo" -> "saopaulo")."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", plain.casefold())


def find(table: Mapping[str, T], name: str, what: str, aliases: Mapping[str, str] | None = None) -> tuple[str, T]:
    """The (display name, row) of ``table`` that ``name`` means, ignoring case, accents and punctuation; an
    unknown name raises with the closest known one as a hint."""
    index = {lookup_key(k): k for k in table}
    index.update({lookup_key(a): k for a, k in (aliases or {}).items()})
    for candidate in (name, name.split(",")[0]):  # "Paris, France" -> "Paris"
        found = index.get(lookup_key(candidate))
        if found is not None:
            return found, table[found]
    hint = did_you_mean(name.strip().title() if name.islower() else name.strip(), table)
    fail(f"unknown {what} {name!r}" + (f"; {hint}" if hint else ""))


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def iso_date(text: str, argument: str = "date", first: date | None = None, last: date | None = None) -> date:
    """An ISO date argument, optionally within [first, last]."""
    try:
        if not _ISO_DATE.match(text.strip()):
            raise ValueError
        day = date.fromisoformat(text.strip())
    except ValueError:
        fail(f"{argument}: {text!r} is not a date; write it as YYYY-MM-DD, e.g. 2026-07-04")
    if (first and day < first) or (last and day > last):
        fail(f"{argument}: {day} is outside the data this tool has ({first} to {last})")
    return day


def seeded(*parts: object) -> float:
    """A number in [0, 1) fixed by ``parts``: the seeded "randomness" of every daily value."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def rounded(x: float) -> float:
    """Two decimals, or four significant digits for small magnitudes (0.01235)."""
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, max(2, 3 - math.floor(math.log10(abs(x))))) + 0.0  # never -0.0


def significant(x: float, digits: int = 6) -> float:
    """``x`` to ``digits`` significant digits."""
    return float(f"{x:.{digits}g}")


def weekday_name(day: date) -> str:
    """ "Monday", ..., "Sunday"."""
    return day.strftime("%A")


def in_range(value: int, argument: str, low: int, high: int) -> int:
    """A whole-number argument from ``low`` to ``high``."""
    if not low <= value <= high:
        fail(f"{argument}: {value} is out of range; give a whole number from {low} to {high}")
    return value


def positive(value: float, argument: str, high: float = 1e9) -> float:
    """A number argument above 0 and at most ``high``."""
    if not 0 < value <= high:
        fail(f"{argument}: {value} is out of range; give a number above 0 and at most {high:g}")
    return float(value)
