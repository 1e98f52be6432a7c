"""Publishing a run: finish the uploads it owes (S3 objects written during an outage, MLflow numbers and
artifacts), at the end of a run (:func:`publish`) or later, once the S3 and MLflow servers are back (:func:`sync`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from undertow.cluster.api.hooks import Hooks
from undertow.cluster.api.outcomes import PublishReport
from undertow.cluster.config import TrackingConfig
from undertow.cluster.store import RunStore
from undertow.storage import StorageUnavailable

if TYPE_CHECKING:
    from undertow.cluster.tracking import Tracker


def tracker_for(run_store: RunStore, config: TrackingConfig | None, warn: Callable[[str], None]) -> Tracker | None:
    """The MLflow tracker of a run (``config``: its tracking settings, or None for those of the run's config); None
    when tracking is off, or cannot start (said through ``warn``: tracking never stops an evaluation)."""
    from undertow.cluster.tracking import Tracker

    try:
        tracker = Tracker.for_store(run_store, config)
    except Exception as exc:  # a broken tracking setup must not stop an evaluation
        warn(f"MLflow tracking is off for this run: {type(exc).__name__}: {exc}")
        return None
    if tracker is not None:
        tracker.warn = warn
    return tracker


def publish(run_store: RunStore, tracker: Tracker | None, hooks: Hooks | None = None) -> PublishReport:
    """Finish the uploads a run owes: S3 objects written during an outage, MLflow numbers and artifacts. Says what
    was done (``hooks.info``) and what is still missing (``hooks.warning``)."""
    hooks = hooks or Hooks()
    uploaded: list[str] = []
    s3_problem = None
    if run_store.remote is not None:
        try:
            uploaded = run_store.sync()
            if uploaded:
                hooks.info(f"S3: uploaded {len(uploaded)} object(s) to {run_store.remote.uri}")
        except StorageUnavailable as exc:
            s3_problem = f"{exc}; the results are complete in {run_store.folder}"
            hooks.warning(s3_problem)
    tracking = None
    if tracker is not None:
        tracking = tracker.finish()
        if not tracking.problems:
            hooks.info(
                f"MLflow: {tracker.uri} experiment '{tracker.experiment_name}', run {tracker.parent_id}"
                f" ({tracking.groups_logged} child run(s) updated)"
            )
    complete = s3_problem is None and not (tracking is not None and tracking.problems)
    if not complete:
        # the run's own location works from any folder and whatever the store was called
        hooks.warning(
            f"not everything was uploaded: run `undertow sync {run_store.location}` when S3 and MLflow are back"
        )
    return PublishReport(
        complete=complete,
        uploaded=uploaded,
        s3_problem=s3_problem,
        tracking=tracking,
        mlflow_uri=tracker.uri if tracker is not None else None,
        experiment=tracker.experiment_name if tracker is not None else None,
        mlflow_run_id=tracker.parent_id if tracker is not None else None,
    )


@dataclass(frozen=True)
class SyncOutcome:
    run_id: str
    local: bool  # a local run: there is no S3 side
    tracking: bool  # MLflow tracking is on for it
    publish: PublishReport

    @property
    def complete(self) -> bool:
        return self.publish.complete


def sync(run: str, store: str | None = None, *, mlflow: str | None = None, hooks: Hooks | None = None) -> SyncOutcome:
    """After an outage: upload what S3 lacks from the local copy and log what MLflow lacks (``mlflow``: another
    tracking URI than the run's config names). Safe to repeat: current objects and numbers are left alone."""
    hooks = hooks or Hooks()
    run_store = RunStore.open(run, store or "runs")
    manifest = run_store.manifest()
    run_store.warn = hooks.warning
    config = TrackingConfig.model_validate(manifest.config.get("tracking") or {})
    if mlflow is not None:
        config = config.model_copy(update={"mlflow_uri": mlflow})
    tracker = tracker_for(run_store, config, hooks.warning)
    if run_store.remote is None:
        hooks.info(f"{manifest.run_id}: a local run ({run_store.folder}); nothing to upload")
    if tracker is None:
        hooks.info("MLflow: tracking is off for this run (tracking.mlflow_uri in its config, or --mlflow URI)")
    report = publish(run_store, tracker, hooks)
    return SyncOutcome(manifest.run_id, run_store.remote is None, tracker is not None, report)
