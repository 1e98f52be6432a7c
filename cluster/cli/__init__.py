"""The ``undertow`` command line: a thin layer over :mod:`undertow.cluster.api` that parses options, shows progress and
prints tables. One module per group of commands (:mod:`.runs`, :mod:`.results`, :mod:`.suites`); user errors are
reported in one place (:mod:`.errors`)."""

from __future__ import annotations

import sys
import traceback
from types import TracebackType

import typer

from undertow import __version__
from undertow.cluster.cli import errors, results, runs, suites
from undertow.cluster.report.text import printable

app = typer.Typer(
    help="Evaluate tool-using LLM agents under tool failures.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(wanted: bool) -> None:
    if wanted:
        typer.echo(f"undertow {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    debug: bool = typer.Option(False, "--debug", help="print the traceback of an error too"),
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="print the version and exit"
    ),
) -> None:
    errors.DEBUG_FLAG[0] = debug  # per invocation: the flag does not outlive the command


# in the order `undertow --help` lists them
app.command()(runs.run)
app.command()(results.status)
app.command()(runs.resume)
app.command()(runs.rerun)
app.command()(results.report)
app.command()(results.compare)
app.command()(results.sync)
app.command()(runs.validate)
app.command()(suites.build)
app.command(name="import")(suites.import_)
app.command()(results.replay)
app.command()(results.episodes)
app.command()(runs.submit)
app.command(name="retrieval-eval")(suites.retrieval_eval)
app.command(name="list")(suites.list_builtins)
app.command()(suites.doctor)
app.add_typer(suites.suites_app, name="suites")


def _print_bug(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    # a bug's traceback can quote what a model wrote (an exception's message): escaped like all the other output
    sys.stderr.write(printable("".join(traceback.format_exception(kind, exc, tb))))


def main() -> None:
    sys.excepthook = _print_bug
    app()
