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
from collections.abc import Sequence
from decimal import Decimal, localcontext
from typing import Any, Literal, TypeVar

from undertow.env_core.sqlgold import same_rows
from undertow.env_core.text import fenced_blocks, strip_fence
from undertow.env_core.untrusted import MAX_DEPTH, clean_value

_NUMBER = re.compile(r"^[+-]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$")
_NUMBER_IN_TEXT = re.compile(r"(?<![\w.])[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])")


class UnscorableAnswer(ValueError):
    """An answer that cannot be compared with gold (nested deeper than any answer can be): a wrong answer, the
    model's doing (the runner records it with the detail ``unscorable_answer``)."""


# Beyond this magnitude a float no longer holds every integer: such numbers are compared exactly, as text
_EXACT_FROM = 2**53


def normalize_scalar(value: Any) -> str:
    """Canonical text of one scalar: numbers rounded to 4 decimals (3 == 3.0 == "3,000"/1000 style), text casefolded
    with whitespace collapsed, None as ``null``. Numbers beyond 2**53 (past what a float holds exactly, and past
    its range) are compared exactly: integers as integers, others as decimals rounded to 4 places."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        # an integer is exact as its digits; one too long to print becomes the cleaning's marker, unlike any gold
        return _number(float(value)) if abs(value) < _EXACT_FROM else str(clean_value(value))
    if isinstance(value, float):
        return _number(value)
    text = " ".join(str(value).split()).casefold()
    if _NUMBER.match(text):
        digits = text.replace(",", "")
        number = float(digits)
        return _number(number) if abs(number) < _EXACT_FROM else _exact(digits)
    return text


def _number(x: float) -> str:
    if not math.isfinite(x):  # json.loads accepts NaN and Infinity; they match only themselves
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    rounded = round(x, 4)
    return str(int(rounded)) if rounded == int(rounded) else repr(rounded)


def _exact(digits: str) -> str:
    """A large number's canonical text from its decimal digits (no exponent, no separators), of any length."""
    with localcontext(prec=len(digits) + 8):  # enough digits that rounding to 4 places is exact
        text = f"{Decimal(digits).quantize(Decimal('0.0001')):f}"
    text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "+0", "") else text.removeprefix("+")


def flatten(value: Any) -> list[Any]:
    """All scalar values inside nested lists and dicts (dict keys are names, not values, and are dropped), in
    order. Iterative: the depth of a model's answer never reaches the interpreter's recursion limit."""
    values: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list | tuple | set):
            stack.extend(reversed(list(item)))
        else:
            values.append(item)
    return values


