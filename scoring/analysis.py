"""Run analysis: summaries, family analyses, recovery gaps and paired model comparisons, as typed, versioned data.

Everything here works on the flat :class:`EpisodeResult` rows of a run. Accuracy is always ``solved`` (the answer
matched the gold answer), over episodes that did not end in ``infra_error`` or ``config_error``: an infrastructure
or config failure says nothing about the model, so it is neither a success nor a failure. Episodes are paired across
settings and models on ``(scenario_id, seed)``, and intervals resample clusters (``cluster_id``, or the scenario
itself when empty), because seeds and augmentations of one original scenario are not independent.

The JSON that ``undertow report --format json`` and ``undertow compare --format json`` print is made here, from
pydantic models, and carries ``schema_version``; the published JSON Schemas (``docs/schema/``) are generated from the
same models: ``python -m undertow.scoring.analysis --write-schemas docs/schema``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, BeforeValidator, Field, RootModel, SerializeAsAny
from pydantic.json_schema import models_json_schema

from undertow.env_core.families import FamilySummary, families, family_summaries, get_family
from undertow.env_core.model import EpisodeResult, Outcome
from undertow.scoring.family_summary import StrictModel
from undertow.scoring.stats import Gap, PairedComparison, compare_paired, recovery_gap
from undertow.scoring.summary import SummaryRow, summarize

Key = tuple[str, int]  # (scenario_id, seed): the unit paired across settings and models

METRIC = "solved"  # the accuracy used throughout: reports say so, so nobody mixes it up with ``correct``

# Bumped when a field of the report or compare JSON is renamed, removed or changes meaning (adding one is not).
SCHEMA_VERSION: Final = 1

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def episode_key(r: EpisodeResult) -> Key:
    """What pairs an episode across settings and models."""
    return (r.scenario_id, r.seed)


def cluster_key(r: EpisodeResult) -> str:
    """What the bootstrap resamples: the original scenario (seeds and augmentations of it move together)."""
    return r.cluster_id or r.scenario_id


def _undefined_as_none(value: Any) -> Any:
    """NaN and infinities (no data) become None, so that JSON says null and the schema says so."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# A statistic that is undefined (None) when there is nothing to compute it from.
Estimate = Annotated[float | None, BeforeValidator(_undefined_as_none)]


def _family_summary(value: Any) -> Any:
    """A family summary read back from JSON becomes its family's own model (the base model would refuse its fields)."""
    if isinstance(value, Mapping) and isinstance(value.get("family"), str):
        model = get_family(value["family"]).summary_model
        if model is not None:
            return model.model_validate(value)
    return value


# A family's summary: serialized with the family's own fields, validated by the family's own model.
FamilySummaryField = Annotated[SerializeAsAny[FamilySummary], BeforeValidator(_family_summary)]


NO_RECOVERY = "n/a: no recovery possible — giving up is correct"


class GapRow(StrictModel):
    """Recovery gap of one model on one suite: baseline accuracy minus accuracy under ``setting``, with the
    cluster-bootstrap interval; ``paired`` says whether it was computed on the ``n_paired`` episodes both settings
    have, or (none shared) from the two samples as independent. Fractions; None when undefined. ``recoverable`` is
    False for a setting that leaves no working plan (every episode expects the model to give up, e.g.
    ``impossible``): there is nothing to recover, so the gap and its interval are None, and reports say "n/a: no
    recovery possible — giving up is correct"."""

    model: str
    suite: str
    setting: str
    baseline: str
    estimate: Estimate
    ci_low: Estimate
    ci_high: Estimate
    n_clean: int
    n_faulted: int
    n_paired: int
    paired: bool
    confidence: float
    recoverable: bool = Field(
        default=True, description="False: giving up is the right behaviour under this setting; no gap is defined"
    )

    @classmethod
    def of(cls, model: str, suite: str, setting: str, baseline: str, gap: Gap) -> GapRow:
        return cls(model=model, suite=suite, setting=setting, baseline=baseline, **gap.as_dict())

    @classmethod
    def no_recovery(
        cls, model: str, suite: str, setting: str, baseline: str, n_clean: int, n_faulted: int, confidence: float
    ) -> GapRow:
        """The row of a setting where giving up is correct: no estimate, ``recoverable`` False."""
        return cls(
            model=model,
            suite=suite,
            setting=setting,
            baseline=baseline,
            estimate=None,
            ci_low=None,
            ci_high=None,
            n_clean=n_clean,
            n_faulted=n_faulted,
            n_paired=0,
            paired=False,
            confidence=confidence,
            recoverable=False,
        )


