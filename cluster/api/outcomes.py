"""What a run reports as it goes and when its shards ran: the work about to start (:class:`RunStart`), progress
(:class:`RunProgress`), the outcome (:class:`RunOutcome`) and what publishing it did (:class:`PublishReport`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from undertow.cluster.plan import RunManifest
from undertow.env_core.families import FamilySummary
from undertow.env_core.model import EpisodeResult, Outcome, Trajectory
from undertow.scoring.summary import SummaryRow

if TYPE_CHECKING:
    from undertow.cluster.tracking import TrackingReport


@dataclass(frozen=True)
class RunStart:
    """The work of a run (or of a resume, a rerun) about to start."""

    run_id: str
    location: str  # the run's folder or s3:// URI
    n_shards: int  # planned in all
    shards: int  # to run now
    episodes: int  # to run now


@dataclass(frozen=True)
class RunProgress:
    done: int  # episodes run so far
    total: int  # episodes to run
    infra_errors: int  # of those done
    elapsed_s: float
    rate: float | None  # episodes per second; None before the first shard is committed
    shard_id: str | None = None  # the shard just committed


@dataclass(frozen=True)
class PublishReport:
    """What publishing a run did: S3 objects uploaded after an outage, MLflow numbers and artifacts logged."""

    complete: bool  # everything is now where it belongs
    uploaded: list[str] = field(default_factory=list)  # S3 keys uploaded now
    s3_problem: str | None = None
    tracking: TrackingReport | None = None  # None: tracking is off
    mlflow_uri: str | None = None
    experiment: str | None = None
    mlflow_run_id: str | None = None


@dataclass(frozen=True)
class RunOutcome:
    """A run after its shards ran. ``rows`` and ``families`` summarize every committed result of the run;
    ``ran`` and ``outcomes`` count the episodes this call ran."""

    run_id: str
    location: str
    manifest: RunManifest
    elapsed_s: float
    ran: int
    outcomes: dict[str, int]  # episodes this call ran, per outcome class
    rows: list[SummaryRow]
    families: dict[str, FamilySummary]
    unreachable: dict[str, str] = field(default_factory=dict)  # model -> why its endpoint was unreachable
    retried: dict[str, list[str]] = field(default_factory=dict)  # shard id -> errors of its failed attempts
    warnings: list[str] = field(default_factory=list)  # trouble that did not stop the run (a replica lost, ...)
    text_call_warnings: list[str] = field(default_factory=list)
    publish: PublishReport | None = None

    @property
    def infra_errors(self) -> int:
        return self.outcomes.get(Outcome.infra_error.value, 0)

    @property
    def config_errors(self) -> int:
        return self.outcomes.get(Outcome.config_error.value, 0)

    @property
    def scored(self) -> int:
        """Episodes this call ran that could be scored (neither an infra_error nor a config_error)."""
        return self.ran - self.infra_errors - self.config_errors

    @property
    def none_scored(self) -> bool:
        """This call ran episodes and none could be scored: each is an infra_error or a config_error (the CLI
        exits 3)."""
        return self.ran > 0 and self.scored <= 0


@dataclass(frozen=True)
class NothingToRerun:
    """:func:`rerun` of a run without a failed shard."""

    run_id: str


Kept = dict[str, tuple[list[EpisodeResult], list[Trajectory]]]
