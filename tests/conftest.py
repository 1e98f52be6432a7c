"""Shared fixtures and the session's rules: one suite cache for the whole session (every xdist worker included),
Ray started once per worker, the lane markers, the scheduling of groups of tests over xdist workers, and the
accounting check over every run the session made.

Lanes: ``make test`` runs everything; ``make test-fast`` leaves out the markers ``slow``, ``vllm``, ``cluster`` and
``tracking``. A test that uses the S3 + MLflow stack is marked ``tracking`` here whatever its module says, so a new
one cannot slip into the fast lane.

Under ``pytest -n 2 --dist loadgroup`` (pytest-xdist) the tests of one module stay on one worker (its module
fixtures run once), the S3 + MLflow tests share one worker (one stack) and so do the vLLM tests (one server at a
time on 2 cores), and the heaviest groups are handed out first. The groups are decided where the markers are known,
in the workers, and handed to the controller's scheduler in a file: pytest 9 derives ``nodeid`` from the node's
structured id, so xdist's own ``xdist_group`` suffix on the node id no longer takes effect."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.tracking_stack import TrackingStack

from undertow.env_core.suites import Suite, SuiteRef, load_ref, suite_ref

TRACKING_FIXTURES = {"tracking_stack", "s3_env"}
# groups handed out first under xdist, heaviest first; the rest keep their collection order
FIRST = ("vllm", "tracking", "cluster", "slow")


def _session_folder(factory: pytest.TempPathFactory) -> Path:
    """The session's own temporary folder: under xdist each worker's basetemp is a child of the controller's."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Suites built on first use, embedding caches, helper replies and vLLM's compile cache go to one new folder per
    session (empty at the start: every suite is built by the session that uses it), shared by the xdist workers —
    the product's cache is safe for concurrent builders (a build is renamed into place) — not the user's home. The
    compile cache is set as users set it (VLLM_CACHE_ROOT), so every server of the session shares it."""
    folder = _session_folder(tmp_path_factory) / "undertow-cache"
    folder.mkdir(exist_ok=True)
    wanted = {"UNDERTOW_CACHE": str(folder), "VLLM_CACHE_ROOT": str(folder / "vllm")}
    previous = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    yield
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _group(item: pytest.Item) -> str:
    for shared in ("vllm", "tracking"):
        if item.get_closest_marker(shared):
            return shared
    return item.nodeid.split("::")[0]


GROUPS_FILE = "xdist-groups-{worker}.json"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if TRACKING_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.tracking)
    rank: dict[str, int] = {}
    for item in items:
        marks = [i for i, name in enumerate(FIRST) if item.get_closest_marker(name)]
        group = _group(item)
        rank[group] = min([rank.get(group, len(FIRST)), *marks])
    order = {id(item): index for index, item in enumerate(items)}
    first_seen: dict[str, int] = {}
    for item in items:
        first_seen.setdefault(_group(item), order[id(item)])
    items.sort(key=lambda item: (rank[_group(item)], first_seen[_group(item)], order[id(item)]))
    worker = getattr(config, "workerinput", {}).get("workerid")
    if worker is not None:  # an xdist worker: tell the controller's scheduler each test's group
        folder = config._tmp_path_factory.getbasetemp().parent  # type: ignore[attr-defined]
        groups = {item.nodeid: _group(item) for item in items}
        (folder / GROUPS_FILE.format(worker=worker)).write_text(json.dumps(groups))


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup``: whole groups to a worker, in collection order (heaviest first, as sorted above)."""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    folder = config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]

    class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:  # read once every worker has collected (scheduling starts after that)
                self.groups = {}
                for path in sorted(folder.glob(GROUPS_FILE.format(worker="*"))):
                    self.groups.update(json.loads(path.read_text()))
            return self.groups.get(nodeid, nodeid)

    config.option.loadscopereorder = False
    return GroupScheduling(config, log)


@pytest.fixture(autouse=True)
def family_registry() -> Iterator[None]:
    """Each test sees the installed families only: one that a test registers in the worker's process (the toy
    family, by its reference) is gone after it, so that what lists every family (the every-family check, the report
    schemas) does not depend on which tests ran before in the same worker."""
    from undertow.env_core import families

    families.family_names()  # the entry points, loaded before the snapshot
    registered, references = dict(families._families), dict(families._references)
    yield
    families._families.clear()
    families._families.update(registered)
    families._references.clear()
    families._references.update(references)


@pytest.fixture(scope="session")
def smoke_ref() -> SuiteRef:
    return suite_ref("smoke")


@pytest.fixture(scope="session")
def smoke(smoke_ref: SuiteRef) -> Suite:
    return load_ref(smoke_ref)


@pytest.fixture(scope="session")
def ray_local() -> Iterator[None]:
    """A real local Ray instance (2 CPUs, loopback address 127.0.0.2), started as `undertow run` starts it (the
    raylet reaps what dead workers leave), shared by the tests that need one."""
    import ray

    from undertow.cluster.scheduler import ensure_ray

    ensure_ray(num_cpus=2)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="session")
def tracking_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TrackingStack]:
    """A real SeaweedFS S3 server and a real MLflow server (its artifacts in that S3), for the whole session."""
    running = TrackingStack.allocate(tmp_path_factory.mktemp("tracking-stack"))
    running.up()
    try:
        yield running
    finally:
        running.down()


@pytest.fixture
def s3_env(tracking_stack: TrackingStack, monkeypatch: pytest.MonkeyPatch) -> TrackingStack:
    """The test process talks to the S3 server through the standard AWS variables, as users do."""
    for name, value in tracking_stack.env().items():
        monkeypatch.setenv(name, value)
    return tracking_stack


# ---------------------------------------------------------------------------------------------------------------
# The accounting identity over every run the test session made: each run checks it itself when it finishes
# (cluster.api), and this checks again, independently, every run folder left under the session's temporary folder,
# finished, interrupted or rerun alike. A test that forges an unbalanced store on purpose names its run folder
# "forged-…" so that it is left out.

ACCOUNTING: dict[str, list[str]] = {"checked": [], "problems": []}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from undertow.cluster.store import RunStore

    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None or session.config.option.collectonly or hasattr(session.config, "workerinput"):
        return  # an xdist worker: the controller checks every worker's runs, all under its own folder
    for manifest in sorted(factory.getbasetemp().rglob("manifest.json")):
        folder = manifest.parent
        if "history" in folder.parts or any(part.startswith("forged-") for part in folder.parts):
            continue
        ACCOUNTING["checked"].append(str(folder))
        try:
            RunStore(folder).check_accounting()
        except Exception as exc:
            ACCOUNTING["problems"].append(f"{folder}: {type(exc).__name__}: {exc}")
    if ACCOUNTING["problems"] and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not ACCOUNTING["checked"]:
        return
    problems = ACCOUNTING["problems"]
    terminalreporter.write_sep(
        "-", f"accounting: {len(ACCOUNTING['checked'])} run(s) checked, {len(problems)} unbalanced"
    )
    for problem in problems:
        terminalreporter.write_line(problem, red=True)
