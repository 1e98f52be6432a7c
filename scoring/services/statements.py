"""Whether an answer states a concept, read sentence by sentence: the concept's own words or a synonym in an
asserted clause (:func:`stated_verbatim`), the kind of trouble a recovery concept names in any of its usual
wordings (:func:`stated_by_sense`), or a fact's words, numbers and dates in one sentence with no contrary state
(:func:`stated_as_fact`); and the pieces of an answer (sentences, contrast segments, clauses) the embedding stage
compares, with the gates that keep numbers, names and negation honest.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import Any

from undertow.env_core.services.catalog import SERVICES
from undertow.scoring.services.normal import _MONTHS, _WEEKDAYS, REFERENCE_YEAR, normal_clauses, normalize
from undertow.scoring.services.senses import (
    NEGATORS,
    contradicts,
    contrary_of,
    cue_spans,
    denied_after,
    equivalent_states,
    negated,
    negated_before,
    not_temporary,
    occurrences,
    phrase_pattern,
    put_as_question,
    turned_down,
    turned_down_after,
    turned_down_before,
)

_CALENDAR_WORDS = frozenset(calendar.month_name[1:]) | frozenset(calendar.day_name)
_CALENDAR_WORDS = frozenset(w.casefold() for w in _CALENDAR_WORDS)


def required_tokens(normalized: str) -> list[str]:
    """The tokens of a concept a span must repeat exactly: numbers, times and ids (anything with a digit), and
    month and weekday names ("arrives Friday" is not stated by "arrives Monday")."""
    return [t for t in normalized.split() if t in _CALENDAR_WORDS or any(ch.isdigit() for ch in t)]


_NOT_NAMES = frozenset(_MONTHS) | frozenset(_WEEKDAYS) | {"am", "pm", "a.m.", "p.m."}


def entity_words(concept: str) -> list[str]:
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


def read(text: str) -> _Reading:
    scope: set[str] = set()
    found = False
    for clause in normal_clauses(text):
        words = clause.split()
        if negated(words):
            found = True
            scope |= _stems(words)
    normal = normalize(text)
    return _Reading(text, normal, frozenset(normal.split()), found, frozenset(scope), frozenset(_stems(normal.split())))


def contradicts_reading(concept: _Reading, span: _Reading) -> bool:
    """Negation on one side only, over the same words: "saved" against "was not saved", "the email was not
    delivered" against "it was delivered". A negated paraphrase over other words ("unavailable" against "could
    not be reached") is left to the similarity."""
    if concept.negated == span.negated:
        return False
    if span.negated:
        return bool(span.scope & concept.stems)
    return bool(concept.scope & span.stems)


def contains_words(haystack: str, needle: str) -> bool:
    return f" {needle} " in f" {haystack} "


_CONTRAST = re.compile(r"\s+(?:but|however|although|though|whereas|while|yet)\s+|;\s*(?:but|however)\b")


@dataclass(frozen=True)
class _Piece:
    """A span of an answer: a whole sentence (``segment`` None), a contrast segment of it ("X" and "Y" of "X but
    Y") or a clause of a segment; ``sentence`` -1 is the whole answer."""

    text: str
    sentence: int
    segment: int | None


def answer_pieces(text: str) -> list[_Piece]:
    sentences = split_sentences(text)
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
    return [piece.text for piece in answer_pieces(text)]


def allowed_pieces(pieces: Sequence[_Piece], contradicted: Sequence[bool]) -> list[bool]:
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
# Statements read sentence by sentence


@dataclass(frozen=True)
class Sentence:
    """One sentence of an answer: its normalized clauses, the clauses joined (``joined``) with where each starts,
    and whether it is a question."""

    clauses: tuple[str, ...]
    starts: tuple[int, ...]
    joined: str
    question: bool

    def clause_at(self, offset: int) -> int:
        """The index of the clause an offset of ``joined`` falls in."""
        return max(i for i, s in enumerate(self.starts) if s <= offset)


