"""Answer normalization and matching against gold records.

Agents answer in many shapes: the records themselves, just the values (``["Sofia"]``), a scalar (``302000``),
Python reprs, JSON inside a code fence, or prose. All are reduced to a multiset of normalized scalar values and
compared with the gold records' values, so that a functionally equivalent answer is not penalized for its form.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections import Counter
from typing import Any

_NUMBER = re.compile(r"^[+-]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$")
_NUMBER_IN_TEXT = re.compile(r"(?<![\w.])[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])")
_FENCE = re.compile(r"```(?:json|python)?\s*(.*?)```", re.DOTALL)


def normalize_scalar(value: Any) -> str:
    """Canonical text of one scalar: numbers rounded to 4 decimals (3 == 3.0 == "3,000"/1000 style), text casefolded
    with whitespace collapsed, None as ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _number(float(value))
    text = " ".join(str(value).split()).casefold()
    if _NUMBER.match(text):
        return _number(float(text.replace(",", "")))
    return text


def _number(x: float) -> str:
    if not math.isfinite(x):  # json.loads accepts NaN and Infinity; they match only themselves
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    rounded = round(x, 4)
    return str(int(rounded)) if rounded == int(rounded) else repr(rounded)


def flatten(value: Any) -> list[Any]:
    """All scalar values inside nested lists and dicts (dict keys are names, not values, and are dropped)."""
    if isinstance(value, dict):
        return [v for item in value.values() for v in flatten(item)]
    if isinstance(value, list | tuple | set):
        return [v for item in value for v in flatten(item)]
    return [value]


def parse_structured(text: str) -> Any | None:
    """The JSON (or Python literal) an answer holds, if any: whole text, a fenced block, or the first [...] / {...}."""
    candidates = [text.strip()] + [m.strip() for m in _FENCE.findall(text)]
    for opener, closer in ("[]", "{}"):
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            candidates.append(text[start : end + 1])
    for candidate in candidates:
        if not candidate:
            continue
        for parse in (json.loads, ast.literal_eval):
            try:
                value = parse(candidate)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(value, list | dict | int | float | str):
                return value
    return None


def answer_matches(predicted: Any, gold: Any, ordered: bool = False) -> bool:
    """Whether ``predicted`` (a string from the agent, or a structured value) carries exactly the gold values.

    Structured answers must hold the same multiset of values as the gold records — in the same order when
    ``ordered`` (the gold query sorts its rows). A bare value equals a one-record list holding it; keys are not
    compared, so original keys and renamed ones both count. Numbers match to 4 decimals. Prose must mention every
    gold value (numbers as numbers, text as whole words), in any order. An empty or missing answer never matches;
    an empty gold answer matches only an empty structured answer.
    """
    if predicted is None:
        return False
    expected = Counter(normalize_scalar(v) for v in flatten(gold))
    structured = parse_structured(predicted) if isinstance(predicted, str) else predicted
    if isinstance(structured, list | dict) or (structured is not None and not isinstance(predicted, str)):
        values = [normalize_scalar(v) for v in flatten(structured)]
        if ordered:
            return values == [normalize_scalar(v) for v in flatten(gold)]
        return Counter(values) == expected
    if not isinstance(predicted, str) or not predicted.strip():
        return False
    if not expected:
        return False
    text = " ".join(predicted.split()).casefold()
    numbers = {normalize_scalar(m) for m in _NUMBER_IN_TEXT.findall(text)}
    for value in expected:
        if _NUMBER.match(value) or value.lstrip("-").replace(".", "", 1).isdigit():
            if value not in numbers:
                return False
        elif not re.search(r"(?<!\w)" + re.escape(value) + r"(?!\w)", text):
            return False
    return True
