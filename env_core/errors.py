"""undertow's one error hierarchy: every problem it reports is a category, a place and a hint.

===============  ==============================================================  =================================
category          what it means                                                  what happens to an episode
===============  ==============================================================  =================================
config            the sweep config, an option or a suite reference is wrong       ``config_error``: not retried,
data              a scenario file, a suite folder or a database is wrong          fix the input and run again
model             the model's reply or request is unusable                        ``model_error``: charged to it
infrastructure    an endpoint, a worker, the store or the cluster failed          ``infra_error``: rerunnable
sandbox           the sandbox that runs model-written code could not do its job   ``infra_error``: rerunnable
violation         model-written code hit a limit or a rule of the sandbox          ``sandbox_violation``: charged
                                                                                 to the model, not rerun
===============  ==============================================================  =================================

``classify`` gives the category of any exception by its type (never by its text): an exception that is not an
:class:`UndertowError` is a bug in undertow, filed under infrastructure so that it is never charged to the model.
The command line prints an :class:`UndertowError` as one line, ``error: FILE:LINE: FIELD: message; hint``.
"""

from __future__ import annotations

import difflib
import re
import traceback
from collections.abc import Iterable
from enum import StrEnum
from typing import ClassVar


class Category(StrEnum):
    config = "config"
    data = "data"
    model = "model"
    infrastructure = "infrastructure"
    sandbox = "sandbox"
    violation = "violation"


class UndertowError(Exception):
    """A problem phrased for the user: ``message``, where it is (``file``, ``line``, ``field``) and a ``hint``."""

    category: ClassVar[Category] = Category.infrastructure

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.field = field
        self.hint = hint

    def __reduce__(self) -> tuple[object, ...]:
        # keyword-only arguments do not survive pickling by default; Ray ships these between processes
        return (_rebuild, (type(self), self.message, self.file, self.line, self.field, self.hint))

    @property
    def where(self) -> str:
        """``file:line: field`` as far as it is known ("" when nothing is)."""
        place = f"{self.file}:{self.line}" if self.file and self.line else (self.file or "")
        return ": ".join(p for p in (place, self.field or "") if p)

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        return f"{text}; {self.hint}" if self.hint else text

    @property
    def rerunnable(self) -> bool:
        return rerunnable(self)


def _rebuild(
    kind: type[UndertowError], message: str, file: str | None, line: int | None, field: str | None, hint: str | None
) -> UndertowError:
    error = kind.__new__(kind)
    UndertowError.__init__(error, message, file=file, line=line, field=field, hint=hint)
    return error


class ConfigError(UndertowError, ValueError):
    """The sweep config, a command-line option or a suite reference is wrong."""

    category = Category.config


class DataError(UndertowError, ValueError):
    """A scenario file, a suite folder, a database or a source the user pointed at is wrong."""

    category = Category.data


class ModelError(UndertowError):
    """The model's reply is unusable (context overflow, a refused request): charged to the model."""

    category = Category.model


class InfraError(UndertowError, RuntimeError):
    """An endpoint, a worker, the store or the cluster failed: the episode can run again later."""

    category = Category.infrastructure


class SandboxError(UndertowError, RuntimeError):
    """The sandbox for model-written code could not start or keep running."""

    category = Category.sandbox


class SandboxViolation(UndertowError):
    """Model-written code hit a limit or a rule of the sandbox (too many tool calls, too much memory across its
    processes, a message or a solution over the size cap, CPU time): the model's doing, so the episode ends."""

    category = Category.violation


def classify(exc: BaseException) -> Category:
    """The category of any exception, by its type. Anything that is not ours (a bug, an unreachable store) is
    infrastructure: it is never charged to the model."""
    return exc.category if isinstance(exc, UndertowError) else Category.infrastructure


def rerunnable(exc: BaseException) -> bool:
    """Whether running the same work again could end differently: infrastructure and sandbox failures are;
    a config, data or model problem fails the same way every time."""
    return classify(exc) in (Category.infrastructure, Category.sandbox)


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``known``, else the known names (at most 12), else ""."""
    choices = sorted({str(k) for k in known})
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    if close:
        return f"did you mean '{close[0]}'?"
    if not choices:
        return ""
    shown = ", ".join(choices[:12]) + (f", … ({len(choices)} in all)" if len(choices) > 12 else "")
    return f"known: {shown}"


def close_match(name: str, known: Iterable[str]) -> str | None:
    """``"did you mean 'x'?"`` when one of ``known`` is close to ``name``, else None: the hint for a message that
    lists the known names itself."""
    hint = did_you_mean(name, known)
    return hint if hint.startswith("did you mean") else None


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TRACE_FRAMES = 4  # the last frames of a traceback kept on an episode


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def describe(exc: BaseException) -> str:
    """``Type: message`` on one line, without terminal colour codes (what an episode's ``error`` holds)."""
    message = " ".join(strip_ansi(str(exc)).split())
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def last_frames(exc: BaseException, frames: int = TRACE_FRAMES) -> str:
    """The last ``frames`` frames of ``exc``'s traceback, one ``file:line in function`` per line."""
    summary = traceback.extract_tb(exc.__traceback__)[-frames:]
    return "\n".join(f"{f.filename}:{f.lineno} in {f.name}" for f in summary)
