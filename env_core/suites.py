"""Suites: a family's tool universe plus its scenarios, read from a built suite folder.

A suite folder holds ``suite.json`` (name, family, version, databases), ``tools.jsonl``, ``scenarios.jsonl``, the
SQLite databases the tools run on, and whatever else its family's build writes beside them (``build.json``). A suite
config (:data:`SuiteRef`) names either such a folder (``path``) or a family and its source data; the latter is built
once per content hash into the suite cache and read from there. Every scenario is checked against the tool universe
before anything runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    Field,
    PlainSerializer,
    PlainValidator,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
)

from undertow.env_core.environment import Environment
from undertow.env_core.errors import DataError
from undertow.env_core.families import (
    FamilyError,
    FolderSuite,
    SuiteConfig,
    close_name,
    get_family,
    missing_path,
    resolve_path,
    suite_config_model,
)
from undertow.env_core.faults import FaultRuntime, Setting, resolve_faults
from undertow.env_core.model import Scenario, ToolSpec, Versioned
from undertow.env_core.scenarios import (
    describe_validation_error,
    read_scenarios,
    scenario_problems,
    write_scenarios,
)
from undertow.env_core.search import LexicalSearch, Searcher, ToolAccess
from undertow.env_core.simulated import Helper
from undertow.env_core.tools import MAIN, SqliteToolBox, ToolBox


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
        emulator: Helper | None = None,
        person: Helper | None = None,
    ) -> Environment:
        """One episode's environment: faults resolved against the scenario, tools shown as ``access`` says. Open
        access searches with ``searcher`` (a retrieval index), or the built-in lexical search. ``emulator`` and
        ``person`` are helper models (``env_core.simulated``): for emulated tools, and the Ask-and-Help person."""
        access = access or ToolAccess()
        faults = resolve_faults(scenario, setting)
        # removed tools do not count towards ``access.functions``: distractors_only at k still lists k tools
        shown = access.apply(scenario, list(self.toolbox.specs), seed, FaultRuntime(faults).removed_tools())
        search = (searcher or self.searcher) if access.mode == "open" else None
        return Environment(
            shown,
            self.toolbox,
            seed=seed,
            faults=faults,
            search=search,
            max_results=access.max_results,
            tool_notes=setting.harness == "schema_notes",
            ask_human=setting.ask_human,
            emulator=emulator,
            person=person,
        )

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


class SuiteError(DataError):
    """A suite that cannot be found, built or read."""


class SuiteMeta(Versioned):
    """``suite.json`` of a suite folder."""

    name: str
    family: str
    version: str = "0"
    databases: dict[str, str] = Field(default_factory=lambda: {MAIN: "database.sqlite"})
    # folders written before families had one door named their toolbox here; the family decides it now
    toolbox: str | None = Field(default=None, exclude=True)


def write_suite(
    folder: str | Path,
    *,
    name: str,
    family: str,
    version: str,
    tools: list[ToolSpec],
    scenarios: list[Scenario],
    databases: Mapping[str, Path | bytes | sqlite3.Connection],
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Write a suite folder that :func:`load_suite` reads back. ``databases`` maps each database name to a file, its
    bytes or an open connection; one database named ``main`` becomes ``database.sqlite``. ``extra`` files (name ->
    JSON-able value) go beside them, e.g. a build summary."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    names = list(databases)
    files = {MAIN: "database.sqlite"} if names == [MAIN] else {n: f"databases/{n}.sqlite" for n in names}
    meta = SuiteMeta(name=name, family=family, version=version, databases=files)
    (folder / "suite.json").write_text(meta.model_dump_json(indent=2) + "\n")
    write_tools(folder, tools)
    write_scenarios(folder / "scenarios.jsonl", scenarios)
    for db, source in databases.items():
        target = folder / files[db]
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(source, sqlite3.Connection):
            target.write_bytes(source.serialize())
        elif isinstance(source, bytes):
            target.write_bytes(source)
        else:
            target.write_bytes(Path(source).read_bytes())
    for file, value in (extra or {}).items():
        (folder / file).write_text(json.dumps(value, indent=2) + "\n")
    return folder


def write_tools(folder: str | Path, tools: list[ToolSpec]) -> None:
    """(Re)write a suite folder's ``tools.jsonl``, e.g. after a model documented the tools."""
    with (Path(folder) / "tools.jsonl").open("w") as handle:
        for spec in tools:
            handle.write(spec.model_dump_json() + "\n")


def read_tools(folder: str | Path) -> list[ToolSpec]:
    """A suite folder's tools; a bad line raises ``SuiteError`` naming the file and the line."""
    specs = []
    tools_path = Path(folder) / "tools.jsonl"
    if not tools_path.is_file():
        raise SuiteError(f"{tools_path}: tool file not found")
    for number, line in enumerate(tools_path.read_text().splitlines(), start=1):
        if line.strip():
            try:
                specs.append(ToolSpec.model_validate_json(line))
            except ValidationError as exc:
                raise SuiteError(f"{tools_path}:{number}: invalid tool: {describe_validation_error(exc)}") from exc
    return specs


