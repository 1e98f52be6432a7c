"""What undertow does, as plain functions that return typed objects: the ``undertow`` command line
(:mod:`undertow.cluster.cli`) is a thin layer over this package, and a researcher calls the same functions from
Python::

    from undertow.cluster import api

    outcome = api.run("configs/quickstart.yaml", ["seeds=[0,1]"])
    for row in outcome.rows:
        print(row.model, row.setting, row.accuracy)
    report = api.report(outcome.run_id)

Nothing here prints. Long operations report as they go through optional callbacks (:class:`Hooks`); problems with
the caller's input raise exceptions phrased for the user (:func:`is_user_error` tells them from bugs).

- :func:`plan`: check a config and its suites, and make the plan (what ``undertow validate`` shows)
- :func:`run`, :func:`resume`, :func:`rerun`: plan, execute on Ray and publish (S3, MLflow); a :class:`RunOutcome`
- :func:`status`, :func:`report`, :func:`compare`, :func:`sync`, :func:`replay`: read (and finish) stored runs
- :func:`submit`, :func:`wait_for_job`: a sweep as a Ray Job on a remote cluster
- :func:`build`, :func:`retrieval_eval`, :func:`catalog`: suites, families, settings and policies

The modules, by concern: :mod:`.hooks` (callbacks and user errors), :mod:`.planning`, :mod:`.running` (with
:mod:`.outcomes`, what a run reports, and :mod:`.publishing`, S3 and MLflow), :mod:`.reports` (status, report,
compare), :mod:`.replays` (episodes, replay), :mod:`.jobs` (remote clusters), :mod:`.suites` and :mod:`.recall`
(retrieval evaluation), :mod:`.diagnostics` (doctor). Every public name is importable from here.
"""

from undertow.cluster.api.diagnostics import Check, doctor
from undertow.cluster.api.hooks import USER_ERRORS, Hooks, is_user_error
from undertow.cluster.api.jobs import JobOutcome, Submission, submit, wait_for_job
from undertow.cluster.api.outcomes import Kept, NothingToRerun, PublishReport, RunOutcome, RunProgress, RunStart
from undertow.cluster.api.planning import VLLM_INSTALL, ConfigSource, Plan, ServedModelPlan, load, plan
from undertow.cluster.api.publishing import SyncOutcome, publish, sync, tracker_for
from undertow.cluster.api.recall import EMBEDDING_MODES, RETRIEVAL_MODES, RetrievalEval, retrieval_eval
from undertow.cluster.api.reference import ReferenceRun, is_reference, write_reference
from undertow.cluster.api.replays import PENDING, REPLAY_FIELDS, EpisodeRow, ReplayOutcome, episodes, replay
from undertow.cluster.api.reports import (
    Comparison,
    ErrorGroup,
    RunReport,
    RunStatus,
    StatusRow,
    apply_layout,
    compare,
    layout_owners,
    pool_runs,
    report,
    status,
    write_html,
)
from undertow.cluster.api.running import (
    TEXT_CALL_THRESHOLD,
    failed_shards,
    partial_manifest,
    rerun,
    resume,
    run,
    text_call_warnings,
)
from undertow.cluster.api.suites import (
    DOCS_CHOICES,
    OVERVIEW_FIELDS,
    BuildOutcome,
    Catalog,
    Entry,
    SuiteOverview,
    build,
    catalog,
    import_suite,
    suite_overview,
    suite_reference,
)

__all__ = [
    "DOCS_CHOICES",
    "EMBEDDING_MODES",
    "OVERVIEW_FIELDS",
    "PENDING",
    "REPLAY_FIELDS",
    "RETRIEVAL_MODES",
    "TEXT_CALL_THRESHOLD",
    "USER_ERRORS",
    "VLLM_INSTALL",
    "BuildOutcome",
    "Catalog",
    "Check",
    "Comparison",
    "ConfigSource",
    "Entry",
    "EpisodeRow",
    "ErrorGroup",
    "Hooks",
    "JobOutcome",
    "Kept",
    "NothingToRerun",
    "Plan",
    "PublishReport",
    "ReferenceRun",
    "ReplayOutcome",
    "RetrievalEval",
    "RunOutcome",
    "RunProgress",
    "RunReport",
    "RunStart",
    "RunStatus",
    "ServedModelPlan",
    "StatusRow",
    "Submission",
    "SuiteOverview",
    "SyncOutcome",
    "apply_layout",
    "build",
    "catalog",
    "compare",
    "doctor",
    "episodes",
    "failed_shards",
    "import_suite",
    "is_reference",
    "is_user_error",
    "layout_owners",
    "load",
    "partial_manifest",
    "plan",
    "pool_runs",
    "publish",
    "replay",
    "report",
    "rerun",
    "resume",
    "retrieval_eval",
    "run",
    "status",
    "submit",
    "suite_overview",
    "suite_reference",
    "sync",
    "text_call_warnings",
    "tracker_for",
    "wait_for_job",
    "write_html",
    "write_reference",
]