# Words a period follows without ending the sentence ("151 W. 54th St.", "Dr. Lee", "vs. $98.59")
_ABBREVIATED = re.compile(r"\b(?:St|Ave|Dr|Mr|Mrs|Ms|Rd|Blvd|Ln|Ct|Terr|Jr|Sr|No|vs|etc|approx|e\.g|i\.e)\.$")
_INITIAL = re.compile(r"\b[NSEW]\.$")  # a compass point before a street number: "151 W. 54th St"


def split_sentences(text: str) -> list[str]:
    """The sentences of a text: split after ., ! or ? followed by a space (not after an abbreviation or an
    initial) and at line breaks."""
    out: list[str] = []
    for line in re.split(r"\n+", text):
        pending = ""
        parts = re.split(r"(?<=[.!?])\s+", line)
        for i, part in enumerate(parts):
            pending = f"{pending} {part}" if pending else part
            following = parts[i + 1] if i + 1 < len(parts) else ""
            # a compass point after a street number, or before one ("2300 N. Lamar Blvd", "151 W. 54th St")
            compass = _INITIAL.search(pending) and (
                following[:1].isdigit() or bool(re.search(r"\d+ [NSEW]\.$", pending))
            )
            joined = _ABBREVIATED.search(pending) or compass
            if not joined:
                out.append(pending.strip())
                pending = ""
        if pending.strip():
            out.append(pending.strip())
    return [s for s in out if s]


@lru_cache(maxsize=1024)
def sentences(text: str) -> tuple[Sentence, ...]:
    """The sentences of an answer (:func:`split_sentences`), normalized (kept for the answer's other concepts)."""
    out = []
    for raw in split_sentences(text):
        clauses = tuple(normal_clauses(raw))
        if not clauses:
            continue
        starts, position = [], 0
        for clause in clauses:
            starts.append(position)
            position += len(clause) + 1
        out.append(Sentence(clauses, tuple(starts), " ".join(clauses), raw.rstrip().endswith("?")))
    return tuple(out)


# The providers' names, normalized, longest first: a statement of trouble about another provider is not about the
# concept's (scoring imports env_core; the names are the services' own titles)
PROVIDERS: tuple[str, ...] = tuple(sorted({normalize(s.title) for s in SERVICES}, key=len, reverse=True))


def questions(text: str) -> set[int]:
    """The indexes of the sentences of an answer (as :func:`answer_pieces` numbers them) that are questions."""
    return {i for i, sentence in enumerate(split_sentences(text)) if sentence.endswith("?")}


def providers_named(concept: str) -> set[str]:
    """The provider names a concept speaks of (normalized)."""
    return _providers_in(normalize(concept), PROVIDERS)


def _occurrences(needle: str, haystack: str) -> list[int]:
    return occurrences(haystack, needle)


def _providers_in(normal: str, providers: Sequence[str]) -> set[str]:
    """The provider names (normalized, longest first) a normalized text names ("uber eats" is not "uber")."""
    return set(_named(normal, tuple(providers)))


@lru_cache(maxsize=8192)
def _named(normal: str, providers: tuple[str, ...]) -> frozenset[str]:
    found = set()
    for name in providers:
        if _occurrences(name, normal):
            found.add(name)
            normal = phrase_pattern(name).sub(" ", normal)
    return frozenset(found)


def _about_another(clause: str, subject: set[str], providers: Sequence[str]) -> bool:
    """Whether a clause is about another provider than the concept's (it names one, and not the concept's)."""
    if not subject:
        return False
    named = _providers_in(clause, providers)
    return bool(named) and not (named & subject)