def copy_suite(suite: Suite, folder: str | Path) -> Path:
    """Write a loaded SQLite-backed suite (its scenarios as loaded) as a folder."""
    if not isinstance(suite.toolbox, SqliteToolBox):
        raise SuiteError(f"suite '{suite.name}' is not SQLite-backed; no folder format for it yet")
    toolbox = suite.toolbox
    return write_suite(
        folder,
        name=suite.name,
        family=suite.family,
        version=suite.version,
        tools=list(toolbox.specs.values()),
        scenarios=suite.scenarios,
        databases={db: toolbox.database_bytes(db) for db in toolbox.sources},
    )


def _read_folder(folder: Path, scenarios: Path | None, skip_invalid: bool, family_ref: str | None) -> Suite:
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
    try:
        family = get_family(meta.family, family_ref)
    except FamilyError as exc:
        raise SuiteError(f"{meta_path}: family: {exc}") from exc
    specs = read_tools(folder)
    tools_path = folder / "tools.jsonl"
    databases = {name: folder / file for name, file in meta.databases.items()}
    for database in databases.values():
        if not database.is_file():
            raise SuiteError(f"{database}: database file not found")
    try:
        toolbox = family.toolbox(specs, databases)
    except sqlite3.DatabaseError as exc:
        raise SuiteError(f"cannot open as SQLite: {exc}") from exc
    except ValueError as exc:  # a tool the toolbox cannot run (no binding.sql, duplicate name)
        raise SuiteError(f"{tools_path}: {exc}") from exc
    loaded = read_scenarios(
        scenarios or folder / "scenarios.jsonl",
        skip_invalid=skip_invalid,
        check=lambda scenario: scenario_problems(scenario, toolbox.specs, meta.family),
    )
    return Suite(meta.name, meta.family, meta.version, toolbox, loaded.scenarios, loaded.skipped)


def keep_split(scenarios: list[Scenario], split: str, suite: str) -> list[Scenario]:
    """The scenarios of one split (their ``metadata["split"]``, set by the build); ``all`` keeps every one. A split
    that leaves none is a ``SuiteError`` saying what splits the suite has."""
    if split == "all":
        return scenarios
    kept = [s for s in scenarios if s.metadata.get("split") == split]
    if kept:
        return kept
    counts = Counter(str(s.metadata.get("split", "no split")) for s in scenarios)
    if set(counts) == {"no split"}:
        has = "no scenario has split metadata (built by an older build: rebuild it)"
    else:
        has = "it has " + ", ".join(f"{name}: {n}" for name, n in sorted(counts.items()))
    raise SuiteError(f"suite '{suite}': split '{split}' leaves no scenario; {has}")


def load_suite(
    path: str | Path,
    scenarios: str | Path | None = None,
    skip_invalid: bool = False,
    limit: int | None = None,
    family_ref: str | None = None,
    split: str = "all",
) -> Suite:
    """Read a built suite folder; ``scenarios`` replaces its scenario file; ``split`` keeps one split's scenarios
    (after leaving out the invalid ones, before ``limit``).

    Raises ``SuiteError`` or ``ScenarioFileError`` naming the file, the line and the problem. With
    ``skip_invalid`` the bad scenarios are left out and listed in ``Suite.skipped``.
    """
    folder = Path(path)
    if not folder.exists():
        # the absolute path that was looked for, and a close name beside it (a typo)
        raise SuiteError("suite folder not found", file=os.path.abspath(folder), hint=close_name(folder) or None)
    suite = _read_folder(folder, Path(scenarios) if scenarios is not None else None, skip_invalid, family_ref)
    source = str(scenarios or path)
    suite.scenarios = keep_split(suite.scenarios, split, suite.name)
    if limit is not None:
        suite.scenarios = suite.scenarios[:limit]
    if not suite.scenarios:
        raise SuiteError(f"{source}: no valid scenarios to run")
    return suite


def cache_root() -> Path:
    """The folder of everything undertow caches on this machine — built suites, embeddings, helper models'
    replies: ``UNDERTOW_CACHE``, default ``~/.cache/undertow``."""
    return Path(os.environ.get("UNDERTOW_CACHE", Path.home() / ".cache" / "undertow"))


def suite_cache() -> Path:
    """Where suites built from a family's source data are kept."""
    return cache_root() / "suites"


# Writes a model's documentation of the tools into a freshly built suite folder: called with the suite config and
# the folder (``docs: model``). env_core cannot call a model; workers.docgen.document_suite is the implementation.
DocumentSuite = Callable[[SuiteConfig, Path], object]

DOCS_FILE = "docs.json"  # what the documenting step did, written into the suite folder beside the tools
# The figures a family's build reported (a list of ReportTable objects), kept in the suite folder so that
# `undertow suites show` prints them again without rebuilding
BUILD_REPORT = "build_report.json"


