"""Suites: a family's tool universe plus its scenarios, built in or loaded from a folder.

A suite folder holds ``suite.json`` (name, family, version), ``tools.jsonl``, ``scenarios.jsonl`` and, for
SQLite-backed families, ``database.sqlite``. ``load_suite`` resolves a built-in name or a folder, optionally swaps in
another scenario file, and checks every scenario against the tool universe before anything runs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from env_core.environment import Environment
from env_core.faults import Setting, resolve_faults
from env_core.model import Scenario, Strict, ToolSpec, Versioned
from env_core.scenarios import (
    ScenarioFileError,
    describe_validation_error,
    read_scenarios,
    scenario_problems,
    write_scenarios,
)
from env_core.search import LexicalSearch, Searcher, ToolAccess
from env_core.tools import MAIN, SqliteToolBox, ToolBox


@dataclass
class Suite:
    name: str
    family: str
    version: str
    toolbox: ToolBox
    scenarios: list[Scenario]
    skipped: list[str] = field(default_factory=list)  # invalid scenario lines skipped with --skip-invalid

    @cached_property
    def by_id(self) -> dict[str, Scenario]:
        return {s.id: s for s in self.scenarios}

    @cached_property
    def searcher(self) -> LexicalSearch:
        return LexicalSearch(self.toolbox.specs.values())

    def environment(
        self,
        scenario: Scenario,
        seed: int,
        setting: Setting,
        access: ToolAccess | None = None,
        searcher: Searcher | None = None,
    ) -> Environment:
        """One episode's environment: faults resolved against the scenario, tools shown as ``access`` says. Open
        access searches with ``searcher`` (a retrieval index), or the built-in lexical search."""
        access = access or ToolAccess()
        faults = resolve_faults(scenario, setting)
        shown = access.apply(scenario, list(self.toolbox.specs), seed)
        search = (searcher or self.searcher) if access.mode == "open" else None
        return Environment(shown, self.toolbox, seed=seed, faults=faults, search=search, max_results=access.max_results)

    def content_hash(self) -> str:
        """sha256 over tools, scenarios and data: the identity of what was evaluated."""
        digest = hashlib.sha256()
        for spec in self.toolbox.specs.values():
            digest.update(spec.model_dump_json().encode())
        for scenario in self.scenarios:
            digest.update(scenario.model_dump_json().encode())
        if isinstance(self.toolbox, SqliteToolBox):
            for name in self.toolbox.sources:
                digest.update(name.encode())
                digest.update(self.toolbox.database_bytes(name))
        return digest.hexdigest()


class SuiteError(ValueError):
    pass


def _build_smoke() -> Suite:
    from env_core.smoke import build

    toolbox = SqliteToolBox(build.TOOLS, build.build_database())
    return Suite(
        name="smoke",
        family=build.FAMILY,
        version=build.SUITE_VERSION,
        toolbox=toolbox,
        scenarios=build.build_scenarios(toolbox),
    )


BUILTIN_SUITES = {"smoke": _build_smoke}


@cache
def _builtin(name: str) -> Suite:
    return BUILTIN_SUITES[name]()


def _toolbox_class(kind: str) -> type[SqliteToolBox]:
    if kind == "sqlfuncs":
        from env_core.sqlfuncs.tools import SqlFunctionToolBox

        return SqlFunctionToolBox
    return SqliteToolBox


class SuiteMeta(Versioned):
    """``suite.json`` of a suite folder."""

    name: str
    family: str
    version: str = "0"
    toolbox: Literal["sqlite", "sqlfuncs"] = "sqlite"
    databases: dict[str, str] = Field(default_factory=lambda: {MAIN: "database.sqlite"})


def write_suite(suite: Suite, folder: str | Path) -> Path:
    """Write a SQLite-backed suite as a folder that ``load_suite(path=...)`` reads back."""
    if not isinstance(suite.toolbox, SqliteToolBox):
        raise SuiteError(f"suite '{suite.name}' is not SQLite-backed; no folder format for it yet")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    names = list(suite.toolbox.sources)
    files = {MAIN: "database.sqlite"} if names == [MAIN] else {n: f"databases/{n}.sqlite" for n in names}
    meta = SuiteMeta(name=suite.name, family=suite.family, version=suite.version, databases=files)
    (folder / "suite.json").write_text(meta.model_dump_json(indent=2) + "\n")
    with (folder / "tools.jsonl").open("w") as handle:
        for spec in suite.toolbox.specs.values():
            handle.write(spec.model_dump_json() + "\n")
    write_scenarios(folder / "scenarios.jsonl", suite.scenarios)
    for name, file in files.items():
        (folder / file).parent.mkdir(parents=True, exist_ok=True)
        (folder / file).write_bytes(suite.toolbox.database_bytes(name))
    return folder


def _read_folder(folder: Path, scenarios: Path | None, skip_invalid: bool) -> Suite:
    """A suite folder; ``scenarios`` (if given) replaces the folder's own scenario file, which is then not read."""
    meta_path = folder / "suite.json"
    if not meta_path.is_file():
        raise SuiteError(f"{folder}: not a suite folder (no suite.json)")
    try:
        meta = SuiteMeta.model_validate_json(meta_path.read_text())
    except ValidationError as exc:
        if any(e["type"] == "json_invalid" for e in exc.errors()):
            raise SuiteError(f"{meta_path}: not valid JSON") from exc
        raise SuiteError(f"{meta_path}: {describe_validation_error(exc)}") from exc
    specs = []
    tools_path = folder / "tools.jsonl"
    if not tools_path.is_file():
        raise SuiteError(f"{tools_path}: tool file not found")
    for number, line in enumerate(tools_path.read_text().splitlines(), start=1):
        if line.strip():
            try:
                specs.append(ToolSpec.model_validate_json(line))
            except ValidationError as exc:
                raise SuiteError(f"{tools_path}:{number}: invalid tool: {describe_validation_error(exc)}") from exc
    databases = {name: folder / file for name, file in meta.databases.items()}
    for database in databases.values():
        if not database.is_file():
            raise SuiteError(f"{database}: database file not found")
    try:
        toolbox = _toolbox_class(meta.toolbox)(specs, databases)
    except sqlite3.DatabaseError as exc:
        raise SuiteError(f"cannot open as SQLite: {exc}") from exc
    except ValueError as exc:  # a tool the toolbox cannot run (no binding.sql, duplicate name)
        raise SuiteError(f"{tools_path}: {exc}") from exc
    loaded = read_scenarios(scenarios or folder / "scenarios.jsonl", skip_invalid=skip_invalid)
    return Suite(meta.name, meta.family, meta.version, toolbox, loaded.scenarios, loaded.skipped)


