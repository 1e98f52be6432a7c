"""How a long operation talks back to its caller: optional progress callbacks (:class:`Hooks`), and which
exceptions are problems with the caller's input, phrased for the user (:func:`is_user_error`), rather than bugs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from undertow.cluster.api.outcomes import RunOutcome, RunProgress, RunStart
from undertow.cluster.api.planning import Plan
from undertow.env_core.errors import UndertowError
from undertow.storage import StorageUnavailable

# Problems phrased for the user that stop a command before (or instead of) running anything: every
# :class:`undertow.env_core.errors.UndertowError` (config, data, an unreachable cluster...), plus these from outside it.
USER_ERRORS: tuple[type[Exception], ...] = (UndertowError, FileNotFoundError, StorageUnavailable)


def is_user_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a problem with the caller's input (a config, a run id, a cluster address...) rather than a
    bug: its message is meant for the user as it is."""
    return isinstance(exc, USER_ERRORS)


def _ignore(_: Any) -> None:
    return None


@dataclass
class Hooks:
    """Optional callbacks through which a long operation reports as it goes; any left out is not called.

    ``planned``: the plan is made (scenarios left out by ``skip_invalid`` are in ``Plan.skipped``). ``started``:
    the store holds the plan and the work to do is known. ``progress``: once before the first shard runs, then
    after each committed shard. ``executed``: every shard ran and the summary is ready (its ``publish`` is still
    None). ``notice``: deployments starting and stopping. ``info``: what publishing did (uploads, MLflow).
    ``warning``: trouble that did not stop the operation. ``stage``: a step of a build begins."""

    planned: Callable[[Plan], None] = _ignore
    started: Callable[[RunStart], None] = _ignore
    progress: Callable[[RunProgress], None] = _ignore
    executed: Callable[[RunOutcome], None] = _ignore
    notice: Callable[[str], None] = _ignore
    info: Callable[[str], None] = _ignore
    warning: Callable[[str], None] = _ignore
    stage: Callable[[str], None] = _ignore
