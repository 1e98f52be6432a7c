"""Text as concept matching compares it: casefolded, contractions spelled out, and dates, times, phone numbers,
currency amounts and numbers in one canonical form each (:func:`normal_clauses`, :func:`normalize`)."""

from __future__ import annotations

import calendar
import re
from datetime import date
from functools import lru_cache

from undertow.scoring.answers import normalize_scalar

# The simulated clock's year (env_core.services.base.START): a date written with a weekday but no year is read in
# the years around it, and kept without a year when the weekday fits more than one of them.
REFERENCE_YEAR = 2026
_YEAR_WINDOW = 3

_MONTHS = {name.casefold(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.casefold(): i for i, name in enumerate(calendar.month_abbr) if name}
_MONTHS["sept"] = 9
_WEEKDAYS = {name.casefold(): i for i, name in enumerate(calendar.day_name)}
_WEEKDAYS |= {name.casefold(): i for i, name in enumerate(calendar.day_abbr)}
_WEEKDAYS |= {"tues": 1, "thur": 3, "thurs": 3}
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WEEKDAY_RE = "|".join(sorted(_WEEKDAYS, key=len, reverse=True))

_ISO_DATE = re.compile(
    r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?:t(\d{1,2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?(?![\d-])"
)
_US_DATE = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})(?:/(\d{4}))?(?![\d/])")
_MONTH_DAY = re.compile(
    rf"(?:\b({_WEEKDAY_RE})\b\.?,?\s+)?(?:the\s+)?\b({_MONTH_RE})\b\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"(?:,?\s+(\d{{4}})\b)?"
)
_DAY_MONTH = re.compile(
    rf"(?:\b({_WEEKDAY_RE})\b\.?,?\s+)?(?:the\s+)?\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?\b({_MONTH_RE})\b\.?"
    rf"(?:,?\s+(\d{{4}})\b)?"
)
# "2 to 4 pm", "9-11am": the meridiem written once governs both ends
_AMPM_RANGE = re.compile(
    r"(?<![\d:.])(\d{1,2})(?::(\d{2}))?\s*(?:-|to|until|till)\s*(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s?m\b\.?"
)
_AMPM = re.compile(r"(?<![\d:.])(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s?m\b\.?")
_CLOCK = re.compile(r"(?<![\d:.])(\d{1,2}):(\d{2})(?::\d{2})?(?![\d:])")
_CURRENCY = re.compile(r"[$€£¥]|\b(?:usd|eur|gbp|dollars?|euros?|bucks)\b")
# A North American phone number in any of its written forms: "+1-510-555-0123", "(510) 555-0123", "510.555.0123"
_PHONE = re.compile(r"(?<![\w+])(?:\+?1[\s.-]*)?\(?(\d{3})\)?[\s.-]*(\d{3})[\s.-]*(\d{4})(?![\w])")
_MEASURE = re.compile(r"(?<![\w.,])(\d[\d,]*)-(?!(?:to|or|and)\b)([a-z]{3,})\b")
_ORDINAL = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b")
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\w]|\.\d)")
_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_ORDINAL_WORDS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
    "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15,
    "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20, "thirtieth": 30,
}  # fmt: skip
_SMALL = "|".join(sorted([*_UNITS, *_TENS], key=len, reverse=True))
# "eighty-two", "one hundred fifty", "two thousand five hundred": a number written in words ("one" alone stays a
# word: "the one with the 510 number")
_RUN = rf"(?:{_SMALL})(?:[ -](?:{_SMALL}))*"
_WORDS_NUMBER = re.compile(rf"\b{_RUN}(?:[ -](?:hundred|thousand)(?:[ -](?:and[ -])?{_RUN})?)*\b")
_STREET_ORDINAL = re.compile(
    r"\b(" + "|".join(_ORDINAL_WORDS) + r")\b(?=\s+(?:ave|avenue|st|street|rd|road|floor|fl)\b)"
)


# "half past 3", "a quarter to 8", "20 past 8" ("10 to 11" is a range, not ten minutes to eleven)
_CLOCK_WORDS = re.compile(r"\b(?:a )?(?:(half|quarter) (past|to)|(\d{1,2}) (past)) (\d{1,2})\b")


def _clock_words(m: re.Match[str]) -> str:
    minutes = {"half": 30, "quarter": 15}[m[1]] if m[1] else int(m[3])
    hour, direction = int(m[5]), m[2] or m[4]
    if not (1 <= hour <= 12 and 0 < minutes < 60):
        return m[0]
    if direction == "to":
        hour, minutes = (hour - 2) % 12 + 1, 60 - minutes
    return f"{hour}:{minutes:02d}"