def suite_folder(config: SuiteConfig, document: DocumentSuite | None = None) -> Path:
    """The built folder of a suite config: its ``path``, or the family's build of its source data, made once per
    (family, source content, build fields) and reused after. With ``docs: model``, ``document`` writes the tools'
    documentation into the build before it is kept, so model docs are cached with it (and remade only when the build
    fields, ``docs_model`` among them, change)."""
    if isinstance(config, FolderSuite):
        return Path(config.path)
    family = get_family(config.family, config.family_ref)
    fields = json.dumps(config.build_fields(), sort_keys=True)
    key = hashlib.sha256(f"{family.source_digest(config)}\n{fields}".encode()).hexdigest()[:20]
    target = suite_cache() / f"{family.name}-{key}"
    if not (target / "suite.json").is_file():
        if config.docs == "model" and document is None:
            raise SuiteError(
                f"suite '{config.label}': docs: model needs a documenting step to build it (load it through a sweep "
                "or `undertow build`, which pass workers.docgen's)"
            )
        # build beside the target and rename: concurrent builders (several workers) never see a half-written suite
        staging = target.with_name(f"{target.name}.tmp{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        try:
            family.build(config, staging)
            if config.docs == "model" and document is not None:
                document(config, staging)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        try:
            staging.rename(target)
        except OSError:  # another process finished first: its build is identical
            shutil.rmtree(staging, ignore_errors=True)
    return target


def check_docs(config: SuiteConfig) -> None:
    """``docs: model`` needs ``docs_model``, a suite built from source data, and a family with a documenter; a
    ``ValueError`` naming the field and the family otherwise (raised while a suite reference is validated, so it
    stops a sweep at plan time)."""
    if config.docs != "model":
        return
    if isinstance(config, FolderSuite):
        raise ValueError(
            f"docs: model applies to a suite built from a family's source data, not to a built folder ({config.path})"
        )
    family = get_family(config.family, config.family_ref)
    if family.documenter is None:
        raise ValueError(f"docs: model: family '{family.name}' has no model-written documentation")
    if config.docs_model is None:
        raise ValueError(
            f"docs_model: family '{family.name}' with docs: model needs docs_model {{url, name}} (the endpoint that "
            "writes the docs)"
        )


def _validate_ref(value: Any, info: ValidationInfo) -> SuiteConfig:
    """A family name (its default suite), a folder, or a mapping with ``family`` (a registered name or a
    ``module:attribute``) or ``path``, validated against that family's own config model."""
    if isinstance(value, SuiteConfig):
        return value
    if isinstance(value, str):
        try:
            is_family = ":" in value or bool(get_family(value))
        except FamilyError as exc:
            is_family = False
            folder = resolve_path(value, info) or value
            if not Path(folder).is_dir():
                raise ValueError(
                    f"'{value}' is neither a suite folder nor a family: {exc}; {missing_path(folder)}"
                ) from None
        value = {"family": value} if is_family else {"path": value}
    if not isinstance(value, Mapping):
        raise ValueError("expected a family name, a suite folder, or a mapping with 'family' or 'path'")
    if isinstance(value.get("path"), str):  # relative to the config file, so that the folder can be read for options
        value = {**value, "path": resolve_path(value["path"], info)}
    try:
        model, data = suite_config_model(value)
    except FamilyError as exc:
        raise ValueError(str(exc)) from exc
    config = model.model_validate(data, context=info.context)
    check_docs(config)
    return config


# How a sweep names a suite: one family's config model, chosen by ``family`` (or ``path`` for a built folder).
SuiteRef = Annotated[
    SuiteConfig,
    PlainValidator(_validate_ref),
    PlainSerializer(lambda ref: ref.model_dump(mode="json")),
    WithJsonSchema({"type": "object", "description": "a suite: {family: NAME, ...its fields} or {path: FOLDER}"}),
]

_SUITE_REF: TypeAdapter[SuiteConfig] = TypeAdapter(SuiteRef)


def suite_ref(value: Any, base: str | Path | None = None) -> SuiteConfig:
    """Validate one suite reference (relative paths against ``base``)."""
    return _SUITE_REF.validate_python(value, context={"base": str(base)} if base else None)


def load_ref(config: SuiteConfig, document: DocumentSuite | None = None) -> Suite:
    """The suite a config names, loaded once per process: workers run many shards of the same suite. ``document``
    writes model docs when a ``docs: model`` suite must be built (see :func:`suite_folder`)."""
    return _load_cached(config.model_dump_json(exclude={"access", "alias"}), document)


@cache
def _load_cached(ref_json: str, document: DocumentSuite | None = None) -> Suite:
    config = suite_ref(json.loads(ref_json))
    folder = suite_folder(config, document)
    adapt = get_family(config.family, config.family_ref).adapt if config.family else None
    # a family's options choose among the scenarios, so ``limit`` counts after them
    limit = None if adapt is not None else config.limit
    suite = load_suite(folder, config.scenarios, config.skip_invalid, limit, config.family_ref, config.split)
    if config.family and suite.family != config.family:  # a folder named with the family it should hold
        raise SuiteError(f"{folder}: a '{suite.family}' suite, not '{config.family}'")
    if adapt is not None:
        suite = adapt(suite, config)
        if config.limit is not None:
            suite.scenarios = suite.scenarios[: config.limit]
            suite.__dict__.pop("by_id", None)  # the cached index must follow the new list
        if not suite.scenarios:
            raise SuiteError(f"suite '{config.label}': no scenario left after its options")
    return suite
