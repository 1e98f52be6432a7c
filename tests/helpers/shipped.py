"""The shipped configs and suites as tests use them: each suite built once per session (the session's
``UNDERTOW_CACHE`` is shared by every xdist worker; a file lock keeps two workers from building the same suite at
once), and ``undertow run`` of a file under ``configs/`` as shipped, ``limit:``ed where its full size proves nothing
more (the full runs are ``make bench``'s, with their times in the README)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from filelock import FileLock

from helpers.cli import only_run, run_cli
from helpers.paths import CONFIGS, SPIDER_DEV
from undertow.env_core.suites import Suite, load_ref, suite_ref

_SPIDER = str(SPIDER_DEV)
# One limit-1 suite of every built-in family and text protocol: (suite entry, the protocol its episode runs
# under: the sweep's, or the one the family's mode picks)
ONE_OF_EACH: list[tuple[dict[str, Any], str]] = [
    ({"family": "smoke", "limit": 1}, "function_calling"),
    ({"family": "sqlfuncs", "spider": _SPIDER, "limit": 1}, "function_calling"),
    ({"family": "services", "limit": 1}, "function_calling"),
    ({"family": "failtalms", "limit": 1}, "function_calling"),
    ({"family": "liveapi", "spider": _SPIDER, "formulation": "slot", "mode": "direct", "limit": 1}, "direct"),
    ({"family": "liveapi", "spider": _SPIDER, "formulation": "rest", "mode": "react", "limit": 1}, "react"),
    ({"family": "middleware", "spider": _SPIDER, "environment": "database", "mode": "react", "limit": 1}, "react"),
    ({"family": "middleware", "spider": _SPIDER, "environment": "kb", "mode": "decoupled", "limit": 1}, "decoupled"),
]


def shipped_suite(entry: str | dict[str, Any]) -> Suite:
    """A suite entry as a sweep names it (``"services"``, ``{"family": "sqlfuncs", "spider": ...}``), built on first
    use into the session's cache and loaded."""
    ref = suite_ref(entry)
    build = {"family": ref.family, **ref.build_fields()}  # what decides the build (not limit, mode, ...)
    key = hashlib.sha256(json.dumps(build, sort_keys=True).encode()).hexdigest()[:16]
    with FileLock(Path(os.environ["UNDERTOW_CACHE"]) / f"build-{key}.lock"):
        return load_ref(ref)


def limits(config: str, limit: int) -> list[str]:
    """``suites.N.limit=LIMIT`` for every suite of a shipped config: the config as shipped, fewer scenarios."""
    import yaml

    count = len(yaml.safe_load((CONFIGS / config).read_text())["suites"])
    return [f"suites.{i}.limit={limit}" for i in range(count)]


def run_shipped(config: str, store: Path, *overrides: str, timeout: float = 900) -> tuple[Path, str]:
    """``undertow run configs/CONFIG --store STORE OVERRIDES``: the run folder and what it printed."""
    done = run_cli("run", str(CONFIGS / config), "--store", str(store), *overrides, timeout=timeout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return only_run(store), done.stdout


def report_layout(folder: Path, layout: str) -> str:
    """``undertow report FOLDER --layout LAYOUT``."""
    done = run_cli("report", str(folder), "--layout", layout, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout
