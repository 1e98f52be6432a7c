"""Suites and families: a suite built from a family's source data (:func:`build`) or imported from a benchmark's
released files (:func:`import_suite`), what a suite holds (:func:`suite_overview`), and what is registered
(:func:`catalog`)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from undertow.cluster.api.hooks import Hooks
from undertow.cluster.config import ConfigError, apply_override
from undertow.env_core.errors import close_match
from undertow.env_core.families import ReportTable, families, get_family
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.scenarios import validation_problems
from undertow.env_core.suites import BUILD_REPORT, load_ref, suite_folder, suite_ref
from undertow.workers.clients import POLICIES

if TYPE_CHECKING:
    from undertow.cluster.api.reference import ReferenceRun
    from undertow.workers.docgen import DocReport


def suite_reference(suite: str, fields: Sequence[str] | None = None, *, family: bool = False) -> dict[str, Any]:
    """A suite reference from text: a family name (or ``module:attribute``) or a suite folder (``family``: always a
    family, even where a folder of that name exists), and ``FIELD=VALUE`` pairs with YAML values (``spider=PATH``,
    ``seed=1``, ``access.mode=open``), read like the dotted overrides of a config."""
    data: dict[str, Any] = {"family": suite} if family or not Path(suite).is_dir() else {"path": suite}
    for item in fields or []:
        apply_override(data, item)
    return data


@dataclass(frozen=True)
class BuildOutcome:
    family: str
    out: Path
    tables: list[ReportTable]  # what the build kept and skipped
    docs: DocReport | None = None  # the model-written documentation, when asked for
    reference: ReferenceRun | None = None  # the published outputs written as a reference run (import --results)


DOCS_CHOICES = ("template", "model")


def build(
    family: str,
    fields: Sequence[str] | None = None,
    *,
    out: str | Path = "suite",
    docs: str | None = None,
    docs_model_url: str | None = None,
    docs_model_name: str = "default",
    spider: str | Path | None = None,
    hooks: Hooks | None = None,
) -> BuildOutcome:
    """Write a suite folder at ``out`` from a family's source data (the same build a sweep makes on first use);
    ``fields`` are the family's suite fields as ``FIELD=VALUE``. With ``docs="model"`` (or ``docs_model_url``
    alone, or the fields ``docs=model docs_model.url=URL``), an OpenAI-compatible endpoint then documents the tools
    (each doc checked, with corrections) for a family that allows it; an endpoint that is down leaves the template
    docs, tool by tool, and the build still succeeds (``BuildOutcome.docs`` says so)."""
    hooks = hooks or Hooks()
    out = Path(out)
    chosen = get_family(family)
    if docs is not None and docs not in DOCS_CHOICES:
        choices = ", ".join(DOCS_CHOICES)
        hint = close_match(docs, DOCS_CHOICES)
        raise ConfigError(f"expected one of {choices}, got '{docs}'", field="--docs", hint=hint)
    if docs == "template" and docs_model_url:
        raise ConfigError("--docs template: the tools keep their template docs, so leave out --docs-model-url")
    if spider is not None:  # --spider DIR: the source field of the families that compile a Spider-format folder
        if "spider" not in chosen.suite_config.model_fields:
            raise ConfigError(f"--spider: family '{chosen.name}' does not build from a Spider-format folder")
        fields = [*(fields or []), f"spider={spider}"]
    reference = suite_reference(family, fields, family=True)
    if docs == "model" and not docs_model_url and "docs_model" not in reference:
        raise ConfigError("--docs model needs --docs-model-url URL (an OpenAI-compatible endpoint that writes them)")
    if docs == "model":
        reference["docs"] = "model"
    if docs_model_url:  # the options say what the fields would: docs: model with this endpoint
        if chosen.documenter is None:
            raise ConfigError(f"--docs-model-url: family '{chosen.name}' has no model-written documentation")
        reference.update(docs="model", docs_model={"url": docs_model_url, "name": docs_model_name})
    try:
        config = suite_ref(reference, base=Path.cwd())
    except ValidationError as exc:
        raise ConfigError("; ".join(f"{chosen.name} suite: {p}" for p in validation_problems(exc))) from None
    hooks.stage(f"building a {chosen.name} suite")
    tables = chosen.build(config, out)
    if config.docs != "model" or config.docs_model is None:
        return BuildOutcome(chosen.name, out, tables)
    from undertow.workers.docgen import document_folder, documenter_of

    report = document_folder(out, documenter_of(config), config.docs_model, stage=hooks.stage)
    return BuildOutcome(chosen.name, out, tables, report)


def import_suite(
    family: str,
    path: str | Path,
    *,
    out: str | Path = "suite",
    hooks: Hooks | None = None,
    results: str | Path | None = None,
    store: str | Path = "runs",
) -> BuildOutcome:
    """Write a suite folder at ``out`` from a benchmark's released files at ``path``: the build of a family that
    can import (``Family.import_field`` names its suite field for the folder). With ``results``, the authors'
    published per-query outputs (FAIL-TaLMs: ``<Setting>/<model>_auto_eval[_qaq]/answers.json``) are also written
    into ``store`` as one reference run (:mod:`undertow.cluster.api.reference`; ``BuildOutcome.reference``)."""
    chosen = get_family(family)
    field = chosen.import_field
    if field is None:
        able = [f.name for f in families() if f.import_field]
        raise ConfigError(
            f"family '{chosen.name}' cannot import released files (families that can: {', '.join(able) or 'none'})",
            hint=f"build it with `undertow build {chosen.name}`",
        )
    if results is not None:
        if chosen.import_results is None:
            able = [f.name for f in families() if f.import_results]
            raise ConfigError(
                f"family '{chosen.name}' has no published outputs to import (families that do: "
                f"{', '.join(able) or 'none'})",
                field="--results",
            )
        if not Path(results).is_dir():
            raise ConfigError(f"folder {results} not found", field="--results")
    built = build(chosen.name, [f"{field}={path}"], out=out, hooks=hooks)
    if results is None:
        return built
    from undertow.cluster.api.reference import write_reference

    (hooks or Hooks()).stage("writing the published outputs as a reference run")
    config = suite_ref(suite_reference(chosen.name, [f"{field}={Path(path).resolve()}"], family=True))
    reference = write_reference(config, results, store)
    return BuildOutcome(built.family, built.out, built.tables, built.docs, reference)


# Scenario metadata that `undertow suites show` counts by, when a family's scenarios carry it
OVERVIEW_FIELDS = (
    "domain",
    "category",
    "service",
    "shape",
    "fault_kind",
    "persistence",
    "split",
    "formulation",
    "database",
    "setting",
)


@dataclass(frozen=True)
class SuiteOverview:
    label: str
    family: str
    tools: int
    scenarios: int
    counts: dict[str, dict[str, int]]  # metadata field -> value -> scenarios
    faults: dict[str, dict[str, int]]  # fault kind -> persistence -> scenarios (when both fields are there)
    report: list[ReportTable] = field(default_factory=list)  # the figures the family's build reported


def suite_overview(suite: str, fields: Sequence[str] | None = None, *, hooks: Hooks | None = None) -> SuiteOverview:
    """What a suite holds: its tools and scenarios, counted by the metadata its family gives them (domain,
    category, fault kind, persistence, ...). The suite is built first when it is not cached yet."""
    hooks = hooks or Hooks()
    try:
        ref = suite_ref(suite_reference(suite, fields), base=Path.cwd())
    except ValidationError as exc:
        raise ConfigError("; ".join(validation_problems(exc)), field="SUITE") from None
    hooks.stage(f"loading {ref.label} (built on first use)")
    from undertow.workers.docgen import document_suite

    loaded = load_ref(ref, document_suite)
    counts: dict[str, dict[str, int]] = {}
    for name in OVERVIEW_FIELDS:
        values = [str(s.metadata[name]) for s in loaded.scenarios if name in s.metadata]
        if values:
            counts[name] = dict(sorted(Counter(values).items()))
    faults: dict[str, dict[str, int]] = {}
    for scenario in loaded.scenarios:
        kind, persistence = scenario.metadata.get("fault_kind"), scenario.metadata.get("persistence")
        if kind is not None and persistence is not None:
            row = faults.setdefault(str(kind), {})
            row[str(persistence)] = row.get(str(persistence), 0) + 1
    kept = suite_folder(ref, document_suite) / BUILD_REPORT
    report = [ReportTable.model_validate(t) for t in json.loads(kept.read_text())] if kept.is_file() else []
    return SuiteOverview(
        ref.label,
        loaded.family,
        len(loaded.toolbox.specs),
        len(loaded.scenarios),
        counts,
        dict(sorted(faults.items())),
        report,
    )


@dataclass(frozen=True)
class Entry:
    name: str
    description: str


@dataclass(frozen=True)
class Catalog:
    families: list[Entry]  # registered benchmark families (a suite config names one with family: NAME)
    settings: list[Entry]  # setting presets
    policies: list[str]  # built-in policies (models that need no server)


def catalog() -> Catalog:
    """Registered benchmark families, setting presets and built-in policies."""
    return Catalog(
        families=[Entry(f.name, f.description) for f in families()],
        settings=[Entry(s.name, s.description) for s in PRESET_SETTINGS.values()],
        policies=list(POLICIES),
    )