def _asserted(sentence: Sentence, at: int, end: int, *, trouble: bool, fact: bool, subject: set[str],
              providers: Sequence[str]) -> bool:  # fmt: skip
    """Whether what sits at [at, end) of a sentence's joined text is asserted: not in a question, not negated or
    put as a condition in its clause; a fact not turned down; trouble not said of another provider and not taken
    back by a later clause of the sentence (one that names another provider speaks of that one)."""
    if sentence.question:
        return False
    index = sentence.clause_at(at)
    clause = sentence.clauses[index]
    local, local_end = at - sentence.starts[index], end - sentence.starts[index]
    if put_as_question(clause, local):
        return False
    if fact:
        # the words before it in its first clause, after it in its last (a name may run over commas)
        last = sentence.clause_at(max(at, end - 1))
        if turned_down_before(clause, local) or turned_down_after(sentence.clauses[last], end - sentence.starts[last]):
            return False
    if trouble:
        if _about_another(clause, subject, providers):
            return False
        rest = [clause[local_end:], *sentence.clauses[index + 1 :]]
        later = [c for c in rest if not _about_another(c, subject or {"-"}, providers)]
        if denied_after(later):
            return False
    return True


def stated_verbatim(concept: str, text: str, **options: Any) -> bool:
    """Whether the normalized concept occurs in the normalized text as whole words, in an asserted occurrence with
    no contrary state in its sentence (:func:`verbatim_verdict` says True; ``options`` are its keywords)."""
    return verbatim_verdict(concept, text, **options) is True


def verbatim_verdict(
    concept: str,
    text: str,
    *,
    trouble: bool = False,
    providers: Sequence[str] = (),
    subject: Iterable[str] = (),
    lasting_denies: bool = False,
) -> bool | None:
    """Whether the normalized concept occurs in the normalized text as whole words (it may run over clauses), in an
    asserted occurrence (see :func:`_asserted`; a concept that is itself negated, "did not save", is not negated
    again by its own words) with no contrary state in its sentence: True when stated, False when its words occur
    but every occurrence is denied (negated, disowned, contradicted), None when they do not occur. ``trouble``: the
    concept reports a fault, about the providers in ``subject`` (the concept's own, a synonym naming none);
    ``lasting_denies``: a failure said to have lasted does not state it ("failed at first")."""
    wanted = normalize(concept)
    if not wanted:
        return None
    found = False
    negative = negated(wanted.split())
    contrary = contrary_of(wanted)
    about = set(subject) | _providers_in(wanted, providers)
    for sentence in sentences(text):
        spots = _occurrences(wanted, sentence.joined)
        found = found or bool(spots)
        if lasting_denies and not_temporary(sentence.joined):
            continue
        if contrary is not None and any(contradicts(contrary, c) for c in sentence.clauses):
            continue
        if conflicting_measure(wanted, sentence.joined):
            continue
        for at in spots:
            end = at + len(wanted)
            index = sentence.clause_at(at)
            clause = sentence.clauses[index]
            local = at - sentence.starts[index]
            if not negative and negated_before(clause, local):
                continue
            if _asserted(sentence, at, end, trouble=trouble, fact=not negative and not trouble, subject=about,
                         providers=providers):  # fmt: skip
                return True
    return False if found else None


def stated_by_sense(
    sense: str, concept: str, text: str, providers: Sequence[str] = (), subject: Iterable[str] = ()
) -> bool:
    """Whether some clause of the text says the kind of trouble ``sense`` names, as an assertion about the
    concept's provider (when the concept, or ``subject``, names one)."""
    about = set(subject) | _providers_in(normalize(concept), providers)
    for sentence in sentences(text):
        if sense == "transient" and not_temporary(sentence.joined):
            continue
        for index, clause in enumerate(sentence.clauses):
            for start, end in cue_spans(sense, clause):
                cue_negative = negated(clause[start:end].split())
                if not cue_negative and negated_before(clause, start):
                    continue
                at = sentence.starts[index] + start
                if _asserted(sentence, at, sentence.starts[index] + end, trouble=True, fact=False, subject=about,
                             providers=providers):  # fmt: skip
                    return True
        # a statement may run over commas ("because its bank-link service, which payments go through, had failed")
        for at, end in cue_spans(sense, sentence.joined):
            index = sentence.clause_at(at)
            clause, local = sentence.clauses[index], at - sentence.starts[index]
            unnegated = negated(sentence.joined[at:end].split()) or not negated_before(clause, local)
            if unnegated and _asserted(sentence, at, end, trouble=True, fact=False, subject=about, providers=providers):
                return True
    return False


