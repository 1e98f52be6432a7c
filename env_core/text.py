"""Reading model text: the Markdown code fences a model wraps around what it writes (```` ```json ... ``` ````,
```` ```python ... ``` ````). Every reader of model text — tool-call parsers, agent loops, answer scorers, emulated
tools, a family's final-answer reader — removes them here, so a fence means the same thing to all of them.
"""

from __future__ import annotations

import re

_TICKS = "```"

# A fence's language tag: any word alone on the opening line (```sqlite⏎), or one of the languages a model writes
# a value, a call or code in, also directly before it (```json{...}```, ```python print(1)```). Any other word after
# the backticks is content, never a tag: ```true```, ```SELECT a FROM t```.
_TAG = r"(?:[A-Za-z][\w+#.-]*(?=[ \t]*(?:\r?\n|$))|(?i:json|python|py|tool_code|sql)\b)?"
_OPENING = re.compile(_TICKS + _TAG)
_BLOCK = re.compile(_TICKS + _TAG + r"(.*?)" + _TICKS, re.DOTALL)


def strip_fence(text: str) -> str:
    """``text`` without the code fence around it: an opening fence at its start (three backticks and an optional
    language tag: a word alone on that line, or json, python, py, tool_code or sql in any case) and a closing fence
    at its end are removed, and what is left is stripped of surrounding whitespace. Either fence alone is removed
    too (a reply cut off before its closing fence, say), and whitespace around the fences does not count. Text
    with a fence at neither end comes back unchanged (its indentation kept); fences inside the text stay
    (:func:`fenced_blocks` finds those)."""
    stripped = text.strip()
    opened = _OPENING.match(stripped)
    start = opened.end() if opened else 0
    closed = stripped.endswith(_TICKS) and len(stripped) - len(_TICKS) >= start
    if opened is None and not closed:
        return text
    return stripped[start : len(stripped) - len(_TICKS) if closed else len(stripped)].strip()


def fenced_blocks(text: str) -> list[str]:
    """The content of every closed code fence in ``text`` (prose around them allowed), in order, each without
    its language tag and stripped of surrounding whitespace. A fence that is never closed is no block."""
    return [block.strip() for block in _BLOCK.findall(text)]
