"""The ``undertow`` command as users run it: the installed script in a real process, or the same Typer app in the
test process (faster, for commands that start no Ray and need no fresh interpreter)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from typer.testing import CliRunner

# The console script the install put next to the interpreter running the tests (.venv/bin/undertow).
UNDERTOW = Path(sys.executable).parent / "undertow"


def run_cli(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
    columns: int = 200,
) -> subprocess.CompletedProcess[str]:
    """``undertow ARGS`` in a new process (its own Ray where the command starts one). ``env`` replaces the
    environment (the test process's by default); a wide terminal so that tables are not wrapped."""
    environment = dict(os.environ if env is None else env)
    environment.setdefault("COLUMNS", str(columns))
    return subprocess.run(
        [str(UNDERTOW), *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout, check=False
    )


def invoke(*args: str) -> tuple[int, str, str]:
    """``undertow ARGS`` in this process through Typer's runner: (exit code, stdout, stderr)."""
    from undertow.cluster.cli import app

    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def one_line(text: str) -> str:
    """The only line of ``text`` (a user error is reported in exactly one)."""
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


def only_run(store: Path) -> Path:
    """The one run folder in a store."""
    (folder,) = [path for path in store.iterdir() if (path / "manifest.json").is_file()]
    return folder
