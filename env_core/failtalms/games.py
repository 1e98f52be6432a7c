"""FAIL-TaLMs Games tools: seeded dice, chess openings by ECO code and Scrabble scores (``data/tables/openings.jsonl``,
``letter_scores.json``)."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field

from undertow.env_core.failtalms.shared import Row, fail, in_range, read_mapping, read_table, seeded
from undertow.env_core.tools import tool


class Opening(Row):
    eco_code: str  # Encyclopaedia of Chess Openings
    name: str
    moves: str  # the main line


_OPENINGS = {row.eco_code: row for row in read_table("openings", Opening)}
_LETTER_SCORES = read_mapping("letter_scores", dict[str, int])  # standard Scrabble tile values


@tool("Games")
def roll_dice(
    sides: Annotated[int, Field(description="Faces per die, 2 to 100.", ge=2, le=100)],
    count: Annotated[int, Field(description="How many dice, 1 to 100.", ge=1, le=100)],
    seed: Annotated[int, Field(description="Any whole number fixing the rolls.", ge=0)],
) -> dict[str, Any]:
    """Roll dice. The rolls are fixed by the seed (the same seed, sides and count always roll the same numbers), so a
    game can be replayed. Returns each roll and the total."""
    in_range(sides, "sides", 2, 100)
    in_range(count, "count", 1, 100)
    if seed < 0:
        fail("seed: give a whole number of 0 or more")
    rolls = [1 + int(seeded("dice", seed, sides, i) * sides) for i in range(count)]
    return {"sides": sides, "count": count, "seed": seed, "rolls": rolls, "total": sum(rolls)}


@tool("Games")
def chess_opening(
    eco_code: Annotated[str, Field(description="The ECO code: a letter A-E and two digits.")],
) -> dict[str, Any]:
    """Name and main line of a chess opening from its ECO code (Encyclopaedia of Chess Openings, e.g. 'C50')."""
    code = eco_code.strip().upper()
    if not re.fullmatch(r"[A-E]\d\d", code):
        fail(f"eco_code: {eco_code!r} is not an ECO code; it is a letter A-E and two digits, e.g. 'B20'")
    if code not in _OPENINGS:
        fail(f"eco_code: no opening catalogued under {code}; catalogued codes: {', '.join(_OPENINGS)}")
    return _OPENINGS[code].model_dump()


@tool("Games")
def scrabble_score(word: Annotated[str, Field(description="The word, letters only.")]) -> dict[str, Any]:
    """Score an English word in Scrabble with standard tile values (no board bonuses). Returns the score per letter and
    the total."""
    text = word.strip().casefold()
    if not text or not text.isascii() or not text.isalpha() or len(text) > 15:
        fail(f"word: {word!r} is not a playable word; give 1 to 15 letters A-Z")
    return {
        "word": text.upper(),
        "letters": [_LETTER_SCORES[c] for c in text],
        "score": sum(_LETTER_SCORES[c] for c in text),
    }
