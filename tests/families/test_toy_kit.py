"""The family kit's worked example (docs/families.md) is true: each file it shows is the toy family's file as it
is, and that family — a data file, a ``@tool``, a prompt preset, typed details and a kit summary — builds and runs
through the CLI as users run it."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from helpers.cli import run_cli
from helpers.paths import REPO, TESTS

from undertow.cluster.store import RunStore
from undertow.env_core.errors import DataError
from undertow.env_core.model import Outcome
from undertow.env_core.plans import GIVE_UP_MARKER

DOCS = REPO / "docs" / "families.md"
FENCE = re.compile(r"(?:^`(?P<named>[^`\n]+)`\n)?^```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)


def shown_files() -> dict[str, str]:
    """The files the page shows whole: a Python block opening with ``# <path>``, or a block right under a line
    naming the path."""
    shown = {}
    for match in FENCE.finditer(DOCS.read_text()):
        body = match["body"]
        first, _, rest = body.partition("\n")
        if match["lang"] == "python" and first.startswith("# tests/toy_family/"):
            shown[first.removeprefix("# ")] = rest
        elif match["named"] and match["named"].startswith("tests/toy_family/"):
            shown[match["named"]] = body
    return shown


def test_every_file_of_the_worked_example_is_shown_as_it_is() -> None:
    shown = shown_files()
    expected = {
        "tests/toy_family/__init__.py",
        "tests/toy_family/tools.py",
        "tests/toy_family/build.py",
        "tests/toy_family/metrics.py",
        "tests/toy_family/data/capitals.jsonl",
        "tests/toy_family/data/prompts/toy/system.txt",
    }
    assert set(shown) == expected
    for path, text in shown.items():
        assert (REPO / path).read_text() == text, f"docs/families.md shows {path} other than it is"


def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(TESTS), "UNDERTOW_CACHE": str(tmp_path / "cache"), "COLUMNS": "200"}


def test_the_worked_example_builds_and_runs_under_its_own_preset(tmp_path: Path) -> None:
    built = run_cli("build", "toy_family:FAMILY", "countries=3", "--out", str(tmp_path / "suite"), env=env(tmp_path))
    assert built.returncode == 0, built.stdout + built.stderr
    (spec,) = [json.loads(line) for line in (tmp_path / "suite" / "tools.jsonl").read_text().splitlines()]
    # the spec comes from the typed signature and the docstring
    assert spec["name"] == "lookup_capital" and spec["description"] == "The capital city of a country."
    assert spec["parameters"]["properties"]["country"] == {
        "description": "the country's English name",
        "type": "string",
    }
    assert spec["parameters"]["required"] == ["country"] and spec["parameters"]["additionalProperties"] is False
    scenarios = (tmp_path / "suite" / "scenarios.jsonl").read_text().splitlines()
    assert [json.loads(line)["task"] for line in scenarios] == [
        "What is the capital of France?",
        "What is the capital of Japan?",
        "What is the capital of Kenya?",
    ]

    config = {
        "name": "toy-kit",
        "models": ["oracle"],
        "suites": [{"family": "toy_family:FAMILY", "countries": 2}],
        "agent": {"prompt": "toy"},
        "run": {"store": str(tmp_path / "runs")},
    }
    (tmp_path / "toy.yaml").write_text(yaml.safe_dump(config))
    ran = run_cli("run", str(tmp_path / "toy.yaml"), "--workers", "1", env=env(tmp_path), cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "toy: lookups per episode" in ran.stdout
    (run,) = (tmp_path / "runs").iterdir()
    results = RunStore(run).results()
    assert [r.details for r in results] == [{"lookups": 1}, {"lookups": 1}]  # stored as ToyDetails validated them
    assert all(r.outcome == Outcome.scored and r.correct for r in results)


def test_the_preset_is_what_the_model_is_told() -> None:
    from undertow.env_core.families import get_family
    from undertow.workers.agent import AgentConfig, system_prompt

    get_family("toy_family:FAMILY")  # registered as a sweep naming it registers it
    told = system_prompt(AgentConfig(prompt="toy"), "toy")
    assert told == (TESTS / "toy_family" / "data" / "prompts" / "toy" / "system.txt").read_text().rstrip("\n")
    # the generic agent's advice and give-up marker stay out of a family's preset unless asked for
    assert told.startswith("You answer questions about the capitals of countries.") and GIVE_UP_MARKER not in told


def test_an_unknown_preset_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    config = {
        "name": "toy-kit",
        "models": ["oracle"],
        "suites": [{"family": "toy_family:FAMILY", "countries": 1}],
        "agent": {"prompt": "tyo"},
    }
    (tmp_path / "toy.yaml").write_text(yaml.safe_dump(config))
    checked = run_cli("validate", str(tmp_path / "toy.yaml"), env=env(tmp_path), cwd=tmp_path)
    assert checked.returncode != 0
    assert "unknown prompt preset 'tyo'" in checked.stderr and "did you mean 'toy'" in checked.stderr


@pytest.fixture
def toy_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The toy family's package copied, imported from the copy (as a user's own package would be)."""
    package = tmp_path / "pkg" / "toy_family"
    shutil.copytree(TESTS / "toy_family", package, ignore=shutil.ignore_patterns("__pycache__"))
    for name in [m for m in sys.modules if m == "toy_family" or m.startswith("toy_family.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(package.parent))
    return package


def test_editing_a_data_file_rebuilds_and_a_bad_line_names_file_line_and_field(toy_copy: Path) -> None:
    from toy_family import build, tools

    config = build.ToySuite()
    before = build.source_digest(config)
    data = toy_copy / "data" / "capitals.jsonl"
    data.write_text(data.read_text().replace('"Lima"', '"Lima, Peru"'))
    assert build.source_digest(config) != before

    data.write_text(data.read_text() + '{"country": "Chile"}\n')
    tools.capitals.cache_clear()
    with pytest.raises(DataError) as caught:
        tools.capitals()
    assert str(caught.value).startswith(f"{data}:6: capital: Field required")
