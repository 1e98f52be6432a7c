"""A benchmark script's module, for tests that reuse what it generates. ``benchmarks/`` is run from the repository
root (``python -m benchmarks.X``) and is not installed; the tests run with ``python -P`` (the root is not on the
path, as for users), so the module is loaded from its file, after the package's own ``__init__`` (the scripts share
helpers from it)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from helpers.paths import REPO


def load_benchmark(name: str) -> ModuleType:
    if "benchmarks" not in sys.modules:
        _load("benchmarks", REPO / "benchmarks" / "__init__.py", package=True)
    qualified = f"benchmarks.{name}"
    if qualified in sys.modules:
        return sys.modules[qualified]
    return _load(qualified, REPO / "benchmarks" / f"{name}.py")


def _load(qualified: str, path: Path, package: bool = False) -> ModuleType:
    locations = [str(path.parent)] if package else None
    spec = importlib.util.spec_from_file_location(qualified, path, submodule_search_locations=locations)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    spec.loader.exec_module(module)
    return module
