"""FAIL-TaLMs Language tools: a small English dictionary, thesaurus, translator and rhyming dictionary
(``data/tables/lexicon.jsonl``, ``rhymes.jsonl``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator

from undertow.env_core.errors import did_you_mean
from undertow.env_core.failtalms.shared import Row, fail, read_table
from undertow.env_core.tools import tool

_LANGUAGES = {"es": "Spanish", "fr": "French", "de": "German", "it": "Italian"}


class Entry(Row):
    """A word of the dictionary: its definition, synonyms (most common first) and translations (by language code)."""

    word: str
    part_of_speech: str
    definition: str
    synonyms: list[str]
    translations: dict[str, str]

    @field_validator("translations")
    @classmethod
    def _every_language(cls, value: dict[str, str]) -> dict[str, str]:
        if set(value) != set(_LANGUAGES):
            raise ValueError(f"expected a translation into each of {', '.join(_LANGUAGES)}")
        return value


class Rhymes(Row):
    words: list[str]  # words that rhyme with each other


_LEXICON = {row.word: row for row in read_table("lexicon", Entry)}
_RHYME_GROUPS = [row.words for row in read_table("rhymes", Rhymes)]


def _word(word: str) -> tuple[str, Entry]:
    text = word.strip().casefold()
    if text not in _LEXICON:
        hint = did_you_mean(text, _LEXICON)
        fail(f"{word!r} is not in the dictionary" + (f"; {hint}" if hint else ""))
    return text, _LEXICON[text]


@tool("Language")
def define(word: Annotated[str, Field(description="The English word, e.g. 'journey'.")]) -> dict[str, Any]:
    """Dictionary entry of an English word: its part of speech and definition."""
    text, entry = _word(word)
    return {"word": text, "part_of_speech": entry.part_of_speech, "definition": entry.definition}


@tool("Language")
def synonyms(word: Annotated[str, Field(description="The English word, e.g. 'happy'.")]) -> dict[str, Any]:
    """Thesaurus: English words with the same or a close meaning as the given word, most common first."""
    text, entry = _word(word)
    return {"word": text, "synonyms": entry.synonyms}


@tool("Language")
def translate(
    word: Annotated[str, Field(description="The English word, e.g. 'friend'.")],
    target_language: Annotated[str, Field(description="The language to translate into, e.g. 'French' or 'fr'.")],
) -> dict[str, Any]:
    """Translate an English dictionary word into Spanish, French, German or Italian. The target language is a name or an
    ISO 639-1 code (es, fr, de, it). Returns the translation."""
    text, entry = _word(word)
    index = {k: k for k in _LANGUAGES} | {v.casefold(): k for k, v in _LANGUAGES.items()}
    code = index.get(target_language.strip().casefold())
    if code is None:
        known = ", ".join(f"{name} ({c})" for c, name in _LANGUAGES.items())
        fail(f"target_language: cannot translate into {target_language!r}; supported: {known}")
    return {"word": text, "language": _LANGUAGES[code], "translation": entry.translations[code]}


@tool("Language")
def rhymes(word: Annotated[str, Field(description="The English word, e.g. 'night'.")]) -> dict[str, Any]:
    """Words that rhyme with an English word (perfect rhymes from the rhyming dictionary)."""
    text = word.strip().casefold()
    for group in _RHYME_GROUPS:
        if text in group:
            return {"word": text, "rhymes": [w for w in group if w != text]}
    fail(f"no rhymes listed for {word!r}; the rhyming dictionary covers common short words (night, day, heart, ...)")
