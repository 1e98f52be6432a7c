"""FAIL-TaLMs Music tools: a catalogue of classical works (``data/tables/pieces.jsonl``), chord spelling
(``chords.jsonl``) and note frequencies in equal temperament."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field

from undertow.env_core.errors import close_match
from undertow.env_core.failtalms.shared import ALIASES, Row, fail, find, read_table
from undertow.env_core.tools import tool
from undertow.env_core.untrusted import capped


class Piece(Row):
    title: str
    composer: str
    year: int  # completed or first published
    key: str
    form: str
    minutes: int  # typical performance length


class Chord(Row):
    """A chord type: its suffix (C + "m7"), its quality and its notes above the root, each as (semitones, letter
    steps) so that a note is spelled by scale degree."""

    suffix: str
    quality: str
    intervals: list[Annotated[list[int], Field(min_length=2, max_length=2)]]


_PIECES = {row.title: row for row in read_table("pieces", Piece)}
_CHORDS = {row.suffix: row for row in read_table("chords", Chord)}
_LETTERS = "CDEFGAB"
_NATURAL = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}


def _composer(name: str) -> str:
    composers = {row.composer: row.composer for row in _PIECES.values()}
    surnames = {c.split()[-1]: c for c in composers}
    return find(composers, name, "composer", surnames)[0]


@tool("Music")
def piece_info(title: Annotated[str, Field(description="The work's title.")]) -> dict[str, Any]:
    """Facts about a classical work: composer, year completed or first published, key, form and typical performance
    length in minutes. Accepts the usual title ('Moonlight Sonata', 'Boléro')."""
    name, row = find(_PIECES, title, "piece", ALIASES["piece"])
    return {
        "title": name,
        "composer": row.composer,
        "year": row.year,
        "key": row.key,
        "form": row.form,
        "duration_minutes": row.minutes,
    }


@tool("Music")
def composer_works(composer: Annotated[str, Field(description="The composer, e.g. 'Mozart'.")]) -> dict[str, Any]:
    """The catalogued works of a composer (full name or surname), oldest first, with year and form."""
    name = _composer(composer)
    works = sorted((row.year, title, row.form) for title, row in _PIECES.items() if row.composer == name)
    return {"composer": name, "works": [{"title": t, "year": y, "form": f} for y, t, f in works]}


def _note_name(letter_index: int, pitch: int) -> str:
    letter = _LETTERS[letter_index % 7]
    shift = (pitch - _NATURAL[letter] + 6) % 12 - 6
    return letter + {-2: "bb", -1: "b", 0: "", 1: "#", 2: "##"}.get(shift, "?")


@tool("Music")
def chord_notes(
    chord: Annotated[str, Field(description="The chord symbol, e.g. 'Am7' or 'Ebmaj7'.")],
) -> dict[str, Any]:
    """Spell the notes of a chord from its symbol: a root (C, F#, Bb, ...) and a suffix such as m, 7, maj7, m7, dim,
    dim7, aug, sus2, sus4, 6, 9 or add9 (none: major). Notes are spelled by scale degree (Cm: C Eb G)."""
    match = re.fullmatch(r"([A-Ga-g])(#|b)?(.*)", chord.strip())
    if not match:
        fail(f"chord: {chord!r} does not start with a note letter A-G; e.g. 'C', 'F#m', 'Bbmaj7'")
    letter, accidental, suffix = match.group(1).upper(), match.group(2) or "", match.group(3)
    suffix = ALIASES["chord"].get(suffix, suffix)
    if suffix not in _CHORDS:
        hint = close_match(suffix, _CHORDS) or f"known suffixes: major (none), {', '.join(s for s in _CHORDS if s)}"
        fail(f"chord: unknown chord type {capped(suffix)!r} in {capped(chord)!r}; {hint}")
    quality, intervals = _CHORDS[suffix].quality, _CHORDS[suffix].intervals
    root = _NATURAL[letter] + {"#": 1, "b": -1, "": 0}[accidental]
    start = _LETTERS.index(letter)
    notes = [letter + accidental] + [_note_name(start + steps, root + semis) for semis, steps in intervals]
    return {"chord": chord.strip(), "root": letter + accidental, "quality": quality, "notes": notes}


@tool("Music")
def note_frequency(note: Annotated[str, Field(description="The note, e.g. 'C4' (middle C).")]) -> dict[str, Any]:
    """Frequency of a musical note in twelve-tone equal temperament with A4 = 440 Hz, and its MIDI number. Notes are
    written in scientific pitch notation: letter, optional # or b, octave ('A4', 'C#5', 'Bb3')."""
    match = re.fullmatch(r"([A-Ga-g])(#|b)?(-?\d)", note.strip())
    if not match:
        fail(f"note: {note!r} is not a note; write a letter, an optional # or b and an octave, e.g. 'A4' or 'F#3'")
    letter, accidental, octave = match.group(1).upper(), match.group(2) or "", int(match.group(3))
    midi = 12 * (octave + 1) + _NATURAL[letter] + {"#": 1, "b": -1, "": 0}[accidental]
    if not 0 <= midi <= 127:
        fail(f"note: {note!r} is outside the MIDI range C-1 to G9")
    return {
        "note": letter + accidental + str(octave),
        "midi_number": midi,
        "frequency_hz": round(440 * 2 ** ((midi - 69) / 12), 2),
    }
