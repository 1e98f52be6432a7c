"""The one code-fence reader every reader of model text uses (parsers, agent loops, scorers, emulated tools)."""

from __future__ import annotations

import time

import pytest

from undertow.env_core.text import fenced_blocks, strip_fence


@pytest.mark.parametrize(
    ("text", "inner"),
    [
        # a fence with or without a language tag, in any of the shapes models write
        ('```json\n{"a": 1}\n```', '{"a": 1}'),
        ('```JSON\n{"a": 1}\n```', '{"a": 1}'),
        ("```python\nprint(1)\n```", "print(1)"),
        ("```py\nprint(1)\n```", "print(1)"),
        ("```sqlite\nSELECT 1\n```", "SELECT 1"),
        ("```\n[1, 2]\n```", "[1, 2]"),
        ('```json{"a": 1}```', '{"a": 1}'),
        ('```json {"a": 1}```', '{"a": 1}'),
        ("```sql SELECT a FROM t```", "SELECT a FROM t"),
        ("```tool_code\nf(x=1)\n```", "f(x=1)"),
        ("```json\r\n[1]\r\n```", "[1]"),
        # a word that is not a tag stays: the fence holds it
        ("```true```", "true"),
        ("```SELECT a FROM t```", "SELECT a FROM t"),
        ("```pythonic print(1)```", "pythonic print(1)"),
        ("```pythonic\nx```", "x"),  # alone on its line, any word is a tag
        # whitespace around and inside the fences
        ("  \n```json\n  [1]  \n```  \n", "[1]"),
        ("```python\n    x = 1\n```", "x = 1"),
        # a fence that is not closed, or a closing fence alone
        ('```json\n{"a": 1}', '{"a": 1}'),
        ("[1, 2]\n```", "[1, 2]"),
        ("```", ""),
        ("```json", ""),
        ("``````", ""),
        # two fences: only the outer ones go
        ("```json\n[1]\n```\nand\n```json\n[2]\n```", "[1]\n```\nand\n```json\n[2]"),
    ],
)
def test_strip_fence_removes_the_fence_around_a_text(text: str, inner: str) -> None:
    assert strip_fence(text) == inner


@pytest.mark.parametrize(
    "text",
    ["", "plain answer", "  indented code\n", 'Here: ```json\n{"a": 1}\n``` done', "a `tick` or two ``"],
)
def test_strip_fence_leaves_unfenced_text_unchanged(text: str) -> None:
    assert strip_fence(text) == text


@pytest.mark.parametrize(
    ("text", "blocks"),
    [
        ('Call:\n```json\n{"name": "f"}\n```\nthen', ['{"name": "f"}']),
        ("```json\n[1]\n``` and ```python\nf()\n```", ["[1]", "f()"]),
        ("```\nno tag\n```", ["no tag"]),
        ("```true```", ["true"]),
        ('```json{"a": 1}```', ['{"a": 1}']),
        ('text ```json\n{"a": 1}', []),  # never closed: no block
        ("no fence at all", []),
    ],
)
def test_fenced_blocks_finds_every_closed_fence(text: str, blocks: list[str]) -> None:
    assert fenced_blocks(text) == blocks


def test_fences_of_hostile_size_are_read_in_linear_time() -> None:
    started = time.perf_counter()
    for text in (" " * 200_000 + "x", "```" + "a" * 200_000, "```" * 50_000, "```json\n" + "\n" * 200_000):
        strip_fence(text)
        fenced_blocks(text)
    assert time.perf_counter() - started < 2.0
