"""Remote clusters: a sweep submitted as a Ray Job (``undertow run`` there, with the config's folder uploaded),
and followed until it ends."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from undertow.cluster.config import ConfigError, load_config
from undertow.cluster.plan import plan_sweep


@dataclass(frozen=True)
class Submission:
    job_id: str
    entrypoint: str
    address: str  # the cluster's dashboard


@dataclass(frozen=True)
class JobOutcome:
    job_id: str
    status: str  # SUCCEEDED, FAILED or STOPPED
    logs: str

    @property
    def succeeded(self) -> bool:
        return self.status == "SUCCEEDED"


def submit(config: str | Path, overrides: Sequence[str] | None = None, *, address: str) -> Submission:
    """Submit a sweep to a remote Ray cluster as a Ray Job: ``undertow run`` there, with the config's folder
    uploaded. Every input problem is found here first; ``run.store`` must outlive the job's temporary working
    folder (an absolute path on the cluster's shared storage, or S3)."""
    config_path = Path(config)
    if not address:
        raise ConfigError("--address: give the cluster's dashboard address, e.g. http://head-node:8265")
    sweep = load_config(config_path, list(overrides) if overrides else None)
    written = sweep.run.store_as_written or sweep.run.store  # the cluster resolves what the file wrote, not us
    if not Path(written).is_absolute() and not written.startswith("s3://"):
        raise ConfigError(
            f"{config_path}: run.store: a submitted run needs a store that outlives the job's temporary working"
            f" folder: an absolute path on the cluster's shared storage (got '{written}')"
        )
    plan_sweep(sweep)  # every input problem stops here, before anything reaches the cluster
    client = _job_client(address)
    entrypoint = " ".join(["undertow", "run", config_path.name, *(overrides or []), "--address", "auto"])
    job_id = client.submit_job(entrypoint=entrypoint, runtime_env={"working_dir": str(config_path.parent.resolve())})
    return Submission(str(job_id), entrypoint, address)


def wait_for_job(submission: Submission, poll_s: float = 1.0) -> JobOutcome:
    """Follow a submitted job until it ends; its status and its logs."""
    from ray.job_submission import JobStatus

    client = _job_client(submission.address)
    terminal = {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.STOPPED}
    while (state := client.get_job_status(submission.job_id)) not in terminal:
        time.sleep(poll_s)
    return JobOutcome(submission.job_id, str(state.value), str(client.get_job_logs(submission.job_id)))


def _job_client(address: str) -> Any:
    from ray.job_submission import JobSubmissionClient

    from undertow.cluster.scheduler import ClusterUnreachable

    try:
        return JobSubmissionClient(address)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ClusterUnreachable(f"no Ray job server answers at {address}: {exc}") from None
