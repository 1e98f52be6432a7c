"""Which isolation the CodeAct sandbox gets: `undertow doctor`, the run manifest, and the refusal of a run on a
machine weaker than `sandbox.require`. A machine without user namespaces is made for real: a user namespace whose
`user.max_user_namespaces` is 0 (the kernel then refuses `unshare(CLONE_NEWUSER)` inside it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers.cli import UNDERTOW

from undertow.cluster import api
from undertow.cluster.config import ConfigError
from undertow.cluster.store import RunStore
from undertow.env_core.sandbox import available_isolation

NO_USERNS = 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"'

pytestmark = pytest.mark.skipif(
    available_isolation().level != "namespaces", reason=f"no namespaces here: {available_isolation().detail}"
)


def without_user_namespaces(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``args`` where creating a user namespace fails, as on a machine that forbids them."""
    unshare = shutil.which("unshare")
    assert unshare is not None, "util-linux unshare is needed to make a machine without user namespaces"
    return subprocess.run(
        [unshare, "--user", "--map-root-user", "sh", "-c", NO_USERNS, "sh", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def codeact_config(tmp_path: Path, **extra: object) -> Path:
    config = {
        "name": "codeact",
        "models": [{"name": "served", "kind": "openai", "base_url": "http://127.0.0.2:9/v1"}],
        "suites": ["smoke"],
        "agent": {"protocol": "codeact"},
        **extra,
    }
    path = tmp_path / "codeact.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_doctor_says_namespaces_here(tmp_path: Path) -> None:
    done = subprocess.run([UNDERTOW, "doctor"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    line = next(row for row in done.stdout.splitlines() if row.split()[:1] == ["sandbox"])
    assert "ok" in line and "namespaces: user, mount, PID, network, IPC and UTS namespaces" in line


def test_doctor_without_user_namespaces_says_rlimits_and_why(tmp_path: Path) -> None:
    done = without_user_namespaces(UNDERTOW, "doctor", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())  # the table wraps long details
    assert "sandbox ! rlimits: namespaces unavailable (unshare: No space left on device)" in text
    assert "CodeAct runs here only with sandbox.require: rlimits" in text


def test_a_codeact_run_is_refused_where_the_required_isolation_is_missing(tmp_path: Path) -> None:
    config = codeact_config(tmp_path)
    done = without_user_namespaces(UNDERTOW, "validate", str(config), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: {config}: sandbox.require: CodeAct needs sandbox isolation 'namespaces' but ")
    assert "this machine gives 'rlimits' (namespaces unavailable (unshare: No space left on device))" in line
    assert "or accept weaker isolation with sandbox.require: rlimits (see SECURITY.md)" in line
    # Accepting the weaker level is one override away
    done = without_user_namespaces(UNDERTOW, "validate", str(config), "sandbox.require=rlimits", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_manifest_records_the_isolation_in_force(tmp_path: Path) -> None:
    plan = api.plan(codeact_config(tmp_path))
    assert plan.manifest.sandbox is not None
    assert plan.manifest.sandbox.startswith("namespaces: user, mount, PID, network, IPC and UTS namespaces")
    assert all(shard.sandbox.require == "namespaces" for shard in plan.manifest.shards)
    # Built-in policies run their calls as cells under CodeAct: the isolation is recorded for them too; with
    # function calling no kernel runs and there is nothing to record
    policies = tmp_path / "policies.yaml"
    policies.write_text(yaml.safe_dump({"models": ["oracle"], "suites": ["smoke"], "agent": {"protocol": "codeact"}}))
    assert api.plan(policies).manifest.sandbox.startswith("namespaces:")
    policies.write_text(yaml.safe_dump({"models": ["oracle"], "suites": ["smoke"]}))
    assert api.plan(policies).manifest.sandbox is None


def test_a_misspelt_level_is_refused_with_the_levels(tmp_path: Path) -> None:
    config = codeact_config(tmp_path, sandbox={"require": "namespace"})
    done = subprocess.run([UNDERTOW, "validate", str(config)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: {config}:") and "sandbox.require" in line
    assert "'rlimits'" in line and "'namespaces'" in line


def test_a_run_planned_before_the_sandbox_section_existed_resumes_with_its_config(
    tmp_path: Path, ray_local: None
) -> None:
    config = tmp_path / "policies.yaml"
    config.write_text(yaml.safe_dump({"models": ["oracle"], "suites": ["smoke"], "run": {"store": "runs"}}))
    manifest = api.plan(config).manifest
    del manifest.config["sandbox"]  # what a manifest written by an earlier version holds
    store = RunStore.create(str(tmp_path / "runs"), manifest.run_id)
    store.write_manifest(manifest)
    outcome = api.resume(manifest.run_id, config, store=str(tmp_path / "runs"))
    assert outcome.ran == manifest.n_episodes
    # A section set to something other than its default is still a difference
    with pytest.raises(ConfigError, match=r"differs from the run's config.*sandbox"):
        api.resume(manifest.run_id, config, ["sandbox.require=rlimits"], store=str(tmp_path / "runs"))