# Abbreviations an address or a name is written with, read as the full word
_ABBREVIATIONS = {
    "st": "street", "ave": "avenue", "av": "avenue", "rd": "road", "blvd": "boulevard", "dr": "drive", "ln": "lane",
    "ter": "terrace", "terr": "terrace", "ct": "court", "pl": "place", "pkwy": "parkway", "hwy": "highway",
    "ste": "suite", "apt": "apartment", "n": "north", "s": "south", "e": "east", "w": "west", "mt": "mount",
    "ft": "fort",
}  # fmt: skip


def _word_key(word: str) -> str:
    return _stem(_ABBREVIATIONS.get(word, word))


def _word_in(word: str, tokens: Sequence[str]) -> list[int]:
    """Positions of tokens that say ``word``: the same stem, or the tail of a compound ("storms" for
    "thunderstorms", at least five letters)."""
    key = _word_key(word)
    done = word.endswith("ed") and len(word) > 4  # "emailed" is a thing done; "email" is not
    return [
        i
        for i, t in enumerate(tokens)
        if (_word_key(t) == key and (not done or t.endswith("ed")))
        or (len(t) >= 5 and t.isalpha() and word.rstrip("s").endswith(t.rstrip("s")) and word != t)
    ]


_YEAR = re.compile(r"^(?:19|20)\d\d$")


def _tokens_fit(required: Sequence[str], tokens: Sequence[str]) -> bool:
    """Whether a sentence's tokens repeat a concept's numbers, times, ids and dates. A weekday or a year the
    sentence does not give at all is not asked for ("March 21" states "Saturday March 21 2026"); a month may be
    left out when the weekday is given ("Saturday the 21st")."""
    present = set(tokens)
    weekdays = present & _WEEKDAY_NAMES
    months = present & _MONTH_NAMES
    years = {t for t in present if _YEAR.match(t)}
    wanted_weekdays = [t for t in required if t in _WEEKDAY_NAMES]
    for token in required:
        if token in present:
            continue
        if token in _WEEKDAY_NAMES and not weekdays:
            continue
        if _YEAR.match(token) and not years:
            continue
        if (
            token in _MONTH_NAMES
            and not months
            and (any(w in present for w in wanted_weekdays) or _reference_weekday(required, token) in present)
        ):
            continue
        return False
    return True


def _reference_weekday(required: Sequence[str], month: str) -> str | None:
    """The weekday of a concept's "<month> <day>" in the reference year ("march 21" -> "saturday")."""
    at = list(required).index(month)
    day = required[at + 1] if at + 1 < len(required) else ""
    if not day.isdigit():
        return None
    try:
        when = date(REFERENCE_YEAR, list(calendar.month_name).index(month.capitalize()), int(day))
    except ValueError:
        return None
    return calendar.day_name[when.weekday()].casefold()


_WEEKDAY_NAMES = frozenset(w.casefold() for w in calendar.day_name)
_MONTH_NAMES = frozenset(m.casefold() for m in calendar.month_name[1:])


_LONG_NAME = 4  # content words from which one may be left out

# Words a business's name is often said without ("Martin's Bar-B-Que" for "Martin's Bar-B-Que Joint")
_OPTIONAL_NAME_WORDS = frozenset({"joint", "restaurant", "inc", "llc", "ltd", "co", "corp", "company", "the"})


_MEASURE_TOKEN = re.compile(r"^(\d+(?:\.\d+)?)([a-z]+)$")


