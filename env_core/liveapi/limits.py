"""What keeps a Live API-Bench call on model-written values quick and inside the protocol: a LIKE matcher that
cannot backtrack, and the length of a REST request's URL checked before it is sent."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

import httpx

from undertow.env_core.model import ToolSpec
from undertow.env_core.tools import QUERY_TIMEOUT_S

# Characters of a REST call's path and query string: what common servers and proxies take (a longer request line
# is refused by them, and past 65,536 httpx cannot even build the URL)
MAX_URL = 8_000
REST_TIMEOUT_S = QUERY_TIMEOUT_S  # seconds the REST server lets one query on the model's values run


@functools.lru_cache(maxsize=256)
def _piece(text: str) -> re.Pattern[str]:
    """A run of a LIKE pattern between two ``%``: literal characters and ``_`` (any one character)."""
    return re.compile("".join("." if c == "_" else re.escape(c) for c in text), re.DOTALL)


def like(value: str, pattern: str) -> bool:
    """Whether ``value`` matches the LIKE ``pattern`` (``%`` any run of characters, ``_`` one character; both
    already case-folded). The runs between ``%`` are placed leftmost, one after another, which finds a match
    whenever there is one: linear in the pattern's runs, where a regex of ``.*`` per ``%`` backtracks
    exponentially (36 ``%`` held a worker for over a minute)."""
    first, *middle = pattern.split("%")
    if not middle:
        return _piece(first).fullmatch(value) is not None
    *middle, last = middle
    end = len(value) - len(last)
    if end < len(first) or _piece(first).match(value) is None or _piece(last).fullmatch(value, end) is None:
        return False
    at = len(first)
    for run in middle:
        if run:
            found = _piece(run).search(value, at, end)
            if found is None:
                return False
            at = found.end()
    return True


def query_value(value: Any) -> Any:
    """An argument as a query parameter: scalars as themselves; anything else as its JSON text, for the server to
    accept or refuse."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return value
    return json.dumps(value)


def query_params(arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {name: query_value(value) for name, value in arguments.items() if value is not None}


def url_problem(spec: ToolSpec, arguments: Mapping[str, Any]) -> str | None:
    """Why a REST call cannot be sent as a GET request (its URL would be too long), or None."""
    length = len(spec.binding["path"]) + 1 + len(str(httpx.QueryParams(query_params(arguments))))
    if length <= MAX_URL:
        return None
    longest = max(arguments, key=lambda name: len(str(httpx.QueryParams(query_params({name: arguments[name]})))))
    return (
        f"the request URL would be {length} characters long, more than the {MAX_URL} the API accepts; "
        f"the longest value is '{longest}'"
    )