class ComparisonRow(StrictModel):
    """Paired comparison of two models on the ``n`` episodes they share in one suite × setting: accuracies, the
    difference ``a`` minus ``b`` with its interval, and McNemar's test (the ``mcnemar_`` fields: ``only_a`` counts
    episodes A solved and B did not). ``only_in_a``/``only_in_b`` count the episodes left out, unmatched."""

    suite: str
    setting: str
    model_a: str
    model_b: str
    n: int
    only_in_a: int
    only_in_b: int
    accuracy_a: Estimate
    accuracy_b: Estimate
    difference: Estimate
    ci_low: Estimate
    ci_high: Estimate
    confidence: float
    mcnemar_n: int
    mcnemar_both_right: int
    mcnemar_only_a: int
    mcnemar_only_b: int
    mcnemar_both_wrong: int
    mcnemar_statistic: float
    mcnemar_p_value: float
    mcnemar_method: Literal["exact", "chi2"]

    @classmethod
    def of(cls, suite: str, setting: str, model_a: str, model_b: str, comparison: PairedComparison) -> ComparisonRow:
        return cls(suite=suite, setting=setting, model_a=model_a, model_b=model_b, **comparison.as_dict())


class Analysis(StrictModel):
    """What a report shows, and what ``undertow compare --format json`` prints. ``rows`` are the
    :func:`undertow.scoring.summary.summarize` rows, ``families`` the family analyses by suite label
    (:func:`undertow.env_core.families.family_summaries`), ``sizes`` the model sizes in billions of parameters (None:
    unknown), ``settings`` the baseline first, then the others as they appear."""

    schema_version: Literal[1] = SCHEMA_VERSION
    metric: str = METRIC
    baseline: str = "clean"
    confidence: float = 0.95
    n_episodes: int = 0
    n_infra_errors: int = 0
    n_config_errors: int = 0
    models: list[str] = Field(default_factory=list)
    suites: list[str] = Field(default_factory=list)
    settings: list[str] = Field(default_factory=list)
    sizes: dict[str, float | None] = Field(default_factory=dict)
    rows: list[SummaryRow] = Field(default_factory=list)
    gaps: list[GapRow] = Field(default_factory=list)
    comparisons: list[ComparisonRow] = Field(default_factory=list)
    families: dict[str, FamilySummaryField] = Field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """Everything as JSON-able data (undefined numbers are None)."""
        return self.model_dump(mode="json")

    def to_json(self, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)

    def row(self, model: str, suite: str, setting: str) -> SummaryRow | None:
        for row in self.rows:
            if (row.model, row.suite, row.setting) == (model, suite, setting):
                return row
        return None

    def accuracy(self, model: str, suite: str, setting: str) -> float | None:
        """The summary row's accuracy (None: no such row, or no valid episode)."""
        row = self.row(model, suite, setting)
        return None if row is None else row.accuracy

    def metrics(self) -> dict[str, float]:
        """Flat numeric metrics with MLflow-safe keys, e.g. ``accuracy/oracle/my-suite/clean`` and
        ``gap/naive/my-suite/first_tried``; undefined values (no valid episode) are left out."""
        out: dict[str, float] = {}

        def put(name: str, value: float | None, *parts: str) -> None:
            if value is not None and not isinstance(value, bool) and math.isfinite(value):
                out["/".join([name, *(_metric_part(p) for p in parts)])] = float(value)

        for row in self.rows:
            key = (row.model, row.suite, row.setting)
            put("accuracy", row.accuracy, *key)
            if row.accuracy is not None:
                put("accuracy_ci_low", row.ci_low, *key)
                put("accuracy_ci_high", row.ci_high, *key)
            put("correct_rate", row.correct_rate, *key)
            put("gave_up_rate", row.gave_up_rate, *key)
            put("n_valid", row.n_valid, *key)
            put("infra_errors", row.outcomes[Outcome.infra_error.value], *key)
        for g in self.gaps:
            key = (g.model, g.suite, g.setting)
            put("gap", g.estimate, *key)
            put("gap_ci_low", g.ci_low, *key)
            put("gap_ci_high", g.ci_high, *key)
        for c in self.comparisons:
            key = (c.suite, c.setting, f"{c.model_a}-vs-{c.model_b}")
            put("difference", c.difference, *key)
            put("mcnemar_p", c.mcnemar_p_value, *key)
        return out