def conflicting_measure(concept: str, sentence: str) -> bool:
    """Whether a sentence gives another amount of a unit the concept measures ("VoltPeak 26800mAh ... with only
    10,000 mAh"): the concept said with a figure that contradicts it."""
    for token in concept.split():
        found = _MEASURE_TOKEN.match(token)
        if not found:
            continue
        number, unit = found[1], found[2]
        # a figure said on its own ("10,000 mAh"), not another item's name ("a 2-pack")
        for m in re.finditer(rf"(?<![\w.])(\d+(?:\.\d+)?) {re.escape(unit)}s?\b", sentence):
            if m[1] != number:
                return True
    return False


def is_name(concept: str) -> bool:
    """Whether a concept is a proper name (every word capitalized or a number): "Blue Heron Sushi", "Priya Nair"."""
    words = [w for w in re.split(r"[\s,]+", concept) if w]
    return len(words) >= 2 and all(w[0].isupper() or w[0].isdigit() for w in words)


def _together(spots: Sequence[Sequence[int]], count: int) -> bool:
    """Whether some choice of one position per word puts the words within a span of ``count + 1`` tokens."""
    if not spots:
        return True
    reach = count
    return any(all(any(abs(p - q) <= reach for q in found) for found in spots[1:]) for p in spots[0])


def stated_as_fact(concept: str, text: str) -> bool:
    """Whether one asserted sentence of the text carries every number, time, id and date of the concept (see
    :func:`_tokens_fit`), its states in any of their wordings ("available" for "in stock") and every other content
    word of it (stems, compounds, address abbreviations), none of them negated, skipped or called unlikely, and no
    state contrary to the concept's."""
    wanted = normalize(concept)
    required = required_tokens(wanted)
    states = equivalent_states(wanted)
    rest = wanted
    for state, _ in states:
        rest = re.sub(rf"(?<![\w]){re.escape(state)}(?![\w])", " ", rest)
    words = [
        w
        for w in rest.split()
        if w not in required and w not in _STOPWORDS and w not in NEGATORS and w not in _OPTIONAL_NAME_WORDS
    ]
    if not words and not required and not states:
        return False
    contrary = contrary_of(wanted)
    name = is_name(concept)
    for sentence in sentences(text):
        if sentence.question:
            continue
        tokens = sentence.joined.split()
        if not _tokens_fit(required, tokens):
            continue
        if contrary is not None and any(contradicts(contrary, c) for c in sentence.clauses):
            continue
        if conflicting_measure(wanted, sentence.joined):
            continue
        spots = [_word_in(w, tokens) for w in words]
        # a long name may be said without one of its words ("PowerCell AA alkaline 20-packs" for "PowerCell AA
        # Alkaline Batteries, 20-Pack"); a short one must be said whole
        lacking = sum(not found for found in spots)
        if lacking > (1 if len(words) >= _LONG_NAME else 0):
            continue
        spots = [found for found in spots if found]
        if name and not _together(spots, len(words)):
            continue  # a name's words scattered over the sentence ("Hannah's partner, Chidi Okafor")
        spots += [[i for i, t in enumerate(tokens) if t == r] for r in required if r in tokens]
        offsets = [len(" ".join(tokens[:i])) + (1 if i else 0) for i in range(len(tokens))]
        spans = [(offsets[i], offsets[i] + len(tokens[i])) for positions in spots for i in positions]
        found_states = [
            [(at, at + len(phrase)) for phrase in group for at in _occurrences(phrase, sentence.joined)]
            for _, group in states
        ]
        if not all(found_states):
            continue
        spans += [span for found in found_states for span in found]
        if not any(_spoken_down(sentence, at, end) for at, end in spans):
            return True
    return False


def _spoken_down(sentence: Sentence, at: int, end: int) -> bool:
    """Whether what sits at [at, end) of a sentence is put as a question or a plan, negated, skipped or called
    unlikely in its clause."""
    index = sentence.clause_at(at)
    clause = sentence.clauses[index]
    local = at - sentence.starts[index]
    return put_as_question(clause, local) or turned_down(clause, local, min(end - sentence.starts[index], len(clause)))
