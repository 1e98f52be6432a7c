"""The one cleaning step for model-controlled data: what a model reply, kernel output, a cell's error, a tool
argument or a tool result carries passes here before it enters a trajectory (the fields of ``env_core.model`` that
hold such data are typed with :data:`ModelText` and :data:`ModelValue`).

Nothing a model writes may make the store, the scorer, the report or the terminal fail, so a value that comes out:

- holds no lone surrogate (a JSON escape such as ``"\\ud800"`` decodes to one; UTF-8 cannot carry it): each is
  replaced by U+FFFD;
- holds no string longer than its field's cap: the rest is cut and a visible marker says how much (a tool call's
  arguments are also capped as a whole);
- is nested at most :data:`MAX_DEPTH` containers deep: a deeper container is replaced by a marker string;
- is made of JSON types only (dicts with string keys, lists, strings, numbers, booleans, None): tuples and sets
  become lists, anything else its ``str``; integers too long to print in decimal (Python refuses more than 4,300
  digits) become a marker.

The walk is iterative: a value nested 100,000 deep is cut, not a ``RecursionError``.
"""

from __future__ import annotations

import json
import re
import sys
from functools import partial
from typing import Annotated, Any

from pydantic import AfterValidator

# Containers deeper than this are replaced by a marker: no legitimate answer, argument or tool result nests as far,
# and every recursive reader of the value (scorers, JSON encoders, the terminal) stays far from its limit.
MAX_DEPTH = 64
# Characters kept of one string: answers, replies and tool results (a query's rows as text stay far below it) ...
MAX_TEXT = 1_000_000
# ... and of one string inside a tool call's arguments or a tool error's message: no real argument comes near it,
# and 256 calls in one cell, each carrying a 1 MiB argument, must not write hundreds of MB of trace.
MAX_ARGUMENT = 10_000
MAX_ARGUMENTS_JSON = 100_000  # and of a tool call's arguments as a whole, as JSON text
ARGUMENTS_CUT = "[arguments cut]"  # the one key of arguments cut as a whole: no parameter can have this name
_SURROGATE = re.compile("[\ud800-\udfff]")
# the longest integer whose decimal text Python will produce (sys.int_info; 0 means no limit)
_MAX_DIGITS = sys.get_int_max_str_digits() or 0


def cut_marker(dropped: int) -> str:
    return f"…[{dropped:,} more characters cut]"


def clean_text(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` with lone surrogates replaced and at most ``limit`` characters kept (then a marker)."""
    if len(text) > limit:
        # the marker fits inside the limit, so that cleaning again (a stored trajectory read back) changes nothing
        keep = max(limit - len(cut_marker(len(text))), 0)
        text = text[:keep] + cut_marker(len(text) - keep)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _SURROGATE.sub("\ufffd", text)
    return text


def capped(text: str, limit: int = 200) -> str:
    """A short quotation of model text for a message (a refusal, an error): its first ``limit`` characters."""
    if len(text) <= limit:
        return clean_text(text)
    return clean_text(text[:limit]) + f"… ({len(text):,} characters)"


def _integer(value: int) -> int | str:
    # past this bit length the decimal text may be longer than Python prints (3.32 bits a digit); only then try
    if _MAX_DIGITS and value.bit_length() > _MAX_DIGITS * 3.3:
        try:
            str(value)
        except ValueError:
            return f"[an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits: cut]"
    return value


def clean_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool call's arguments as recorded: cleaned, each string cut at :data:`MAX_ARGUMENT`, and the whole at
    :data:`MAX_ARGUMENTS_JSON` characters of JSON (past it, the one key :data:`ARGUMENTS_CUT` says so), so that
    256 calls in a cell, each as large as a kernel message may be, cannot write hundreds of MB of trace."""
    cleaned = clean_value(arguments, MAX_ARGUMENT)
    text = json.dumps(cleaned, ensure_ascii=False, default=str)
    if len(text) <= MAX_ARGUMENTS_JSON:
        return cleaned  # type: ignore[no-any-return]
    # no tool runs on these (env_core.environment refuses them): the record says why, and how they began
    return {
        ARGUMENTS_CUT: f"the arguments are {len(text):,} characters of JSON, more than the {MAX_ARGUMENTS_JSON:,} "
        f"a call may carry; they began: {capped(text)}"
    }


def _scalar(value: Any, limit: int) -> Any:
    if value is None or isinstance(value, bool | float):
        return value
    if isinstance(value, int):
        return _integer(value) if value.bit_length() > 64 else value
    return clean_text(value if isinstance(value, str) else str(value), limit)


def clean_value(value: Any, limit: int = MAX_TEXT) -> Any:
    """A JSON-typed copy of ``value`` within the caps above (``limit``: characters kept of each string)."""
    if not isinstance(value, dict | list | tuple | set | frozenset):
        return _scalar(value, limit)
    deeper = f"[nested deeper than {MAX_DEPTH} levels: cut]"
    root: list[Any] = []
    # (the source container, the copy it fills, its depth): no recursion, whatever the depth
    stack: list[tuple[Any, Any, int]] = [(value, root, 1)]
    out: Any = None
    while stack:
        source, target, depth = stack.pop()
        copy: dict[str, Any] | list[Any] = {} if isinstance(source, dict) else []
        if target is root:
            out = copy
        else:
            container, key = target
            container[key] = copy
        if isinstance(copy, dict):
            items: Any = ((clean_text(str(k), limit), v) for k, v in source.items())
        else:
            copy.extend([None] * len(source))
            items = enumerate(source)
        for key, item in items:
            kind = type(item)
            if kind is str:  # the common cases first: this runs on every tool result
                copy[key] = clean_text(item, limit)
            elif kind is int or kind is float or item is None or kind is bool:
                copy[key] = _scalar(item, limit)
            elif isinstance(item, dict | list | tuple | set | frozenset):
                if depth >= MAX_DEPTH:
                    copy[key] = deeper
                else:
                    stack.append((item, (copy, key), depth + 1))
            else:
                copy[key] = _scalar(item, limit)
    return out


# Field types of the trajectory's models (env_core.model): the cleaning runs whenever such a field is set
ModelText = Annotated[str, AfterValidator(clean_text)]
ArgumentText = Annotated[str, AfterValidator(partial(clean_text, limit=MAX_ARGUMENT))]
ModelValue = Annotated[Any, AfterValidator(clean_value)]
ArgumentValue = Annotated[dict[str, Any], AfterValidator(clean_arguments)]
ModelRecord = Annotated[dict[str, Any], AfterValidator(clean_value)]
