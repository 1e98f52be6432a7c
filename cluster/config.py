"""Sweep configuration: YAML files validated by pydantic, with dotted command-line overrides.

Every error names the file, the field and what was expected, e.g.
``configs/x.yaml: agent.max_turns: Input should be greater than or equal to 1 (got 0)``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from env_core.faults import PRESET_SETTINGS, Setting
from env_core.model import Strict
from env_core.scenarios import validation_problems
from env_core.suites import SuiteRef
from retrieval.index import RetrievalConfig
from workers.agent import AgentConfig
from workers.clients import POLICIES, ModelConfig, VLLMModel


class ConfigError(ValueError):
    """A configuration problem, already phrased for the user."""


class RunOptions(Strict):
    store: str = Field(default="runs", description="where runs go: a folder, or s3://bucket/prefix")
    local_copy: str = Field(
        default="runs", description="s3 stores: folder of the local copy (kept through an S3 outage; cache for reads)"
    )
    s3_endpoint_url: str | None = Field(
        default=None, description="s3 stores: endpoint of a self-hosted server (default: AWS_ENDPOINT_URL_S3, AWS)"
    )
    shard_size: int = Field(default=16, ge=1, description="episodes per shard")
    workers: int | None = Field(default=None, ge=1, description="worker actors (default: CPUs Ray reports)")
    ray_address: str | None = Field(default=None, description="existing Ray cluster; default starts a local one")


class TrackingConfig(Strict):
    mlflow_uri: str | None = Field(
        default=None,
        description="MLflow: a tracking server (http://host:5000), any MLflow URI, or a folder (a local store "
        "in it: sqlite database and artifacts); default $MLFLOW_TRACKING_URI, else no tracking",
    )
    experiment: str | None = Field(default=None, description="MLflow experiment (default: the sweep's name)")

    def resolved(self) -> tuple[str, str | None] | None:
        """(tracking URI, artifact location for a new experiment), or None when tracking is off."""
        uri = self.mlflow_uri or os.environ.get("MLFLOW_TRACKING_URI")
        if not uri:
            return None
        if "://" in uri or uri.startswith(("sqlite:", "databricks", "file:")):
            return uri, None
        # A plain folder. MLflow 3 refuses its old file store ('mlruns/') by default; a sqlite database in the
        # folder is what it recommends, with the artifacts beside it.
        folder = Path(uri).expanduser().resolve()
        folder.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{folder / 'mlflow.db'}", (folder / "artifacts").as_uri()


class SweepConfig(Strict):
    """models × suites × settings × seeds, and how to run them."""

    name: str = Field(default="sweep", pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str = ""
    model_registry: list[ModelConfig] = Field(
        default_factory=list, description="models defined once and referenced by name under 'models'"
    )
    models: list[ModelConfig] = Field(min_length=1)
    suites: list[SuiteRef] = Field(min_length=1)
    settings: list[Setting] = Field(default_factory=lambda: [PRESET_SETTINGS["clean"]], min_length=1)
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    run: RunOptions = Field(default_factory=RunOptions)
    tracking: TrackingConfig = Field(default_factory=TrackingConfig)

    @model_validator(mode="before")
    @classmethod
    def _expand_names(cls, data: Any) -> Any:
        """Let users write names: a model name, a setting preset (suites resolve their own names)."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        registry = {m.get("name"): m for m in data.get("model_registry") or [] if isinstance(m, dict)}
        models = data.get("models")
        if isinstance(models, list):
            expanded = []
            for i, entry in enumerate(models):
                if isinstance(entry, str):
                    if entry in registry:
                        entry = registry[entry]
                    elif entry in POLICIES:
                        entry = {"name": entry, "kind": "policy"}
                    else:
                        known = ", ".join([*POLICIES, *[str(n) for n in registry]])
                        raise ValueError(
                            f"models[{i}]: unknown model '{entry}'; expected a built-in policy or a name defined"
                            f" under model_registry ({known}), or a full model entry"
                        )
                expanded.append(entry)
            data["models"] = expanded
        settings = data.get("settings")
        if isinstance(settings, list):
            expanded = []
            for i, entry in enumerate(settings):
                if isinstance(entry, str):
                    if entry not in PRESET_SETTINGS:
                        raise ValueError(
                            f"settings[{i}]: unknown setting '{entry}'; expected a preset"
                            f" ({', '.join(PRESET_SETTINGS)}) or a mapping with name and faults"
                        )
                    entry = PRESET_SETTINGS[entry].model_dump()
                expanded.append(entry)
            data["settings"] = expanded
        return data

    @field_validator("models")
    @classmethod
    def _unique_models(cls, models: list[ModelConfig]) -> list[ModelConfig]:
        return _unique(models, "model")

    @model_validator(mode="after")
    def _served_models_read_calls(self) -> SweepConfig:
        """Native function calling through vLLM needs the server's tool-call parser (without it every request is
        refused with HTTP 400); a wrong default would turn calls into final answers, so there is none."""
        if self.agent.protocol != "function_calling":
            return self
        for i, model in enumerate(self.models):
            if isinstance(model, VLLMModel) and not model.tool_call_parser:
                raise ValueError(
                    f"models[{i}].tool_call_parser: model '{model.name}' is served by vLLM with agent.protocol "
                    "function_calling, so it needs vLLM's parser for its call format: hermes (Qwen2.5, Hermes), "
                    "llama3_json (Llama 3.1/3.2, with its tool chat template), mistral (Mistral); see the README's "
                    "parser table — or use a text protocol (react, direct, codeact)"
                )
        return self

    @field_validator("settings")
    @classmethod
    def _unique_settings(cls, settings: list[Setting]) -> list[Setting]:
        return _unique(settings, "setting")

    @field_validator("suites")
    @classmethod
    def _unique_suites(cls, suites: list[SuiteRef]) -> list[SuiteRef]:
        labels = [s.label for s in suites]
        dupes = sorted({x for x in labels if labels.count(x) > 1})
        if dupes:
            raise ValueError(f"suite names must be unique; repeated: {', '.join(dupes)}")
        return suites

    @field_validator("seeds")
    @classmethod
    def _unique_seeds(cls, seeds: list[int]) -> list[int]:
        if len(set(seeds)) != len(seeds):
            raise ValueError("seeds must be unique")
        return seeds