def load_suite(
    name: str | None = None,
    path: str | Path | None = None,
    scenarios: str | Path | None = None,
    skip_invalid: bool = False,
    limit: int | None = None,
) -> Suite:
    """Resolve a suite by built-in ``name`` or by ``path`` to a folder; ``scenarios`` replaces its scenario file.

    Raises ``SuiteError`` or ``ScenarioFileError`` naming the file, the line and the problem. With
    ``skip_invalid`` the bad scenarios are left out and listed in ``Suite.skipped``.
    """
    if (name is None) == (path is None):
        raise SuiteError("give a suite either a built-in name or a path")
    if name is not None:
        if name not in BUILTIN_SUITES:
            raise SuiteError(f"unknown suite '{name}'; built-in suites: {', '.join(sorted(BUILTIN_SUITES))}")
        base = _builtin(name)
        suite = Suite(base.name, base.family, base.version, base.toolbox, list(base.scenarios))
    else:
        folder = Path(path)  # type: ignore[arg-type]
        if not folder.exists():
            raise SuiteError(f"{folder}: suite folder not found")
        suite = _read_folder(folder, Path(scenarios) if scenarios is not None else None, skip_invalid)
    source = str(scenarios or path or f"built-in suite '{name}'")
    if scenarios is not None and name is not None:
        loaded = read_scenarios(scenarios, skip_invalid=skip_invalid)
        suite.scenarios, suite.skipped = loaded.scenarios, loaded.skipped
    valid, problems = [], []
    for scenario in suite.scenarios:
        found = scenario_problems(scenario, suite.toolbox.specs, suite.family)
        if found:
            problems.extend(f"{source}: scenario '{scenario.id}': {p}" for p in found)
        else:
            valid.append(scenario)
    if problems and not skip_invalid:
        raise ScenarioFileError(problems)
    suite.scenarios = valid[:limit] if limit is not None else valid
    suite.skipped = suite.skipped + problems
    if not suite.scenarios:
        raise SuiteError(f"{source}: no valid scenarios to run")
    return suite