def depth(value: Any) -> int:
    """How many containers deep ``value`` nests (a scalar: 0); iterative."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list | tuple | set) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


def comparable(value: Any) -> Any:
    """``value``, refused as :class:`UnscorableAnswer` when it nests deeper than :data:`MAX_DEPTH` (the recursive
    normalizers below, and hashing their tuples, are then safe)."""
    if depth(value) > MAX_DEPTH:
        raise UnscorableAnswer(f"nested deeper than {MAX_DEPTH} levels")
    return value


def parse_structured(text: str) -> Any | None:
    """The JSON (or Python literal) an answer holds, if any: whole text, a fenced block, or the first [...] / {...}."""
    candidates = [text.strip(), *fenced_blocks(text)]
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
                return comparable(value)
    return None


def answer_matches(predicted: Any, gold: Any, ordered: bool = False, tie_groups: Sequence[int] = ()) -> bool:
    """Whether ``predicted`` (a string from the agent, or a structured value) carries exactly the gold values.

    Structured answers must hold the same multiset of values as the gold records — in the same order when
    ``ordered`` (the gold query sorts its rows). ``tie_groups`` (per gold row, its run of rows with equal sort keys)
    relaxes that order: the answer's values, cut into rows as wide as the gold's, must hold each run's rows in any
    order, the runs in theirs. A bare value equals a one-record list holding it; keys are not
    compared, so original keys and renamed ones both count. Numbers match to 4 decimals. Prose must mention every
    gold value (numbers as numbers, text as whole words), in any order. An empty or missing answer never matches;
    an empty gold answer matches only an empty structured answer.
    """
    if predicted is None:
        return False
    expected = Counter(normalize_scalar(v) for v in flatten(gold))
    structured = parse_structured(predicted) if isinstance(predicted, str) else comparable(predicted)
    if isinstance(structured, list | dict) or (structured is not None and not isinstance(predicted, str)):
        values = [normalize_scalar(v) for v in flatten(structured)]
        if ordered and tie_groups:
            return _runs_match(values, gold, tie_groups)
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


def _runs_match(values: list[str], gold: Any, tie_groups: Sequence[int]) -> bool:
    """An ordered answer's normalized values against the gold rows, run by run: the values are cut into rows as
    wide as the gold's (a row's width is how many values it flattens to), and each tie run compares as a multiset."""
    rows = list(gold) if isinstance(gold, list | tuple) else [gold]
    if len(tie_groups) != len(rows):
        raise ValueError(f"tie_groups has {len(tie_groups)} entries for {len(rows)} gold rows")
    want = [tuple(normalize_scalar(v) for v in flatten(row)) for row in rows]
    if len(values) != sum(len(row) for row in want):
        return False
    got: list[tuple[str, ...]] = []
    start = 0
    for row in want:
        got.append(tuple(values[start : start + len(row)]))
        start += len(row)
    return same_rows(got, want, True, tie_groups)


# ---------------------------------------------------------------------------------------------------------------
# Strict matching: the paper's protocol


def _strict_value(predicted: Any) -> tuple[bool, Any]:
    """(True, value) when ``predicted`` is a structured answer: a non-string value, or a text that is as a whole
    one JSON / Python literal (possibly inside a single code fence, which is how text protocols write it). An
    answer with prose around its structure is not structured: strict matching does not dig values out of text."""
    if not isinstance(predicted, str):
        return True, comparable(predicted)
    text = strip_fence(predicted.strip())
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        # "1,000" is a Python tuple literal; a tuple counts only when written with its parentheses
        if isinstance(value, tuple) and not text.startswith("("):
            continue
        return True, comparable(value)
    return False, text


def _cell(value: Any) -> Any:
    """A record's value, normalized: scalars by :func:`normalize_scalar`, nested lists and dicts element-wise (a
    hashable form, so rows can be counted)."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _cell(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_cell(v) for v in value)
    return normalize_scalar(value)


