"""Sweep planning: a config expands to episodes, episodes group into content-addressed shards, and the run manifest
records everything needed to reproduce the run.

Planning loads and checks every suite, so a missing file or a scenario that references an unknown tool stops the
run before any episode starts.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from undertow.cluster.config import SweepConfig
from undertow.env_core.errors import ConfigError, did_you_mean
from undertow.env_core.families import get_family
from undertow.env_core.faults import not_applicable
from undertow.env_core.model import SCHEMA_VERSION, SYMBOLIC_TARGETS, Scenario, Strict
from undertow.env_core.simulated import EMULATED
from undertow.env_core.suites import Suite, SuiteRef, load_ref
from undertow.storage import is_s3, join_uri
from undertow.workers.agent import FOLLOW_UP_PROTOCOLS, HARNESS_PROMPT_PROTOCOLS, AgentConfig
from undertow.workers.docgen import document_suite
from undertow.workers.runner import EpisodePlan, ShardSpec


class SuiteRecord(Strict):
    label: str
    family: str
    version: str
    content_hash: str
    n_scenarios: int
    skipped: list[str] = Field(default_factory=list)


class RunManifest(Strict):
    """Written once, first, and never changed: the plan of the run."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    created: str
    config: dict[str, Any]
    versions: dict[str, str]
    suites: list[SuiteRecord]
    shards: list[ShardSpec]
    # the isolation CodeAct kernels run under ("namespaces: ..."), None when no kernel runs (env_core.sandbox)
    sandbox: str | None = None

    @property
    def n_episodes(self) -> int:
        return sum(len(s.episodes) for s in self.shards)

    def model_sizes(self) -> dict[str, float | None]:
        """Each model's ``size_b`` (billions of parameters; None: not given), the x axis of size plots."""
        return {s.model.name: s.model.size_b for s in self.shards}


def _digest(*parts: Any) -> str:
    """16 hex digits of the sha256 of the parts' canonical JSON."""
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def code_version() -> str:
    """The package version plus the git commit of the source tree when there is one."""
    version = metadata.version("undertow")
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return version
    return f"{version}+g{commit}" if commit else version