def _metric_part(text: str) -> str:
    """One component of an MLflow metric key: model names may hold ``/`` or ``:``, which would change its shape."""
    return re.sub(r"[^A-Za-z0-9_.\-]+", "_", text).strip(".") or "_"


def analyse(
    results: Iterable[EpisodeResult],
    model_sizes: Mapping[str, float | None] | None = None,
    baseline: str = "clean",
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> Analysis:
    """Summaries, family analyses, recovery gaps and pairwise model comparisons of a run's results.

    Recovery gap: for each model × suite and each setting other than ``baseline``, baseline accuracy minus
    accuracy under that setting, paired on ``(scenario_id, seed)`` and clustered by ``cluster_id``. Left out when
    the model has no valid baseline or no valid faulted episode on that suite. Faulted episodes where giving up is
    right (``expected_give_up``) measure no recovery and are left out of the gap; a setting with nothing else
    (``impossible``) gets a row with ``recoverable`` False and no estimate. Comparisons: every pair of models
    (in order of first appearance) on each suite × setting, on the episodes both have (``a`` minus ``b``); pairs
    that share no valid episode are left out. ``infra_error`` and ``config_error`` episodes count in ``n`` only.
    """
    results = list(results)
    valid = [r for r in results if r.outcome.judged]
    models = list(dict.fromkeys(r.model for r in results))
    suites = list(dict.fromkeys(r.suite for r in results))
    seen_settings = list(dict.fromkeys(r.setting for r in results))
    settings = ([baseline] if baseline in seen_settings else []) + [s for s in seen_settings if s != baseline]

    # solved per (model, suite, setting) -> {key: value}; clusters per suite, shared by every model and setting
    outcomes: dict[tuple[str, str, str], dict[Key, bool]] = {}
    clusters: dict[str, dict[Key, str]] = {}
    # the episodes where the setting left no working plan: giving up is right there, so they measure no recovery
    hopeless: dict[tuple[str, str, str], set[Key]] = {}
    for r in valid:
        outcomes.setdefault((r.model, r.suite, r.setting), {})[episode_key(r)] = r.solved
        clusters.setdefault(r.suite, {})[episode_key(r)] = cluster_key(r)
        if r.expected_give_up:
            hopeless.setdefault((r.model, r.suite, r.setting), set()).add(episode_key(r))

    gaps: list[GapRow] = []
    for model, suite in itertools.product(models, suites):
        clean = outcomes.get((model, suite, baseline))
        if not clean:
            continue
        for setting in settings:
            faulted = outcomes.get((model, suite, setting))
            if setting == baseline or not faulted:
                continue
            given_up = hopeless.get((model, suite, setting), set())
            recoverable = {k: v for k, v in faulted.items() if k not in given_up}
            if not recoverable:
                gaps.append(GapRow.no_recovery(model, suite, setting, baseline, len(clean), len(faulted), confidence))
                continue
            faulted = recoverable
            gap = recovery_gap(
                {k: float(v) for k, v in clean.items()},
                {k: float(v) for k, v in faulted.items()},
                clusters=clusters[suite],
                confidence=confidence,
                resamples=resamples,
                seed=seed,
            )
            gaps.append(GapRow.of(model, suite, setting, baseline, gap))

    comparisons: list[ComparisonRow] = []
    for suite, setting in itertools.product(suites, settings):
        for model_a, model_b in itertools.combinations(models, 2):
            a = outcomes.get((model_a, suite, setting), {})
            b = outcomes.get((model_b, suite, setting), {})
            if not a.keys() & b.keys():
                continue
            comparison = compare_paired(
                a, b, clusters=clusters[suite], confidence=confidence, resamples=resamples, seed=seed
            )
            comparisons.append(ComparisonRow.of(suite, setting, model_a, model_b, comparison))

    given = dict(model_sizes or {})
    return Analysis(
        rows=summarize(results, confidence),
        families=dict(family_summaries(results)),
        gaps=gaps,
        comparisons=comparisons,
        sizes={m: given.get(m) for m in models},
        baseline=baseline,
        confidence=confidence,
        n_episodes=len(results),
        n_infra_errors=sum(r.outcome == Outcome.infra_error for r in results),
        n_config_errors=sum(r.outcome == Outcome.config_error for r in results),
        models=models,
        suites=suites,
        settings=settings,
    )


# ---------------------------------------------------------------------------------------------------------------
# What `undertow report --format json` prints


class ReportRows(StrictModel):
    """``undertow report --format json``: one row per model × suite × setting."""

    schema_version: Literal[1] = SCHEMA_VERSION
    rows: list[SummaryRow]


class ReportFamilies(StrictModel):
    """``undertow report --format json --families``: each suite's family analysis, keyed by suite label."""

    schema_version: Literal[1] = SCHEMA_VERSION
    families: dict[str, FamilySummaryField]


class ReportOutput(RootModel[ReportRows | ReportFamilies]):
    """What ``undertow report --format json`` prints: the summary rows, or with ``--families`` the family analyses."""


def report_json(rows: Iterable[SummaryRow], indent: int | None = 2) -> str:
    return ReportRows(rows=list(rows)).model_dump_json(indent=indent)


def families_json(summaries: Mapping[str, FamilySummary], indent: int | None = 2) -> str:
    return ReportFamilies(families=dict(summaries)).model_dump_json(indent=indent)


# ---------------------------------------------------------------------------------------------------------------
# The published JSON Schemas


def _family_schema(defs: dict[str, Any], refs: Mapping[str, str]) -> dict[str, Any]:
    """The schema of a family summary: any object with a ``family`` name (families come and go), checked against
    the family's own model for each family registered when the schema was made."""
    base = defs[FamilySummary.__name__]
    return {
        "title": base.get("title", FamilySummary.__name__),
        "description": (
            "A family's analysis of one suite: 'family' names the family; the other fields are the family's own "
            "(checked here for the families registered when this schema was generated)."
        ),
        "type": "object",
        "properties": base["properties"],
        "required": ["family"],
        "additionalProperties": True,
        "allOf": [
            {
                "if": {"properties": {"family": {"const": name}}, "required": ["family"]},
                "then": {"$ref": ref},
            }
            for name, ref in refs.items()
        ],
    }


def json_schema(model: type[BaseModel], description: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of what ``model`` serializes to, family summaries included: every
    registered family's summary model is in ``$defs`` and applies to summaries naming that family."""
    summary_models = {f.name: f.summary_model for f in families() if f.summary_model is not None}
    keys, top = models_json_schema(
        [(model, "serialization"), *((m, "serialization") for m in summary_models.values())],
        ref_template="#/$defs/{model}",
    )
    defs: dict[str, Any] = top.get("$defs", {})
    refs = {name: keys[(m, "serialization")]["$ref"] for name, m in summary_models.items()}
    if FamilySummary.__name__ in defs:
        defs[FamilySummary.__name__] = _family_schema(defs, refs)
    root_name = keys[(model, "serialization")]["$ref"].rsplit("/", 1)[-1]
    root = defs.pop(root_name)
    root.pop("description", None)
    head = {"$schema": JSON_SCHEMA_DIALECT, "title": root.pop("title", root_name), "description": description}
    return {**head, **root, "$defs": dict(sorted(defs.items()))}


def json_schemas() -> dict[str, dict[str, Any]]:
    """The published schemas by file name: ``report.json`` and ``compare.json``."""
    return {
        "report.json": json_schema(
            ReportOutput,
            f"What `undertow report --format json` prints (schema_version {SCHEMA_VERSION}): the summary rows, or "
            "with --families the family analyses keyed by suite label.",
        ),
        "compare.json": json_schema(
            Analysis,
            f"What `undertow compare --format json` prints (schema_version {SCHEMA_VERSION}): summary rows, recovery "
            "gaps, paired model comparisons and family analyses of one or more runs.",
        ),
    }


def schema_text(schema: Mapping[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def write_schemas(folder: str | Path) -> list[Path]:
    """Write :func:`json_schemas` into ``folder``; returns the files written."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in json_schemas().items():
        path = out / name
        path.write_text(schema_text(schema), encoding="utf-8")
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m undertow.scoring.analysis", description="the report and compare schemas"
    )
    parser.add_argument("--write-schemas", metavar="FOLDER", required=True, help="e.g. docs/schema")
    args = parser.parse_args(argv)
    for path in write_schemas(args.write_schemas):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
