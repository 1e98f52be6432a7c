"""SQLite's value semantics, which the SLOT and SEL operations follow so that a gold sequence compiled from a SQL
query returns what the query returns: text conversion, comparison with numeric and text affinity, ORDER BY's
storage-class order, LIKE, aggregation (NULLs skipped, exact integer sums) and the text and ROUND functions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from undertow.env_core.liveapi.limits import like
from undertow.env_core.liveapi.vocabulary import AGGREGATIONS, CONDITIONS, TRANSFORMS
from undertow.env_core.tools import ToolExecutionError

# A text SQLite's numeric affinity turns into a number: an integer or real literal, blanks around it allowed (one
# parse of each: \d+\.?\d* would backtrack quadratically over a long run of digits).
_NUMERIC_TEXT = re.compile(r"\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*")
_INTEGER_TEXT = re.compile(r"\s*[+-]?\d+\s*")
_NUMERIC_PREFIX = re.compile(r"\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_INT64 = (-(2**63), 2**63 - 1)


def _real_text(value: float) -> str:
    """A REAL as SQLite writes it as text (``%!.15g``: ``100.0``, ``0.3``, ``1.0e+20``)."""
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    text = f"{value:.15g}"
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}e{exponent}" if exponent else mantissa


def sqlite_text(value: Any) -> str:
    """A non-NULL value converted to text the way SQLite converts it (for LIKE, SUBSTR, LOWER, text comparison)."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _real_text(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _numeric_text(text: str) -> int | float | None:
    """The number a well-formed numeric text stands for under numeric affinity, else None."""
    if not _NUMERIC_TEXT.fullmatch(text):
        return None
    if _INTEGER_TEXT.fullmatch(text):
        number = int(text)
        if _INT64[0] <= number <= _INT64[1]:
            return number
    return float(text)


def _real(value: Any) -> float:
    """A value read as a double (SQLite's ``sqlite3_value_double``: the numeric prefix of a text, else 0.0)."""
    if isinstance(value, int | float):
        return float(value)
    match = _NUMERIC_PREFIX.match(sqlite_text(value))
    return float(match.group()) if match else 0.0


def storage_class_rank(value: Any) -> int:
    """SQLite's storage-class order: NULL < numbers < text < blob."""
    if value is None:
        return 0
    if isinstance(value, int | float):
        return 1
    if isinstance(value, str):
        return 2
    return 3


def sort_key(value: Any) -> tuple[int, Any]:
    """A key that orders values as SQLite's ORDER BY does (BINARY collation for text)."""
    return (storage_class_rank(value), value if value is not None else 0)


def compare(value: Any, argument: Any) -> int | None:
    """SQLite's comparison of a column value with a literal: -1, 0 or 1, or None when either side is NULL.

    A text literal that reads as a number is compared as one with a numeric value (numeric affinity); a numeric
    literal is compared as text with a text value (text affinity)."""
    if value is None or argument is None:
        return None
    if isinstance(argument, bool):
        argument = int(argument)
    if isinstance(value, int | float):
        if isinstance(argument, str):
            number = _numeric_text(argument)
            if number is None:
                return -1  # numbers sort before text
            argument = number
        elif isinstance(argument, bytes):
            return -1
    elif isinstance(value, str):
        if isinstance(argument, int | float):
            argument = sqlite_text(argument)
        elif isinstance(argument, bytes):
            return -1
    elif not isinstance(argument, bytes):  # a blob sorts after everything else
        return 1
    return int(value > argument) - int(value < argument)


def _ascii_lower(text: str) -> str:
    # SQLite's LIKE and LOWER fold ASCII letters only
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def matches(value: Any, condition: str, argument: Any) -> bool:
    """Whether a value satisfies a filter condition (a NULL on either side never does, as in SQL)."""
    if value is None or argument is None:
        return False
    if condition == "contains":
        return _ascii_lower(sqlite_text(argument)) in _ascii_lower(sqlite_text(value))
    if condition == "like":
        return like(_ascii_lower(sqlite_text(value)), _ascii_lower(sqlite_text(argument)))
    order = compare(value, argument)
    assert order is not None
    if condition == "equal_to":
        return order == 0
    if condition == "not_equal_to":
        return order != 0
    if condition == "greater_than":
        return order > 0
    if condition == "less_than":
        return order < 0
    if condition == "greater_than_equal_to":
        return order >= 0
    if condition == "less_than_equal_to":
        return order <= 0
    raise ToolExecutionError(f"unknown condition '{condition}': use one of {', '.join(CONDITIONS)}")


def _sum_number(value: Any) -> tuple[int | float, bool]:
    """A value as SUM reads it, and whether it is exact (an integer)."""
    if isinstance(value, int):
        return value, True
    if isinstance(value, float):
        return value, False
    if isinstance(value, str):
        number = _numeric_text(value)
        if number is not None:
            return number, isinstance(number, int)
    return _real(value), False


def aggregate_values(rows: Sequence[Mapping[str, Any]], aggregation: str, key: str | None) -> Any:
    """One aggregate over rows, as SQLite computes it (NULLs skipped; over no values: count 0, the rest NULL)."""
    if aggregation == "count" and key is None:
        return len(rows)
    if key is None:
        raise ToolExecutionError(f"aggregation '{aggregation}' needs a key_name: only count can count rows")
    values = [row.get(key) for row in rows]
    values = [v for v in values if v is not None]
    if aggregation == "count":
        return len(values)
    if aggregation == "count_distinct":
        return len(set(values))  # Python's equality is SQLite's here: 1 == 1.0, text is case-sensitive
    if aggregation in ("min", "max"):
        if not values:
            return None
        return min(values, key=sort_key) if aggregation == "min" else max(values, key=sort_key)
    if aggregation in ("sum", "mean"):
        if not values:
            return None
        numbers = [_sum_number(v) for v in values]
        # SQLite adds doubles in row order (approximate result) alongside an exact integer sum
        total = 0.0
        for number, _ in numbers:
            total += float(number)
        if aggregation == "mean":
            return total / len(numbers)
        if all(exact for _, exact in numbers):
            exact_total = sum(int(n) for n, _ in numbers)
            if not _INT64[0] <= exact_total <= _INT64[1]:
                raise ToolExecutionError("sum failed: integer overflow")
            return exact_total
        return total
    raise ToolExecutionError(f"unknown aggregation '{aggregation}': use one of {', '.join(AGGREGATIONS)}")


def _sqlite_round(value: float, digits: int) -> float:
    digits = max(0, min(digits, 30))
    if digits == 0 and abs(value) < 2**63 - 1:
        whole = float(int(abs(value) + 0.5))  # halves away from zero, as SQLite's ROUND
        return math.copysign(whole, value) if whole else 0.0
    if not math.isfinite(value):
        return value
    # SQLite prints the value with the wanted digits and reads it back: decimal rounding, halves away from zero
    return float(Decimal(repr(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def transform_value(value: Any, operation: str, args: Mapping[str, Any]) -> Any:
    """One value changed by a transform (NULL stays NULL; text functions read numbers as their text)."""
    if value is None:
        return None
    if operation == "substring":
        return sqlite_text(value)[args["start_index"] : args.get("end_index")]
    if operation == "lower":
        return _ascii_lower(sqlite_text(value))
    if operation == "upper":
        return sqlite_text(value).translate(_ASCII_UPPER)
    if operation == "round":
        return _sqlite_round(_real(value), int(args.get("digits", 0)))
    raise ToolExecutionError(f"unknown operation_type '{operation}': use one of {', '.join(TRANSFORMS)}")
