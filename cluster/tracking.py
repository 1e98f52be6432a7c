"""MLflow tracking: a sweep is a parent run, each model × suite × setting a nested child run.

The driver logs a child's metrics each time one of its shards commits (the step is the number of its shards
committed so far), and at the end the final metrics with their intervals, the recovery gaps, and the parent's
artifacts: the results table, the analysis as JSON, the HTML report and its plots.

MLflow is a view of the run store, never the place of record: a tracking failure (server down, its artifact
store down) is a warning, the run goes on, and ``undertow sync RUN`` logs whatever is missing later. What has been
logged is recorded in MLflow itself, as tags holding a fingerprint of the result objects the numbers came from
(``undertow.logged`` on a child, ``undertow.artifacts`` on the parent), so sync needs no state of its own, skips
what is current, and notices a shard that was rerun since.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from undertow.cluster.config import TrackingConfig
from undertow.env_core.model import EpisodeResult

Group = tuple[str, str, str]  # model, suite label, setting

RUN_TAG = "undertow.run_id"
GROUP_TAGS = ("undertow.model", "undertow.suite", "undertow.setting")
LOGGED_TAG = "undertow.logged"  # fingerprint of the group's results when its final numbers were logged
ARTIFACTS_TAG = "undertow.artifacts"  # fingerprint of the run's results when the artifacts were made
# after a failure, commits skip MLflow for this long instead of each waiting for the timeout again
RETRY_AFTER_S = 20.0
# MLflow's own defaults retry a dead server for minutes per call; a driver must not hang on its dashboard
# (and the CLI prints its own line with the run's address, not one per child run)
MLFLOW_DEFAULTS = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "10",
    "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true",
}
MAX_PARAM_CHARS = 6000


@dataclass
class TrackingReport:
    groups_logged: int = 0
    artifacts_logged: bool = False
    problems: list[str] = field(default_factory=list)


def group_metrics(results: list[EpisodeResult]) -> dict[str, float]:
    """The metrics of one model × suite × setting: accuracy with its Wilson and clustered bootstrap intervals,
    behaviour rates, outcome-class counts, tokens, time, and the family's own numbers (its summary's
    ``metrics``, named ``<family>.<field>…``)."""
    from undertow.env_core.families import family_summaries, flat_metrics
    from undertow.scoring.stats import cluster_bootstrap_interval
    from undertow.scoring.summary import summarize

    metrics: dict[str, float] = {}
    if not results:
        return metrics
    row = summarize(results)[0]
    for name in ("n", "n_valid", "accuracy", "correct_rate", "gave_up_rate", "safety_violations", "mean_turns"):
        flat_metrics(name, getattr(row, name), metrics)
    flat_metrics("mean_tool_calls", row.mean_tool_calls, metrics)
    flat_metrics("parse_failure_rate", row.parse_failure_rate, metrics)
    flat_metrics("text_call_rate", row.text_call_rate, metrics)
    flat_metrics("accuracy_ci_low", row.ci_low, metrics)
    flat_metrics("accuracy_ci_high", row.ci_high, metrics)
    valid = [r for r in results if r.outcome.judged]
    if valid:
        low, high = cluster_bootstrap_interval(
            [float(r.solved) for r in valid], [r.cluster_id or r.scenario_id for r in valid]
        )
        flat_metrics("accuracy_cluster_ci_low", low, metrics)
        flat_metrics("accuracy_cluster_ci_high", high, metrics)
    for outcome, count in row.outcomes.items():
        metrics[f"outcome.{outcome}"] = float(count)
    metrics["tokens.prompt"] = float(row.prompt_tokens)
    metrics["tokens.completion"] = float(row.completion_tokens)
    metrics["tokens.cached"] = float(row.cached_tokens)
    metrics["time.episode_s"] = sum(r.wall_ms for r in results) / 1000
    metrics["time.model_s"] = sum(r.model_ms for r in results) / 1000
    metrics["time.tool_s"] = sum(r.tool_ms for r in results) / 1000
    first = results[0]
    summary = family_summaries(results).get(first.suite)
    if summary is not None:
        metrics.update(summary.metrics(first.model, first.setting))
    return metrics


def _params(values: dict[str, Any]) -> dict[str, str]:
    out = {}
    for key, value in values.items():
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
        out[key] = text if len(text) <= MAX_PARAM_CHARS else text[: MAX_PARAM_CHARS - 1] + "…"
    return out


class Tracker:
    """Logs one run store to MLflow. Every public method swallows tracking failures into ``problems``."""

    def __init__(self, uri: str, artifact_location: str | None, experiment: str, store: Any):
        for name, value in MLFLOW_DEFAULTS.items():
            os.environ.setdefault(name, value)
        from mlflow import MlflowClient

        self.uri = uri
        self.client = MlflowClient(tracking_uri=uri)
        self.artifact_location = artifact_location
        self.experiment_name = experiment
        self.store = store
        self.manifest = store.manifest()
        self.groups: dict[Group, list[str]] = {}
        for shard in self.manifest.shards:
            key = (shard.model.name, shard.suite.label, shard.setting.name)
            self.groups.setdefault(key, []).append(shard.shard_id)
        self.group_of = {sid: key for key, sids in self.groups.items() for sid in sids}
        self.parent_id: str | None = None
        self.child_ids: dict[Group, str] = {}
        self.results: dict[Group, list[EpisodeResult]] = {}
        self.problems: list[str] = []
        self.warn: Callable[[str], None] = lambda message: None
        self._down_until = 0.0

    @classmethod
    def for_store(cls, store: Any, config: TrackingConfig | None = None) -> Tracker | None:
        """The tracker a run's config asks for (None: tracking is off)."""
        config = config or TrackingConfig.model_validate(store.manifest().config.get("tracking") or {})
        resolved = config.resolved()
        if resolved is None:
            return None
        experiment = config.experiment or store.manifest().config.get("name", "undertow")
        return cls(resolved[0], resolved[1], experiment, store)

    # -------------------------------------------------------------------------------------------- guarded calls

    def _guard(self, what: str, action: Callable[[], Any]) -> bool:
        if time.monotonic() < self._down_until:
            return False
        try:
            action()
            return True
        except Exception as exc:  # any failure of the tracking service: the results are safe in the store
            self._down_until = time.monotonic() + RETRY_AFTER_S
            message = f"MLflow ({self.uri}): {what} failed: {type(exc).__name__}: {str(exc)[:300]}"
            self.problems.append(message)
            self.warn(message + " — the run goes on; `undertow sync` logs it later")
            return False

    # -------------------------------------------------------------------------------------------- runs

    def _experiment_id(self) -> str:
        found = self.client.get_experiment_by_name(self.experiment_name)
        if found is not None:
            return found.experiment_id
        return self.client.create_experiment(self.experiment_name, artifact_location=self.artifact_location)

    def _open_runs(self) -> None:
        """Find the parent and child runs of this run id, creating the missing ones with their params."""
        if self.parent_id is not None and len(self.child_ids) == len(self.groups):
            return
        experiment = self._experiment_id()
        run_id = self.manifest.run_id
        existing = self.client.search_runs(
            [experiment], filter_string=f"tags.`{RUN_TAG}` = '{run_id}'", max_results=5000
        )
        for found in existing:
            tags = found.data.tags
            if "mlflow.parentRunId" not in tags:
                self.parent_id = found.info.run_id
            elif all(t in tags for t in GROUP_TAGS):
                self.child_ids[(tags[GROUP_TAGS[0]], tags[GROUP_TAGS[1]], tags[GROUP_TAGS[2]])] = found.info.run_id
        config = self.manifest.config
        if self.parent_id is None:
            parent = self.client.create_run(
                experiment,
                run_name=run_id,
                tags={RUN_TAG: run_id, "undertow.store": self.store.location, "undertow.kind": "sweep"},
            )
            self.parent_id = parent.info.run_id
            self._log_params(
                self.parent_id,
                {
                    "run_id": run_id,
                    "sweep": config.get("name"),
                    "models": [m["name"] for m in config.get("models", [])],
                    "suites": [s.label for s in self.manifest.suites],
                    "settings": [s["name"] for s in config.get("settings", [])],
                    "seeds": config.get("seeds"),
                    "code_version": self.manifest.versions.get("undertow", ""),
                    "versions": self.manifest.versions,
                    "data_hashes": {s.label: s.content_hash for s in self.manifest.suites},
                    "n_shards": len(self.manifest.shards),
                    "n_episodes": self.manifest.n_episodes,
                    "agent": config.get("agent"),
                    "store": self.store.location,
                },
            )
        records = {s.label: s for s in self.manifest.suites}
        shards = {s.shard_id: s for s in self.manifest.shards}
        for key, shard_ids in self.groups.items():
            if key in self.child_ids:
                continue
            model, suite, setting = key
            shard = shards[shard_ids[0]]
            record = records.get(suite)
            child = self.client.create_run(
                experiment,
                run_name=f"{model} · {suite} · {setting}",
                tags={
                    RUN_TAG: run_id,
                    "mlflow.parentRunId": self.parent_id,
                    **dict(zip(GROUP_TAGS, key, strict=True)),
                    "undertow.family": record.family if record else "",
                },
            )
            self.child_ids[key] = child.info.run_id
            model_params = {f"model.{k}": v for k, v in shard.model.model_dump(mode="json").items() if v is not None}
            self._log_params(
                child.info.run_id,
                {
                    **model_params,
                    "suite": suite,
                    "suite.family": record.family if record else "",
                    "suite.data_hash": record.content_hash if record else "",
                    "suite.n_scenarios": record.n_scenarios if record else "",
                    "setting": setting,
                    "setting.faults": shard.setting.model_dump(mode="json"),
                    "seeds": sorted({e.seed for sid in shard_ids for e in shards[sid].episodes}),
                    "protocol": shard.agent.protocol,
                    "agent": shard.agent.model_dump(mode="json"),
                    "code_version": self.manifest.versions.get("undertow", ""),
                    "n_shards": len(shard_ids),
                    "n_episodes": sum(len(shards[sid].episodes) for sid in shard_ids),
                },
            )

    def _log_params(self, run_id: str, values: dict[str, Any]) -> None:
        from mlflow.entities import Param

        params = [Param(k, v) for k, v in _params(values).items()]
        for start in range(0, len(params), 100):  # MLflow takes at most 100 params per batch
            self.client.log_batch(run_id, params=params[start : start + 100])

    def _log_group(
        self, key: Group, results: list[EpisodeResult], shards_done: int, extra: dict[str, float], logged: str
    ) -> None:
        run_id = self.child_ids[key]
        tags = {LOGGED_TAG: logged, "undertow.shards_done": str(shards_done)}
        self._log_metrics(run_id, {**group_metrics(results), **extra}, shards_done, tags)
        if shards_done == len(self.groups[key]) and logged != "partial":
            self.client.set_terminated(run_id, "FINISHED")

    def _log_metrics(self, run_id: str, values: dict[str, float], step: int, tags: dict[str, str]) -> None:
        """Metrics in batches MLflow accepts (1,000 at most); the tags that say what was logged go with the last
        batch, so they are never set without the numbers."""
        from mlflow.entities import Metric, RunTag

        now = int(time.time() * 1000)
        metrics = [Metric(name, value, now, step) for name, value in values.items()]
        batches = [metrics[start : start + 1000] for start in range(0, len(metrics), 1000)] or [[]]
        for i, batch in enumerate(batches):
            last = i == len(batches) - 1
            self.client.log_batch(run_id, metrics=batch, tags=[RunTag(k, v) for k, v in tags.items()] if last else [])

    # -------------------------------------------------------------------------------------------- the run

    def start(self) -> None:
        self._guard("opening runs", self._open_runs)

    def shard_committed(self, shard_id: str, results: list[EpisodeResult]) -> None:
        """Log the shard's group with every result it has so far (called by the driver after each commit)."""
        key = self.group_of.get(shard_id)
        if key is None:
            return
        if key not in self.results:  # resumed or rerun: the group's earlier shards count too
            earlier = self.store.committed() - {shard_id}
            self.results[key] = [r for sid in self.groups[key] if sid in earlier for r in self.store.shard_results(sid)]
        self.results[key] = [*(r for r in self.results[key] if r.shard_id != shard_id), *results]
        shards_done = len({r.shard_id for r in self.results[key]})
        self._guard(
            f"logging {' · '.join(key)}",
            lambda: (self._open_runs(), self._log_group(key, self.results[key], shards_done, {}, "partial")),
        )

    def finish(self) -> TrackingReport:
        """Final numbers for every group from the store, recovery gaps, and the parent's artifacts."""
        self._down_until = 0.0  # one more try at the end, whatever failed during the run
        return self.sync()

    def sync(self) -> TrackingReport:
        """Log whatever MLflow lacks: groups whose logged numbers do not come from their current result objects
        (fingerprints differ), and the artifacts likewise."""
        report = TrackingReport()
        before = len(self.problems)
        if self._guard("opening runs", self._open_runs):
            self._guard("reading what was logged", partial(self._sync, report))
        report.problems = self.problems[before:]
        return report

    def _sync(self, report: TrackingReport) -> None:
        from undertow.scoring.analysis import analyse

        digests = self.store.result_digests()
        results = list(self.store.iter_results())
        by_group: dict[Group, list[EpisodeResult]] = {}
        for r in results:
            by_group.setdefault((r.model, r.suite, r.setting), []).append(r)
        analysis = analyse(results, self.manifest.model_sizes())
        gaps = {
            (row.model, row.suite, row.setting): {
                "recovery_gap.estimate": row.estimate,
                "recovery_gap.ci_low": row.ci_low,
                "recovery_gap.ci_high": row.ci_high,
            }
            for row in analysis.gaps
        }
        for key, shard_ids in self.groups.items():
            done = [sid for sid in shard_ids if sid in digests]
            if not done:
                continue
            fingerprint = _fingerprint({sid: digests[sid] for sid in done})
            if self.client.get_run(self.child_ids[key]).data.tags.get(LOGGED_TAG) == fingerprint:
                continue
            extra = {k: v for k, v in gaps.get(key, {}).items() if v is not None and math.isfinite(v)}
            log = partial(self._log_group, key, by_group.get(key, []), len(done), extra, fingerprint)
            if self._guard(f"logging {' · '.join(key)}", log):
                report.groups_logged += 1
        fingerprint = _fingerprint(digests)
        parent_tags = self.client.get_run(self.parent_id).data.tags if self.parent_id else {}
        if parent_tags.get(ARTIFACTS_TAG) != fingerprint:
            report.artifacts_logged = self._guard(
                "logging artifacts", partial(self._log_artifacts, analysis, results, fingerprint, len(digests))
            )

    def _log_artifacts(self, analysis: Any, results: list[EpisodeResult], fingerprint: str, n_committed: int) -> None:
        from undertow.cluster.report import report_page, run_meta
        from undertow.cluster.store import results_parquet

        assert self.parent_id is not None
        meta = run_meta([self.manifest], [self.store.location])
        html, images = report_page(analysis, results, self.store.trajectories, self.manifest.run_id, meta)
        with tempfile.TemporaryDirectory(prefix="undertow-mlflow-") as tmp:
            folder = Path(tmp)
            (folder / "plots").mkdir()
            for name, data in images.items():
                (folder / "plots" / name).write_bytes(data)
            (folder / "report.html").write_text(html, encoding="utf-8")
            (folder / "analysis.json").write_text(analysis.to_json())
            (folder / "manifest.json").write_text(self.manifest.model_dump_json(indent=2))
            (folder / "results.parquet").write_bytes(results_parquet(results))
            self.client.log_artifacts(self.parent_id, str(folder))
        # the sweep-level numbers: every group's accuracy, the gaps and the paired model comparisons, side by side
        self._log_metrics(self.parent_id, analysis.metrics(), n_committed, {ARTIFACTS_TAG: fingerprint})
        if n_committed == len(self.manifest.shards):
            self.client.set_terminated(self.parent_id, "FINISHED")


def _fingerprint(digests: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(sorted(digests.items())).encode()).hexdigest()[:16]
