"""A benchmark script's module, for tests that reuse what it generates. ``benchmarks/`` is run from the repository
root (``python -m benchmarks.X``) and is not installed; the tests run with ``python -P`` (the root is not on the
path, as for users), so the module is loaded from its file."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from helpers.paths import REPO


def load_benchmark(name: str) -> ModuleType:
    qualified = f"benchmarks.{name}"
    if qualified in sys.modules:
        return sys.modules[qualified]
    spec = importlib.util.spec_from_file_location(qualified, REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    spec.loader.exec_module(module)
    return module
