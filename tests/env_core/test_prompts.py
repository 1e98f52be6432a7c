"""Prompt presets as data: a preset's parts are the text files of its folder, a part may be a template with named
fields, and numbered parts come back in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from undertow.env_core.errors import ConfigError, DataError
from undertow.env_core.prompts import fill, load_preset, presets


def test_fill_replaces_the_named_fields_only_and_reads_no_value_twice() -> None:
    template = 'Reply as [{"name": "f", "arguments": {"x": 1}}] to {task}; {other} stays.'
    filled = fill(template, task="{other} and {task}")
    assert filled == 'Reply as [{"name": "f", "arguments": {"x": 1}}] to {other} and {task}; {other} stays.'


def write(folder: Path, parts: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    for name, text in parts.items():
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")
    return folder


def test_a_presets_parts_are_its_text_files(tmp_path: Path) -> None:
    parts = {
        "intro": "Solve it.\n",
        "task": "Task: {task}\n",
        "closing": "Ends with a line break.\n\n",
        "example_closed_2": "second\n",
        "example_closed_1": "first\n",
        "example_closed_4": "never reached: 3 is missing\n",
    }
    folder = write(tmp_path / "mine", parts)
    (folder / "notes.md").write_text("not a part")
    preset = load_preset(folder, protocol="codeact", give_up_marker=True)
    assert preset.name == "mine" and preset.protocol == "codeact" and preset.give_up_marker
    assert not preset.failure_advice
    assert set(preset.parts) == {"intro", "task", "closing", "example_closed_1", "example_closed_2", "example_closed_4"}
    assert preset.part("intro") == "Solve it."  # one trailing newline is the file's, not the text's
    assert preset.part("closing") == "Ends with a line break.\n"
    assert preset.part("task", task="Sum {x}") == "Task: Sum {x}"
    assert preset.series("example_closed") == ["first", "second"]
    assert preset.series("example_search") == []
    assert presets(preset) == {"mine": preset}


def test_a_missing_part_and_an_empty_folder_are_errors_that_say_where(tmp_path: Path) -> None:
    preset = load_preset(write(tmp_path / "mine", {"intro": "x"}))
    with pytest.raises(ConfigError, match=r"prompt preset 'mine' has no part 'intr'; did you mean 'intro'\?"):
        preset.part("intr")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match=r"holds no \.txt part"):
        load_preset(empty)
