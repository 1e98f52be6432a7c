"""What the commands share: the two consoles, the option types, and how warnings and notes are shown.

Whatever a command prints that a model, a file or a user may have written goes out as a rich :class:`Text` of
:func:`printable` text: never read as markup (``[link=…]``) or emoji codes, and with every control character shown
escaped rather than sent to the terminal."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from undertow.cluster.report.text import printable

console = Console()
errors = Console(stderr=True)
if not console.is_terminal:  # logs and pipes: room for the whole table instead of rich's 80-column default
    console.width = max(console.width, 160)

Overrides = Annotated[list[str] | None, typer.Argument(help="dotted overrides, e.g. agent.max_turns=8 seeds=[0,1]")]
SkipInvalid = Annotated[bool, typer.Option("--skip-invalid", help="leave out invalid scenarios instead of stopping")]
Address = Annotated[str | None, typer.Option("--address", help="existing Ray cluster to run on")]
Workers = Annotated[int | None, typer.Option("--workers", min=1, help="worker actors (default: all CPUs)")]
DEFAULT_STORE = "runs"  # where the commands look for a run when no --store is given
StoreOpt = Annotated[str | None, typer.Option("--store", help="run store folder (default: run.store, 'runs')")]
RunArg = Annotated[str, typer.Argument(metavar="RUN", help="run id under the store, or a run folder")]
ConfigArg = Annotated[Path, typer.Argument(metavar="CONFIG", help="sweep config (YAML)")]
Format = Annotated[str, typer.Option("--format", help="table | json")]


def warn(message: str) -> None:
    """A warning in yellow; ``message`` is text, never rich markup (it may hold names and values users wrote, and
    error messages that quote a model)."""
    errors.print(plain(message, "yellow"), highlight=False, soft_wrap=True)


def info(message: str) -> None:
    console.print(plain(message), soft_wrap=True)


def plain(text: str, style: str = "", *, one_line: bool = False) -> Text:
    """``text`` to print as it is written: no markup, no emoji codes, control characters shown escaped."""
    return Text(printable(text, one_line=one_line), style=style)


def store_flag(location: str) -> str:
    """`` --store X`` for a hint that names a command on the run at ``location`` (its folder or ``s3://`` URI), so
    that the hint works as printed; "" when the run is in the default store, where every command looks anyway."""
    if location.startswith("s3://"):
        return f" --store {shlex.quote(location.rstrip('/').rsplit('/', 1)[0])}"
    root = Path(location).parent
    if root.resolve() == Path(DEFAULT_STORE).resolve():
        return ""
    return f" --store {shlex.quote(str(root))}"


def run_command(command: str, run_id: str, location: str, *options: str) -> str:
    """A command line on a run to show in a hint: ``undertow COMMAND RUN [OPTIONS] [--store X]``."""
    return " ".join(["undertow", command, shlex.quote(run_id), *options]) + store_flag(location)
