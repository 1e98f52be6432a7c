"""What the commands share: the two consoles, the option types, and how warnings and notes are shown."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

console = Console()
errors = Console(stderr=True)
if not console.is_terminal:  # logs and pipes: room for the whole table instead of rich's 80-column default
    console.width = max(console.width, 160)

Overrides = Annotated[list[str] | None, typer.Argument(help="dotted overrides, e.g. agent.max_turns=8 seeds=[0,1]")]
SkipInvalid = Annotated[bool, typer.Option("--skip-invalid", help="leave out invalid scenarios instead of stopping")]
Address = Annotated[str | None, typer.Option("--address", help="existing Ray cluster to run on")]
Workers = Annotated[int | None, typer.Option("--workers", min=1, help="worker actors (default: all CPUs)")]
StoreOpt = Annotated[str | None, typer.Option("--store", help="run store folder (default: run.store, 'runs')")]
RunArg = Annotated[str, typer.Argument(metavar="RUN", help="run id under the store, or a run folder")]
ConfigArg = Annotated[Path, typer.Argument(metavar="CONFIG", help="sweep config (YAML)")]
Format = Annotated[str, typer.Option("--format", help="table | json")]


def warn(message: str) -> None:
    errors.print(f"[yellow]{message}[/yellow]", highlight=False, soft_wrap=True)


def info(message: str) -> None:
    console.print(message, soft_wrap=True)