def versions() -> dict[str, str]:
    found = {"undertow": code_version(), "python": platform.python_version(), "platform": platform.platform()}
    for package in ("ray", "pydantic", "openai", "sqlglot", "pyarrow"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "not installed"
    return found


def check_fault_targets(config: SweepConfig, loaded: list[tuple[SuiteRef, Suite]]) -> None:
    """Every tool a setting's fault names must be a tool of every suite it applies to: a misspelt target would
    leave a "faulted" setting as clean as the baseline, silently. (Symbolic targets are checked by FaultSpec.)"""
    for i, setting in enumerate(config.settings):
        for j, fault in enumerate(setting.faults):
            named = [(target, "target") for target in fault.targets]
            if "on" in fault.params:  # a cascade's upstream tool: misspelt, the cascade would never fire
                named.append((str(fault.params["on"]), "params.on"))
            for target, where in named:
                if target in SYMBOLIC_TARGETS:
                    continue
                for ref, suite in loaded:
                    if target not in suite.toolbox.specs:
                        raise ConfigError(
                            f"unknown tool '{target}' in suite '{ref.label}'",
                            field=f"settings[{i}].faults[{j}].{where}",
                            hint=did_you_mean(target, [*suite.toolbox.specs, *SYMBOLIC_TARGETS]),
                        )


def check_hints(config: SweepConfig, loaded: list[tuple[SuiteRef, Suite]]) -> None:
    """A setting that shows hints needs a suite with hints: on a suite without any it would run as its hint-less
    twin and be reported as the hinted condition, silently."""
    for i, setting in enumerate(config.settings):
        if not setting.hints:
            continue
        for ref, suite in loaded:
            if not any(scenario.hint for scenario in suite.scenarios):
                raise ConfigError(
                    f"setting '{setting.name}' shows hints, but no scenario of suite '{ref.label}' has one",
                    field=f"settings[{i}].hints",
                    hint="use a setting without hints for this suite, or a suite whose scenarios carry hints",
                )


def check_helpers(config: SweepConfig, loaded: list[tuple[SuiteRef, Suite]]) -> None:
    """The helper models a run needs are configured, and none is configured where nothing would use it: emulated
    tools need the suite's ``emulator``, scenarios without gold its ``judge`` (from a family that has one), and a
    setting's ``human_model`` its ``ask_human``."""
    for i, ref in enumerate(config.suites):
        suite = loaded[i][1]
        emulated = [spec.name for spec in suite.toolbox.specs.values() if spec.binding.get(EMULATED)]
        if emulated and ref.emulator is None:
            raise ConfigError(
                f"suite '{ref.label}' has {len(emulated)} emulated tool(s) (e.g. '{emulated[0]}': their real APIs "
                "are out of reach), and no emulator model to answer them",
                field=f"suites[{i}].emulator",
                hint="add emulator: {url: http://HOST:PORT/v1, name: MODEL}",
            )
        ungraded = [s.id for s in suite.scenarios if not s.gold.graded()]
        judges = get_family(suite.family, ref.family_ref).judge is not None
        if ungraded and judges and ref.judge is None:
            raise ConfigError(
                f"suite '{ref.label}' has {len(ungraded)} scenario(s) without a gold answer (e.g. '{ungraded[0]}'), "
                "which only a judge model can grade",
                field=f"suites[{i}].judge",
                hint="add judge: {url: http://HOST:PORT/v1, name: MODEL, k: 5}",
            )
        if ref.judge is not None and not judges:
            raise ConfigError(
                f"suite '{ref.label}': family '{suite.family}' grades every episode against gold and has no judge",
                field=f"suites[{i}].judge",
            )
    for i, setting in enumerate(config.settings):
        if setting.human_model is not None and not setting.ask_human:
            raise ConfigError(
                f"setting '{setting.name}' names a human_model, but offers no one to ask",
                field=f"settings[{i}].human_model",
                hint="add ask_human: true",
            )


def check_protocol(config: SweepConfig, loaded: list[tuple[SuiteRef, Suite]]) -> None:
    """A harness layer in the system prompt and a scenario's follow-up turns are carried by some agent loops only:
    under another protocol they would silently not happen, and the run would be reported as if they had."""
    for ref, suite in loaded:
        overrides = ref.agent_overrides()
        try:  # a suite that picks its own protocol (a Live API-Bench mode) must still fit the sweep's agent
            agent = AgentConfig.model_validate({**config.agent.model_dump(), **overrides})
        except ValidationError as exc:
            raise ConfigError(
                f"suite '{ref.label}' runs under agent {overrides}, which the sweep's agent settings do not allow: "
                f"{exc.errors()[0]['msg']}",
                field="agent",
            ) from exc
        protocol = agent.protocol
        whose = f"suite '{ref.label}' (its protocol '{protocol}')" if overrides else f"agent.protocol '{protocol}'"
        for i, setting in enumerate(config.settings):
            if setting.harness in ("preamble", "few_shot") and protocol not in HARNESS_PROMPT_PROTOCOLS:
                raise ConfigError(
                    f"setting '{setting.name}' adds the {setting.harness} harness layer to the system prompt, which "
                    f"{whose} does not use",
                    field=f"settings[{i}].harness",
                    hint=f"use agent.protocol: {' or '.join(HARNESS_PROMPT_PROTOCOLS)}",
                )
        multi = [s.id for s in suite.scenarios if s.follow_ups] if protocol not in FOLLOW_UP_PROTOCOLS else []
        if multi:
            raise ConfigError(
                f"suite '{ref.label}' has multi-turn scenarios ({len(multi)}, e.g. '{multi[0]}'), whose follow-up "
                f"turns {whose} does not play",
                field="agent.protocol",
                hint=f"use agent.protocol: {' or '.join(FOLLOW_UP_PROTOCOLS)}",
            )


def check_families(config: SweepConfig, loaded: list[tuple[SuiteRef, Suite]]) -> None:
    """What each suite's family refuses in this sweep (``Family.plan_check``: a paper's protocol that the settings
    would break, say): the first problem stops the plan."""
    for i, (ref, suite) in enumerate(loaded):
        check = get_family(suite.family, ref.family_ref).plan_check
        problems = check(config, i, suite) if check is not None else []
        if problems:
            raise problems[0]


def plan_sweep(config: SweepConfig, now: datetime | None = None) -> RunManifest:
    """Expand models × suites × settings × seeds × scenarios into shards of at most ``run.shard_size`` episodes.

    A shard id is the hash of its content (model config, suite identity, setting, agent config, episodes, code
    version), so the same work always gets the same id.
    """
    now = now or datetime.now(UTC)
    found_versions = versions()
    code = found_versions["undertow"]
    suites = []
    shards: list[ShardSpec] = []
    loaded = [(ref, load_ref(ref, document_suite)) for ref in config.suites]  # docs: model builds document
    check_fault_targets(config, loaded)
    check_hints(config, loaded)
    check_protocol(config, loaded)
    check_helpers(config, loaded)
    check_families(config, loaded)
    # a setting's condition (FAIL-TaLMs) leaves out the scenarios it cannot apply to: said, never silent
    applicable: dict[tuple[str, str], list[Scenario]] = {}
    for ref, suite in loaded:
        notes = list(suite.skipped)
        for i, setting in enumerate(config.settings):
            kept, reasons = [], {}
            for scenario in suite.scenarios:
                reason = not_applicable(scenario, setting)
                if reason is None:
                    kept.append(scenario)
                else:
                    reasons.setdefault(reason, []).append(scenario.id)
            if not kept:
                first = next(iter(reasons))
                raise ConfigError(
                    f"setting '{setting.name}' ({setting.condition}) applies to no scenario of suite '{ref.label}': "
                    f"{first}",
                    field=f"settings[{i}].condition",
                )
            notes += [
                f"setting '{setting.name}': {len(ids)} scenario(s) of suite '{ref.label}' left out, {reason} "
                f"(e.g. '{ids[0]}')"
                for reason, ids in reasons.items()
            ]
            applicable[(ref.label, setting.name)] = kept
        suites.append(
            SuiteRecord(
                label=ref.label,
                family=suite.family,
                version=suite.version,
                content_hash=suite.content_hash(),
                n_scenarios=len(suite.scenarios),
                skipped=notes,
            )
        )
    hashes = {s.label: s.content_hash for s in suites}
    # the embedding cache lives in the run store, so every worker of a cluster shares it
    retrieval = config.retrieval
    if retrieval.cache is None:
        store = config.run.store if is_s3(config.run.store) else Path(config.run.store).resolve()
        retrieval = retrieval.model_copy(update={"cache": join_uri(store, ".embeddings")})
    for model in config.models:
        for ref, _suite in loaded:
            for setting in config.settings:
                episodes = [
                    EpisodePlan(
                        episode_id=_digest(model.name, ref.label, hashes[ref.label], setting.name, scenario.id, seed),
                        scenario_id=scenario.id,
                        seed=seed,
                    )
                    for seed in config.seeds
                    for scenario in applicable[(ref.label, setting.name)]
                ]
                for start in range(0, len(episodes), config.run.shard_size):
                    chunk = episodes[start : start + config.run.shard_size]
                    shard_id = _digest(
                        model.model_dump(mode="json"),
                        ref.model_dump(mode="json"),
                        hashes[ref.label],
                        setting.model_dump(mode="json"),
                        config.agent.model_dump(mode="json"),
                        retrieval.model_dump(mode="json", exclude={"cache"}),
                        [e.model_dump() for e in chunk],
                        code,
                    )
                    shards.append(
                        ShardSpec(
                            shard_id=shard_id,
                            model=model,
                            suite=ref,
                            setting=setting,
                            agent=config.agent,
                            sandbox=config.sandbox,
                            retrieval=retrieval,
                            episodes=chunk,
                        )
                    )
    fingerprint = _digest([s.shard_id for s in shards])[:6]
    return RunManifest(
        run_id=f"{config.name}-{now.strftime('%Y%m%d-%H%M%S')}-{fingerprint}",
        created=now.isoformat(timespec="seconds"),
        config=config.model_dump(mode="json"),
        versions=found_versions,
        suites=suites,
        shards=shards,
    )