def _words_value(words: str) -> int | None:
    total, current = 0, 0
    for word in re.split(r"[ -]+", words):
        if word == "and":
            continue
        if word in _UNITS:
            current += _UNITS[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word == "thousand":
            total += max(current, 1) * 1000
            current = 0
        else:
            return None
    return total + current


def _number_words(text: str) -> str:
    """Numbers written in words as digits; "X dollars and Y cents" as X.YY."""

    def number(m: re.Match[str]) -> str:
        if m[0] == "one":
            return m[0]
        value = _words_value(m[0])
        return m[0] if value is None else str(value)

    text = _WORDS_NUMBER.sub(number, text)
    text = re.sub(r"\b(\d+) point (\d+)\b", r"\1.\2", text)  # "four point seven"
    text = re.sub(r"\b(\d+) (?:dollars?|bucks) and (\d{1,2}) cents?\b", lambda m: f"{m[1]}.{int(m[2]):02d}", text)
    text = re.sub(r"\b(\d+) (?:pounds|euros|quid) (\d{2})\b", r"\1.\2", text)  # "eighty-six pounds fifty"
    return _STREET_ORDINAL.sub(lambda m: str(_ORDINAL_WORDS[m[1]]), text)


# Clause boundaries, for the negation window: punctuation that ends a clause (not a decimal point) and contrastive
# conjunctions ("saved, but not confirmed").
_CLAUSE_SPLIT = re.compile(r"[,;:!?()\n]|\.(?![\w])|\b(?:but|however|although|though|whereas|while)\b")
_PUNCTUATION = re.compile(r"(?!(?<=\d)\.(?=\d))[^\w\s]")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-"})


def _date_text(weekday: str | None, month: int, day: int, year: int | None) -> str | None:
    """The canonical words of a date: ``saturday march 21 2026``, or what is known of it; None if impossible."""
    try:
        date(year or 2024, month, day)  # 2024: a leap year, so that February 29 without a year stands
    except ValueError:
        return None
    wanted = _WEEKDAYS[weekday] if weekday else None
    if year is None and wanted is not None:
        fits = [
            y
            for y in range(REFERENCE_YEAR - _YEAR_WINDOW, REFERENCE_YEAR + _YEAR_WINDOW + 1)
            if _valid(y, month, day) and date(y, month, day).weekday() == wanted
        ]
        year = fits[0] if len(fits) == 1 else None
    name = calendar.month_name[month].casefold()
    if year is None:
        return f"{calendar.day_name[wanted].casefold()} {name} {day}" if wanted is not None else f"{name} {day}"
    real = date(year, month, day)
    return f"{calendar.day_name[real.weekday()].casefold()} {name} {day} {year}"


def _valid(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


def _time_text(hour: int, minute: int) -> str | None:
    # one word with no digits at its edges, so the number canonicalization leaves it alone
    return f"{hour:02d}h{minute:02d}" if 0 <= hour < 24 and 0 <= minute < 60 else None


def _replace_dates(text: str) -> str:
    def iso(m: re.Match[str]) -> str:
        words = _date_text(None, int(m[2]), int(m[3]), int(m[1]))
        if words is None:
            return m[0]
        clock = _time_text(int(m[4]), int(m[5])) if m[4] else None
        return f" {words} {clock or ''} "

    def us(m: re.Match[str]) -> str:
        words = _date_text(None, int(m[1]), int(m[2]), int(m[3]) if m[3] else None)
        return f" {words} " if words else m[0]

    def month_day(m: re.Match[str]) -> str:
        words = _date_text(m[1], _MONTHS[m[2]], int(m[3]), int(m[4]) if m[4] else None)
        return f" {words} " if words else m[0]

    def day_month(m: re.Match[str]) -> str:
        words = _date_text(m[1], _MONTHS[m[3]], int(m[2]), int(m[4]) if m[4] else None)
        return f" {words} " if words else m[0]

    text = _ISO_DATE.sub(iso, text)
    text = _US_DATE.sub(us, text)
    text = _MONTH_DAY.sub(month_day, text)
    return _DAY_MONTH.sub(day_month, text)


def _replace_times(text: str) -> str:
    def ampm(m: re.Match[str]) -> str:
        hour, minute = int(m[1]), int(m[2] or 0)
        if not 1 <= hour <= 12:
            return m[0]
        hour = hour % 12 + (12 if m[3] == "p" else 0)
        return f" {_time_text(hour, minute)} "

    def clock(m: re.Match[str]) -> str:
        words = _time_text(int(m[1]), int(m[2]))
        return f" {words} " if words else m[0]

    def ampm_range(m: re.Match[str]) -> str:
        first, second = int(m[1]), int(m[3])
        if not (1 <= first <= 12 and 1 <= second <= 12):
            return m[0]
        end = second % 12 + (12 if m[5] == "p" else 0)
        start = first % 12 + (12 if m[5] == "p" else 0)
        if start > end:  # "11 to 1 pm": the start is in the morning
            start -= 12
        return f" {_time_text(start, int(m[2] or 0))} to {_time_text(end, int(m[4] or 0))} "

    text = _AMPM_RANGE.sub(ampm_range, text)
    text = re.sub(r"\bnoon\b", " 12h00 ", text)
    text = re.sub(r"\bmidnight\b", " 00h00 ", text)
    text = _AMPM.sub(ampm, text)
    return _CLOCK.sub(clock, text)


def _number_text(m: re.Match[str]) -> str:
    return normalize_scalar(m[1].replace(",", "") + (f".{m[2]}" if m[2] else ""))  # exact past float range


def normal_clauses(text: str) -> list[str]:
    """``text`` normalized for concept matching, cut into clauses: casefolded; contractions spelled out ("wasn't"
    -> "was not"); dates as ``saturday march 21 2026`` (ISO, US numeric and written forms, a weekday-only date
    completed with its year when only one year near the reference fits); times as ``18h00`` ("6 pm", "6:00 p.m.",
    "18:00", "half past 3", "3 in the afternoon"); phone numbers as ``tel5105550123``; ordinals as numbers ("the
    21st" -> "21"); numbers in words as digits ("eighty-two", "one hundred fifty", "four point seven"); a number
    hyphenated to its unit as one token ("1800acre"); currency signs and words dropped; numbers canonical
    ("$1,500.00" -> "1500", "16.50" -> "16.5"); other punctuation as spaces."""
    return list(_normal_clauses(text))


@lru_cache(maxsize=8192)
def _normal_clauses(text: str) -> tuple[str, ...]:
    # normalized once per text: an answer is read for every concept of every checkpoint
    text = text.translate(_QUOTES).casefold()
    text = re.sub(r"\bwon't\b", "will not", text)
    text = re.sub(r"\bcan't\b|\bcannot\b", "can not", text)
    text = re.sub(r"n't\b", " not", text)
    text = re.sub(r"'ll\b", " will", text)
    text = re.sub(r"'re\b", " are", text)
    text = re.sub(r"'ve\b", " have", text)
    text = re.sub(r"'m\b", " am", text)
    text = re.sub(r"'d\b", " would", text)
    text = re.sub(r"'s\b", "", text)
    text = text.replace("'", "")
    text = _PHONE.sub(lambda m: f" tel{m[1]}{m[2]}{m[3]} ", text)
    # a number joined to its unit by a hyphen measures that unit ("a 1,800-acre site" says nothing of 1,800 jobs)
    text = _MEASURE.sub(lambda m: f"{m[1].replace(',', '')}{m[2].removesuffix('s')}", text)
    text = _number_words(text)  # before dates, times and currency words: "three in the afternoon", "eighty dollars"
    text = _CLOCK_WORDS.sub(_clock_words, text)  # "half past 3", "quarter to 8", "20 past 8"
    text = re.sub(
        r"\b(\d{1,2}(?::\d{2})?) (?:in the (?:afternoon|evening)|this (?:afternoon|evening)|tonight)\b", r"\1 pm", text
    )
    text = re.sub(r"\b(\d{1,2}(?::\d{2})?) (?:in the morning|at night)\b", r"\1 am", text)
    text = _replace_dates(text)
    text = _ORDINAL.sub(r"\1", text)
    text = _replace_times(text)
    text = _CURRENCY.sub(" ", text)
    text = text.replace("%", " percent ")
    text = _NUMBER.sub(_number_text, text)
    clauses = [" ".join(_PUNCTUATION.sub(" ", part).split()) for part in _CLAUSE_SPLIT.split(text)]
    return tuple(c for c in clauses if c)


def normalize(text: str) -> str:
    """``text`` as concept matching compares it (see :func:`normal_clauses`), one line."""
    return " ".join(normal_clauses(text))