def _record(row: dict[Any, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((str(k), _cell(v)) for k, v in row.items()))


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def strict_answer_matches(predicted: Any, gold: Any, ordered: bool = False, tie_groups: Sequence[int] = ()) -> bool:
    """Whether ``predicted`` is the gold answer in the paper's protocol: structured, keyed by the original names.

    - The answer must be structured: a JSON or Python literal as the whole answer (a single code fence around it
      is allowed; CodeAct answers arrive as ``json.dumps`` of the agent's ``solution``), or a non-string value.
      Prose never matches, even prose that names every gold value.
    - Gold records (a list of dicts, as the functions return them) must come back as records with exactly the
      gold's keys. Keys are compared exactly, case included: they are the column names the functions returned,
      which the agent saw and had to keep ("original keys"); ``Name`` for ``name`` is a renamed key.
    - Values are compared by :func:`normalize_scalar` (numbers to 4 decimals, text casefolded, spaces collapsed).
    - Row order counts only when ``ordered`` (the gold query has ORDER BY); otherwise rows are a multiset. With
      ``tie_groups`` (per gold row, its run of rows with equal sort keys) the rows of one run may come in any order;
      the runs keep theirs.
    - The paper's deterministic post-processing is kept: a bare scalar (JSON, or the whole answer text itself)
      equals a one-row, one-column gold, and a flat list of values equals a one-column gold (one value per row);
      a single record may stand without its list. An empty gold matches only an empty list; an empty answer
      matches nothing.

    A gold that is not a list of records (a scalar, a list of values) is compared value by value under the same
    order rule, a bare value standing for a one-element list.
    """
    if predicted is None or (isinstance(predicted, str) and not predicted.strip()):
        return False
    structured, value = _strict_value(predicted)
    if isinstance(gold, dict):
        gold = [gold]
    if isinstance(gold, list) and gold and all(isinstance(row, dict) for row in gold):
        return _records_match(value, structured, gold, ordered, tie_groups)
    if not structured:
        return False
    expected = [_cell(v) for v in (gold if isinstance(gold, list | tuple) else [gold])]
    got = [_cell(v) for v in (value if isinstance(value, list | tuple) else [value])]
    return same_rows(got, expected, ordered, tie_groups)


def _records_match(
    value: Any, structured: bool, gold: list[dict[Any, Any]], ordered: bool, tie_groups: Sequence[int]
) -> bool:
    keys = [str(k) for k in gold[0]]
    one_column = len(keys) == 1 and all(len(row) == 1 for row in gold)
    if not structured:
        # a bare unquoted answer ("Sofia"): only the whole text as the one value of a one-row, one-column gold
        return one_column and len(gold) == 1 and normalize_scalar(value) == _cell(next(iter(gold[0].values())))
    if isinstance(value, dict) or _is_scalar(value):
        value = [value]
    if not isinstance(value, list | tuple):
        return False
    if one_column and value and all(_is_scalar(v) for v in value):
        value = [{keys[0]: v} for v in value]  # a flat list of values for a one-column gold
    if not all(isinstance(row, dict) for row in value):
        return False
    got = [_record(row) for row in value]
    expected = [_record(row) for row in gold]
    return same_rows(got, expected, ordered, tie_groups)


Awareness = Literal["yes", "idk", "no"]
VerdictWord = Literal["pass", "fail"]
ComparisonWord = Literal["win", "tie", "lose"]
# How a helper's or a model's reply is read. ``authors``: as FAIL-TaLMs' own code reads it, the reply's first
# characters, case aside (the family's default, so that its numbers are the paper's); ``robust``: undertow's reader,
# which looks past markup and quotes, knows the spelled-out forms and refuses a word that is not the answer.
Reader = Literal["authors", "robust"]
READERS: tuple[Reader, ...] = ("authors", "robust")
_Label = TypeVar("_Label", bound=str)


# Reading a reply's first word: awareness answers (Yes / IDK / No), graders' verdicts (Pass / Fail) and pairwise
# comparisons (Win / Tie / Lose)

# what may come before the first word: whitespace, markdown emphasis / headings / quotes / code, quotation marks
# and an opening bracket; none of them changes what the answer is
_LEAD = re.compile(r"""^[\s*_#>`"'“”‘’«»„\[(]+""")
_AWARENESS = re.compile(
    r"""^(?:
        (?P<idk>idk
          |i\s+(?:do\s+not|don'?t)\s+know
          |(?:i'?m\s+|i\s+am\s+)?(?:unsure|uncertain|not\s+sure))
        |(?P<yes>yes)
        # "nope" is a no; "no problem" / "no doubt" say nothing missing: not a no, so not read
        |(?P<no>nope|no(?!\s+(?:problems?|worries|doubt|issues?)(?!\w)))
    )(?!\w)""",
    re.VERBOSE,
)
# a verdict word, unless it is the first half of the label "Pass/Fail" or "Pass or Fail"
_VERDICT = re.compile(r"^(?:(?P<pass>pass(?:ed|es)?)|(?P<fail>fail(?:ed|s)?))(?!\w)(?!\s*(?:/|or\s)\s*(?:pass|fail))")
# a label before the verdict ("Pass/Fail: Fail", "Verdict - Pass"): the verdict is the word after it
_VERDICT_LABEL = re.compile(
    r"^(?:pass\s*(?:/|or)\s*fail|fail\s*(?:/|or)\s*pass|verdict|grade|result|decision)\W*?[:=\-–—]+"
)
_COMPARISON = re.compile(r"^(?:(?P<win>win(?:s|ning)?|won)|(?P<tie>tie[sd]?)|(?P<lose>los(?:e|es|t)))(?!\w)")
# the authors' reading: the reply, whitespace around it dropped, starts with the word (any case); first match wins
_AUTHORS_AWARENESS: tuple[tuple[str, Awareness], ...] = (("yes", "yes"), ("no", "no"), ("idk", "idk"))
_AUTHORS_VERDICT: tuple[tuple[str, VerdictWord], ...] = (("pass", "pass"), ("fail", "fail"))
_AUTHORS_COMPARISON: tuple[tuple[str, ComparisonWord], ...] = (("win", "win"), ("tie", "tie"), ("lose", "lose"))


def _opening(text: str | None) -> str:
    """The reply from its first word on, lower case, markup and quotes before it dropped, curly apostrophes
    straightened (``**I don’t know**`` -> ``i don't know**``)."""
    if not isinstance(text, str):
        return ""
    return _LEAD.sub("", text.replace("’", "'").replace("‘", "'")).casefold()


def _leading(text: str | None, words: tuple[tuple[str, _Label], ...]) -> _Label | None:
    """The authors' reader: the label of the first word the reply starts with (case aside, no markup skipped:
    ``**Yes**`` reads as nothing, ``Nope`` as no). Whitespace around the reply is the one thing dropped: a server
    may add it, a model cannot mean anything by it."""
    if not isinstance(text, str):
        return None
    opening = text.strip().casefold()
    return next((label for word, label in words if opening.startswith(word)), None)


def parse_awareness(text: str | None, reader: Reader = "robust") -> Awareness | None:
    """The answer an awareness reply opens with: ``yes``, ``idk`` or ``no``; None when it is not readable.

    ``robust`` (the default; a family whose paper read the replies otherwise chooses ``authors``): markup and quotes
    before the answer are skipped, "I don't know", "I do not know", "unsure", "not sure" read as idk and "Nope" as
    no, while a reply that opens with other words ("No problem, ...", "Answer: Yes") is not read. ``authors``: the
    reply must start with yes, no or idk, any case, and nothing else counts ("No problem, ..." is a no, "**Yes**"
    and "I don't know" are unreadable)."""
    if reader == "authors":
        return _leading(text, _AUTHORS_AWARENESS)
    found = _AWARENESS.match(_opening(text))
    if found is None:
        return None
    if found.group("idk"):
        return "idk"
    return "yes" if found.group("yes") else "no"


def parse_verdict(text: str | None, reader: Reader = "robust") -> VerdictWord | None:
    """The verdict a grader reply opens with, ``pass`` or ``fail``; None when it is not readable.

    ``robust``: any case, markup and quotes allowed before it, and after a label ("Pass/Fail: Fail" and "Verdict:
    Pass" read the word after the colon); a longer word ("Passable", "Failure") is not a verdict. ``authors``: the
    reply starts with pass or fail, any case ("Pass/Fail: Fail" is a pass, "**Fail**" unreadable)."""
    if reader == "authors":
        return _leading(text, _AUTHORS_VERDICT)
    opening = _opening(text)
    label = _VERDICT_LABEL.match(opening)
    if label is not None:
        opening = _opening(opening[label.end() :])
    found = _VERDICT.match(opening)
    if found is None:
        return None
    return "pass" if found.group("pass") else "fail"


def parse_comparison(text: str | None, reader: Reader = "robust") -> ComparisonWord | None:
    """How a pairwise comparison reply opens: ``win``, ``tie`` or ``lose`` (the first answer against the second);
    None when it is not readable. ``robust`` skips markup and quotes and knows "wins", "won", "tied", "lost";
    ``authors`` wants the reply to start with win, tie or lose, any case."""
    if reader == "authors":
        return _leading(text, _AUTHORS_COMPARISON)
    found = _COMPARISON.match(_opening(text))
    if found is None:
        return None
    return "win" if found.group("win") else ("tie" if found.group("tie") else "lose")
