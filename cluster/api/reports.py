"""Reading stored runs: where a run stands (:func:`status`), its summary and HTML report (:func:`report`, with a
family's report layout), and models compared within one run or pooled over several (:func:`compare`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from undertow.cluster.config import ConfigError
from undertow.cluster.plan import RunManifest
from undertow.cluster.store import RunStore, StoreError
from undertow.env_core.errors import close_match
from undertow.env_core.families import Family, FamilySummary, ReportTable, family_summaries, get_family
from undertow.env_core.model import EpisodeResult, Outcome
from undertow.scoring.analysis import Analysis, analyse
from undertow.scoring.summary import SummaryRow, summarize

if TYPE_CHECKING:
    from undertow.cluster.report.tables import LayoutView


@dataclass(frozen=True)
class StatusRow:
    """Shards and episodes of one model × suite × setting. A committed shard is done, or failed when it has an
    infra_error or config_error episode; a shard without a committed result is pending. ``violations``: episodes
    whose code hit a limit of the sandbox (the model's doing: the shard is still done)."""

    model: str
    suite: str
    setting: str
    shards_done: int
    shards_failed: int
    shards_pending: int
    episodes: int
    infra_errors: int
    config_errors: int = 0
    violations: int = 0


@dataclass(frozen=True)
class ErrorGroup:
    """Episodes that ended on the same error: its outcome class (``infra_error``: rerunnable; ``config_error``:
    fix the input; ``sandbox_violation``: the model's code hit a limit, what it attempted in the message),
    ``Type: message``, the last frames of the traceback of the first one, and how many."""

    outcome: str
    error: str
    trace: str | None
    episodes: int

    @property
    def rerunnable(self) -> bool:
        return self.outcome == Outcome.infra_error.value


@dataclass(frozen=True)
class RunStatus:
    run_id: str
    rows: list[StatusRow]
    groups: list[ErrorGroup]  # the most common first

    @property
    def errors(self) -> dict[str, int]:
        """Error text -> episodes, the most common first."""
        return {g.error: g.episodes for g in self.groups}


def status(run: str, store: str | None = None) -> RunStatus:
    """Done / failed / pending shards and episodes per model × suite × setting, with what the failed episodes
    raised (type, message, the last frames of the traceback)."""
    run_store = RunStore.open(run, store or "runs")
    manifest = run_store.manifest()
    committed = run_store.committed()
    groups: dict[tuple[str, str, str], list[Any]] = {}
    for shard in manifest.shards:
        groups.setdefault((shard.model.name, shard.suite.label, shard.setting.name), []).append(shard)
    rows = []
    counts: Counter[tuple[str, str]] = Counter()
    traces: dict[tuple[str, str], str | None] = {}
    for (model, suite, setting), shards in groups.items():
        done = failed = pending = infra = config = violations = 0
        for shard in shards:
            if shard.shard_id not in committed:
                pending += 1
                continue
            results = run_store.shard_results(shard.shard_id)
            bad = [r for r in results if not r.outcome.judged]
            violated = [r for r in results if r.outcome == Outcome.sandbox_violation]
            infra += sum(r.outcome == Outcome.infra_error for r in bad)
            config += sum(r.outcome == Outcome.config_error for r in bad)
            violations += len(violated)
            failed += bool(bad)
            done += not bad
            for r in (*bad, *violated):
                key = (r.outcome.value, r.error or "unknown")
                counts[key] += 1
                traces.setdefault(key, r.error_trace)
        episodes = sum(len(s.episodes) for s in shards)
        rows.append(StatusRow(model, suite, setting, done, failed, pending, episodes, infra, config, violations))
    ordered = sorted(counts.items(), key=lambda kv: -kv[1])  # stable: ties keep the order first seen
    return RunStatus(manifest.run_id, rows, [ErrorGroup(o, e, traces[(o, e)], n) for (o, e), n in ordered])


def _check_html(html: Path | None) -> None:
    if html is not None and not html.parent.is_dir():
        raise StoreError(f"--html: folder {html.parent} does not exist")


def write_html(
    path: Path,
    analysis: Analysis,
    results: list[EpisodeResult],
    stores: Sequence[RunStore],
    title: str,
    layout: LayoutView | None = None,
) -> Path:
    """The HTML report: tables, embedded plots, and one instructive episode's trace from the first store;
    ``layout``: a family layout's tables in place of the families' own."""
    from undertow.cluster.report import report_page, run_meta

    meta = run_meta((st.manifest() for st in stores), (st.location for st in stores))
    html, _ = report_page(analysis, results, stores[0].trajectories, title, meta, layout)
    path.write_text(html, encoding="utf-8")
    return path


def layout_owners(name: str, family_names: Iterable[str]) -> list[Family]:
    """The families (of ``family_names``, a run's) that have the report layout ``name``. A name none of them has
    is a :class:`ConfigError` listing the layouts they do have, with a did-you-mean."""
    found = [get_family(f) for f in dict.fromkeys(family_names)]
    known = sorted({layout for family in found for layout in family.layouts})
    owners = [family for family in found if name in family.layouts]
    if not owners:
        names = ", ".join(f.name for f in found) or "none"
        raise ConfigError(
            f"unknown layout '{name}' (layouts of this run's families ({names}): {', '.join(known) or 'none'})",
            field="--layout",
            hint=close_match(name, known) or close_match(name.lower(), known),
        )
    return owners


def apply_layout(name: str, owners: Sequence[Family], summaries: Mapping[str, FamilySummary]) -> LayoutView:
    """Each owner's layout ``name`` over its own suites' summaries, in order, as one view."""
    from undertow.cluster.report.tables import LayoutView

    tables: list[ReportTable] = []
    for family in owners:
        own = {suite: s for suite, s in summaries.items() if s.family == family.name}
        tables += family.layouts[name](own)
    return LayoutView(name, tables, frozenset(f.name for f in owners))


@dataclass
class RunReport:
    """A stored run's summary. ``rows`` and ``families`` are read from the store on first use, one shard at a
    time (the finished part of a run that is still going is reported as it is)."""

    store: RunStore
    manifest: RunManifest
    html: Path | None = None  # the HTML report written
    layout: str | None = None  # the family layout asked for (``--layout``), checked against the run's families

    @property
    def run_id(self) -> str:
        return self.manifest.run_id

    @property
    def location(self) -> str:
        return self.store.location

    @cached_property
    def rows(self) -> list[SummaryRow]:
        return summarize(self.store.iter_results())

    @cached_property
    def families(self) -> dict[str, FamilySummary]:
        return family_summaries(self.store.iter_results())

    @property
    def n_shards(self) -> int:
        return len(self.manifest.shards)

    @property
    def pending(self) -> int:
        """Shards without a committed result yet."""
        return len(self.manifest.shards) - len(self.store.committed())

    @cached_property
    def layout_view(self) -> LayoutView | None:
        """The tables of the layout asked for, over this run's family summaries (None when none was asked)."""
        if self.layout is None:
            return None
        owners = layout_owners(self.layout, (s.family for s in self.manifest.suites))
        return apply_layout(self.layout, owners, self.families)


def report(run: str, store: str | None = None, *, html: Path | None = None, layout: str | None = None) -> RunReport:
    """A run's summary from its store (a run id under ``store``, a run folder, or an ``s3://`` URI); with ``html``,
    also write the HTML report there (tables, plots, paired comparisons, recovery gaps, one episode's trace).
    ``store``: the run store folder or ``s3://bucket/prefix`` (default ``runs``). ``layout`` names a report layout
    of one of the run's families (``hohw``: a paper's tables): its tables (``RunReport.layout_view``) stand in for
    those families' own, in the HTML report too; a name none of them has is a :class:`ConfigError`."""
    run_store = RunStore.open(run, store or "runs")
    manifest = run_store.manifest()
    _check_html(html)
    owners = layout_owners(layout, (s.family for s in manifest.suites)) if layout is not None else []
    if html is not None:
        results = list(run_store.iter_results())
        analysis = analyse(results, manifest.model_sizes())
        view = apply_layout(layout, owners, analysis.families) if layout is not None else None
        write_html(html, analysis, results, [run_store], manifest.run_id, view)
    return RunReport(run_store, manifest, html, layout)


@dataclass(frozen=True)
class Comparison:
    """Models compared on the episodes they share, within one run or pooled over several."""

    run_ids: list[str]
    analysis: Analysis
    results: list[EpisodeResult]
    renamed: frozenset[str]  # model names found in two runs: each became name@run_id
    html: Path | None = None

    @property
    def nothing_to_compare(self) -> bool:
        return not self.analysis.comparisons and not self.analysis.gaps


def pool_runs(
    stores: Sequence[RunStore], manifests: Sequence[RunManifest]
) -> tuple[list[EpisodeResult], dict[str, float | None], frozenset[str]]:
    """The results and model sizes of several runs together. A model name found in two runs stands for two
    configurations to compare: it becomes ``name@run_id`` in each (the third item lists those names)."""
    names = [set(m.model_sizes()) for m in manifests]
    clashes = frozenset(n for i, a in enumerate(names) for b in names[i + 1 :] for n in a & b)
    results = []
    sizes: dict[str, float | None] = {}
    for st, manifest in zip(stores, manifests, strict=True):
        for r in st.iter_results():
            if r.model in clashes:
                r = r.model_copy(update={"model": f"{r.model}@{manifest.run_id}"})
            results.append(r)
        for name, size in manifest.model_sizes().items():
            sizes[f"{name}@{manifest.run_id}" if name in clashes else name] = size
    return results, sizes, clashes


def _pair_references(
    results: list[EpisodeResult], manifests: Sequence[RunManifest], renamed: frozenset[str]
) -> list[EpisodeResult]:
    """A reference run (published outputs, :mod:`.reference`) answered each scenario × setting once: its episodes
    pair with every seed of the other runs'."""
    from undertow.cluster.api.reference import is_reference, paired_with_reference

    models = {
        f"{name}@{m.run_id}" if name in renamed else name
        for m in manifests
        if is_reference(m)
        for name in m.model_sizes()
    }
    return paired_with_reference(results, models) if models and len(manifests) > 1 else results


def compare(
    runs: Sequence[str], store: str | None = None, *, baseline: str | None = None, html: Path | None = None
) -> Comparison:
    """Paired comparison of every two models on the episodes they share (difference with a paired bootstrap CI,
    McNemar's test) and each model's recovery gap from ``baseline`` (default ``clean``; one named must be a
    setting of the runs); one run compares its own models, several runs are pooled (:func:`pool_runs`). With
    ``html``, also write the comparison as an HTML report."""
    stores = [RunStore.open(r, store or "runs") for r in runs]
    manifests = [st.manifest() for st in stores]
    if len({m.run_id for m in manifests}) != len(manifests):
        raise StoreError("the same run is named twice")
    if baseline is not None:
        present = list(dict.fromkeys(s.setting.name for m in manifests for s in m.shards))
        if baseline not in present:
            raise ConfigError(
                f"unknown setting '{baseline}' (settings in the run(s): {', '.join(present) or 'none'})",
                field="--baseline",
                hint=close_match(baseline, present),
            )
    _check_html(html)
    results, sizes, renamed = pool_runs(stores, manifests)
    results = _pair_references(results, manifests, renamed)
    analysis = analyse(results, sizes, baseline=baseline or "clean")
    run_ids = [m.run_id for m in manifests]
    if html is not None:
        write_html(html, analysis, results, stores, " vs ".join(run_ids))
    return Comparison(run_ids, analysis, results, renamed, html)