class SuiteRef(Strict):
    """How a sweep names a suite: a built-in ``name``, a ``path`` to a built suite folder, or a ``spider`` folder
    compiled into a ``sqlfuncs`` suite on first use (cached by content hash). Optionally another scenario file, a
    limit on the number of scenarios, and how tools reach the agent (``access``)."""

    name: str | None = None
    path: str | None = None
    spider: str | None = Field(default=None, description="Spider-format folder, compiled with seed and augment")
    seed: int = Field(default=0, description="spider: naming and augmentation seed")
    augment: int = Field(default=1, ge=0, description="spider: augmented variants per kept question")
    scenarios: str | None = None
    limit: int | None = Field(default=None, ge=1)
    skip_invalid: bool = False
    access: ToolAccess = Field(default_factory=ToolAccess)
    alias: str | None = Field(default=None, description="name in reports (default: derived from the source)")

    @model_validator(mode="after")
    def _one_source(self) -> SuiteRef:
        if sum(x is not None for x in (self.name, self.path, self.spider)) != 1:
            raise ValueError("give exactly one of 'name' (a built-in suite), 'path' (a suite folder), 'spider'")
        if self.name is not None and self.name not in BUILTIN_SUITES:
            raise ValueError(f"unknown suite '{self.name}'; built-in suites: {', '.join(sorted(BUILTIN_SUITES))}")
        return self

    @property
    def label(self) -> str:
        if self.alias:
            return self.alias
        base = self.name or Path(self.path or self.spider or "").name
        default = ToolAccess()
        return base if self.access == default else f"{base}:{self.access.label}"

    def load(self) -> Suite:
        return _load_cached(self.model_dump_json(exclude={"access", "alias"}))


def suite_cache() -> Path:
    """Where suites compiled on first use are kept (``UNDERTOW_CACHE``, default ``~/.cache/undertow``)."""
    return Path(os.environ.get("UNDERTOW_CACHE", Path.home() / ".cache" / "undertow")) / "suites"


def build_spider(spider: str | Path, seed: int, augment: int) -> Path:
    """Compile a Spider folder once per (content, seed, augment); later calls reuse the built folder."""
    from env_core.sqlfuncs.build import build_suite, write_build
    from env_core.sqlfuncs.compile import read_spider

    folder = Path(spider)
    if not folder.is_dir():
        raise SuiteError(f"{folder}: Spider folder not found")
    digest = read_spider(folder).digest
    target = suite_cache() / f"sqlfuncs-{digest[:16]}-s{seed}-a{augment}"
    if not (target / "suite.json").is_file():
        # build beside the target and rename: concurrent builders (several workers) never see a half-written suite
        staging = target.with_name(f"{target.name}.tmp{os.getpid()}")
        write_build(build_suite(folder, seed=seed, augment=augment), staging)
        try:
            staging.rename(target)
        except OSError:  # another process finished first: its build is identical
            shutil.rmtree(staging, ignore_errors=True)
    return target


@cache
def _load_cached(ref_json: str) -> Suite:
    """One load per process for each suite reference: workers run many shards of the same suite."""
    ref = SuiteRef.model_validate_json(ref_json)
    path = build_spider(ref.spider, ref.seed, ref.augment) if ref.spider is not None else ref.path
    return load_suite(ref.name, path, ref.scenarios, ref.skip_invalid, ref.limit)
