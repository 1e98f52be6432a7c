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
