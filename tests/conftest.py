"""Shared fixtures. Ray is started once per test session, on loopback, and stopped at the end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from services import LocalServices

from env_core.suites import Suite, SuiteRef, load_ref, suite_ref

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Suites built on first use, embedding caches and vLLM's compile cache go to a temporary folder, not the user's
    home. The compile cache is set as users set it (VLLM_CACHE_ROOT), so every server of the session shares it."""
    import os

    folder = tmp_path_factory.mktemp("undertow-cache")
    wanted = {"UNDERTOW_CACHE": str(folder), "VLLM_CACHE_ROOT": str(folder / "vllm")}
    previous = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    yield
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


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

    from cluster.scheduler import ensure_ray

    ensure_ray(num_cpus=2)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="session")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServices]:
    """A real SeaweedFS S3 server and a real MLflow server (its artifacts in that S3), for the whole session."""
    running = LocalServices.allocate(tmp_path_factory.mktemp("services"))
    running.up()
    try:
        yield running
    finally:
        running.down()


@pytest.fixture
def s3_env(services: LocalServices, monkeypatch: pytest.MonkeyPatch) -> LocalServices:
    """The test process talks to the S3 server through the standard AWS variables, as users do."""
    for name, value in services.env().items():
        monkeypatch.setenv(name, value)
    return services


# ---------------------------------------------------------------------------------------------------------------
# The accounting identity over every run the test session made: each run checks it itself when it finishes
# (cluster.api), and this checks again, independently, every run folder left under the session's temporary folder,
# finished, interrupted or rerun alike. A test that forges an unbalanced store on purpose names its run folder
# "forged-…" so that it is left out.

ACCOUNTING: dict[str, list[str]] = {"checked": [], "problems": []}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from cluster.store import RunStore

    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None or session.config.option.collectonly:
        return
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
