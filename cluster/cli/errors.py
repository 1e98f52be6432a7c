"""The one place where a problem becomes ``error: …`` on stderr, and the exit statuses the commands use.

Exit statuses (also in the README):

- 0: done.
- 1: a submitted job failed (``submit --wait``).
- 2: bad input: a config, an option, a suite, a run id; nothing was run.
- 3: the command ran, but none of its episodes could be scored (every one ended in ``infra_error`` or
  ``config_error``); the message says what to do.
- 130: interrupted (Ctrl-C); the message says how to resume.

With ``UNDERTOW_DEBUG=1`` (or ``undertow --debug``) a user error also prints its traceback.
"""

from __future__ import annotations

import functools
import os
import traceback
from collections.abc import Callable
from enum import IntEnum
from typing import ParamSpec, TypeVar

import typer
from rich.text import Text

from undertow.cluster import api
from undertow.cluster.cli.common import errors, plain
from undertow.env_core.errors import ConfigError

P = ParamSpec("P")
R = TypeVar("R")
DEBUG_VARIABLE = "UNDERTOW_DEBUG"
DEBUG_FLAG = [False]  # `undertow --debug`, set for each invocation


class ExitCode(IntEnum):
    OK = 0
    JOB_FAILED = 1
    BAD_INPUT = 2
    NOTHING_SCORED = 3
    INTERRUPTED = 130


class OptionError(ConfigError):
    """A bad value of an option that only the command line has (the API checks everything else)."""


def print_error(message: object) -> None:
    """``error: message`` on stderr; the message is text, never rich markup (it holds what users typed, and may
    quote what a model wrote)."""
    errors.print(Text.assemble(("error:", "bold red"), " ", plain(str(message))), highlight=False, soft_wrap=True)


def debugging() -> bool:
    return DEBUG_FLAG[0] or os.environ.get(DEBUG_VARIABLE, "") not in ("", "0")


def user_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Run a command so that a user error (:func:`undertow.cluster.api.is_user_error`) is reported in one line,
    ``error: …``, with exit status 2; anything else is a bug and keeps its traceback."""

    @functools.wraps(command)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except Exception as exc:
            if not api.is_user_error(exc):
                raise
            if debugging():
                errors.print(plain(traceback.format_exc()), highlight=False, soft_wrap=True)
            print_error(exc)
            raise typer.Exit(code=ExitCode.BAD_INPUT) from None

    return checked


def check_format(format: str) -> None:
    if format not in ("table", "json"):
        raise OptionError(f"--format: expected 'table' or 'json', got '{format}'")
