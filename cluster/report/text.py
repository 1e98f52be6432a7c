"""Text that a model (or a file) controls, made safe to show: nothing in it can act on the terminal or hide text.

A model's answer, tool arguments, observations, parse errors and error messages may carry an escape sequence
(``ESC ] 52`` writes the clipboard, ``ESC ] 0`` sets the window title, ``ESC [`` moves the cursor or conceals
text), a bare carriage return or backspace that overwrites what came before, or a bidi override (U+202E) that
reorders it. :func:`printable` shows each such character as a visible escape (``\\x1b``, ``\\u202e``) instead, so
the reader sees that something was there; every other character, accented letters, CJK and emoji included, is
kept as it is. :func:`printable_json` does the same for JSON text, where the escape keeps the JSON valid.
"""

from __future__ import annotations

import re

# What is escaped besides C0 (U+0000-U+001F): DEL, C1, and the Unicode categories Cf (format: bidi controls,
# zero-width and invisible characters, tags), Cs (lone surrogates: UTF-8 cannot even encode them), Zl and Zp (line
# and paragraph separators, which some terminals break lines on); but not ZWNJ and ZWJ (U+200C, U+200D), which join
# letters in Indic and Persian scripts and the parts of an emoji and hide nothing. A test checks it with unicodedata.
_FORMAT = (
    "\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200e\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_ONE_LINE = re.compile(f"\r\n|[\x00-\x1f{_FORMAT}]")
_MULTI_LINE = re.compile(f"\r\n|[\x00-\x08\x0b-\x1f{_FORMAT}]")  # \t and \n stay
_IN_JSON = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f{_FORMAT}]")  # \t, \n and \r are whitespace in JSON text
NEWLINE_MARK = "⏎"


def _escaped(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _one_line(match: re.Match[str]) -> str:
    found = match.group()
    if found in ("\n", "\r\n"):
        return NEWLINE_MARK
    return " " if found == "\t" else _escaped(found)


def _multi_line(match: re.Match[str]) -> str:
    found = match.group()
    return "\n" if found == "\r\n" else _escaped(found)  # a Windows line end is a line end, not an overwrite


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` safe to print on a terminal (or to show in a page): control and format characters and lone
    surrogates are written as visible escapes (``\\x1b``, ``\\u202e``, ``\\udc80``); newlines and tabs stay, or
    with ``one_line`` (a table cell, a line of a list) a newline becomes ``⏎`` and a tab a space."""
    if one_line:
        return _ONE_LINE.sub(_one_line, text)
    return _MULTI_LINE.sub(_multi_line, text)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xD800 <= code < 0xE000:  # a lone surrogate: U+FFFD, so that the JSON holds only well-formed strings
        return "\\ufffd"
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # outside the BMP: JSON writes the UTF-16 surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def printable_json(text: str) -> str:
    """JSON text (from any encoder) with every character :func:`printable` would escape written as a JSON escape
    instead: the same value, and nothing a terminal acts on. Outside strings JSON has only whitespace, so every
    such character is inside a string, where an escape means the same."""
    return _IN_JSON.sub(_json_escape, text)