def _unique(items: list[Any], what: str) -> list[Any]:
    names = [item.name for item in items]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"{what} names must be unique; repeated: {', '.join(dupes)}")
    return items


def apply_override(data: dict[str, Any], override: str) -> None:
    """Apply ``a.b.c=value`` (value parsed as YAML) to a nested dict; numeric segments index lists."""
    if "=" not in override:
        raise ConfigError(f"override '{override}': expected KEY=VALUE, e.g. agent.max_turns=8")
    key, _, raw = override.partition("=")
    parts = key.strip().split(".")
    if not all(parts):
        raise ConfigError(f"override '{override}': empty key segment")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        raise ConfigError(f"override '{override}': value is not valid YAML ({exc})") from exc
    node: Any = data
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        where = ".".join(parts[: i + 1])
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise ConfigError(f"override '{override}': {where}: no list item {part} (the list has {len(node)})")
            if last:
                node[int(part)] = value
            else:
                node = node[int(part)]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, {})
        else:
            raise ConfigError(f"override '{override}': {where}: cannot set a field inside a {type(node).__name__}")


def load_config(path: str | Path, overrides: list[str] | None = None) -> SweepConfig:
    """Read, override and validate a sweep config. Relative suite paths are resolved against the config's folder."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of fields at the top level, got {type(data).__name__}")
    for override in overrides or []:
        apply_override(data, override)
    try:
        # relative weights and chat templates are resolved against the config's folder, as suites are
        config = SweepConfig.model_validate(data, context={"base": str(path.resolve().parent)})
    except ValidationError as exc:
        problems = validation_problems(exc)
        note = "\n(with overrides: " + " ".join(overrides) + ")" if overrides else ""
        raise ConfigError("\n".join(f"{path}: {p}" for p in problems) + note) from exc
    return config
