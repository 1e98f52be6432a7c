"""The one place where a problem with the user's input becomes ``error: …`` on stderr and exit status 2."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer

from cluster import api
from cluster.cli.common import errors

P = ParamSpec("P")
R = TypeVar("R")


class OptionError(ValueError):
    """A bad value of an option that only the command line has (the API checks everything else)."""


def print_error(message: object) -> None:
    errors.print(f"[bold red]error:[/bold red] {message}", highlight=False, soft_wrap=True)


def user_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Run a command so that a user error (:func:`cluster.api.is_user_error`, or an :class:`OptionError`) is
    reported in one message, ``error: …``, with exit status 2; anything else is a bug and keeps its traceback."""

    @functools.wraps(command)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except Exception as exc:
            if not (isinstance(exc, OptionError) or api.is_user_error(exc)):
                raise
            print_error(exc)
            raise typer.Exit(code=2) from None

    return checked


def check_format(format: str) -> None:
    if format not in ("table", "json"):
        raise OptionError(f"--format: expected 'table' or 'json', got '{format}'")
