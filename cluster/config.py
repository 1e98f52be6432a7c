"""Sweep configuration: YAML files validated by pydantic, with dotted command-line overrides.

Every error names the file, the line, the field and what was expected, one line per problem, e.g.
``configs/x.yaml:7: agent.max_turns: Input should be greater than or equal to 1 (got 0)``; a problem that an
override brought in names the override instead of a line: ``configs/x.yaml (override 'agent.max_turns=0'): …``.

Relative paths (docs/configuration.md): a path written in a config file, or in a dotted override of it, is
relative to the config file's folder; a path given as a command-line option (``--store``) to the current directory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import (
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from undertow.env_core.errors import ConfigError
from undertow.env_core.faults import PRESET_SETTINGS, Setting
from undertow.env_core.model import Strict
from undertow.env_core.sandbox import SandboxConfig
from undertow.env_core.scenarios import validation_problems
from undertow.env_core.suites import SuiteRef
from undertow.retrieval.index import RetrievalConfig
from undertow.storage import is_s3
from undertow.workers.agent import AgentConfig
from undertow.workers.clients import POLICIES, ModelConfig, VLLMModel

# Upper bounds: generous, but finite, so that a typo (an extra zero or ten) is an error instead of a limit that is
# silently off or a number the store cannot write.
MAX_SEED = 2**31  # the store keeps seeds as int64; 32 bits are plenty, and what every RNG takes
MAX_WORKERS = 10_000
MAX_SHARD_SIZE = 100_000


def config_relative(value: str, base: str | Path) -> str:
    """``value`` made absolute against ``base`` (the config file's folder) when it is a relative path."""
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else (Path(base) / path).resolve())


def _base(info: ValidationInfo) -> str | None:
    """The folder of the config file being read (None when the data comes from elsewhere: a manifest, code)."""
    base = (info.context or {}).get("base")
    return str(base) if base else None


class RunOptions(Strict):
    store: str = Field(
        default="runs",
        min_length=1,
        description="where runs go: a folder (relative to the config file; default 'runs' in the current "
        "directory), or s3://bucket/prefix",
    )
    local_copy: str = Field(
        default="runs",
        min_length=1,
        description="s3 stores: folder of the local copy (kept through an S3 outage; cache for reads), relative to "
        "the config file (default 'runs' in the current directory)",
    )
    s3_endpoint_url: str | None = Field(
        default=None, description="s3 stores: endpoint of a self-hosted server (default: AWS_ENDPOINT_URL_S3, AWS)"
    )
    shard_size: int = Field(default=16, ge=1, le=MAX_SHARD_SIZE, description="episodes per shard")
    workers: int | None = Field(
        default=None, ge=1, le=MAX_WORKERS, description="worker actors (default: CPUs Ray reports)"
    )
    ray_address: str | None = Field(default=None, description="existing Ray cluster; default starts a local one")
    _store_as_written: str | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _relative_to_the_config(
        cls, data: Any, handler: ModelWrapValidatorHandler[RunOptions], info: ValidationInfo
    ) -> RunOptions:
        if not isinstance(data, dict):  # an instance already made (by code, or a copy) keeps what it has
            return handler(data)
        written = data.get("store")
        base = _base(info)
        if base:
            data = dict(data)
            for key in ("store", "local_copy"):
                value = data.get(key)
                if isinstance(value, str) and value and not is_s3(value):
                    data[key] = config_relative(value, base)
        options = handler(data)
        options._store_as_written = written if isinstance(written, str) else None
        return options

    @property
    def store_as_written(self) -> str | None:
        """``store`` as the config file wrote it (before it was made absolute), None when it was not written:
        whether the user gave an absolute path (a submitted job needs one) is only known from this."""
        return self._store_as_written


def is_folder_uri(uri: str) -> bool:
    """Whether an MLflow tracking URI is a plain folder (and not a server, a database or another URI)."""
    return "://" not in uri and not uri.startswith(("sqlite:", "databricks", "file:"))


class TrackingConfig(Strict):
    mlflow_uri: str | None = Field(
        default=None,
        description="MLflow: a tracking server (http://host:5000), any MLflow URI, or a folder (a local store "
        "in it: sqlite database and artifacts; relative to the config file); default $MLFLOW_TRACKING_URI, else no "
        "tracking",
    )
    experiment: str | None = Field(default=None, description="MLflow experiment (default: the sweep's name)")

    @field_validator("mlflow_uri")
    @classmethod
    def _folder_relative_to_the_config(cls, value: str | None, info: ValidationInfo) -> str | None:
        base = _base(info)
        if base and value and is_folder_uri(value):
            return config_relative(value, base)
        return value

    def resolved(self) -> tuple[str, str | None] | None:
        """(tracking URI, artifact location for a new experiment), or None when tracking is off."""
        uri = self.mlflow_uri or os.environ.get("MLFLOW_TRACKING_URI")
        if not uri:
            return None
        if not is_folder_uri(uri):
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
    seeds: list[Annotated[int, Field(ge=0, lt=MAX_SEED)]] = Field(default_factory=lambda: [0], min_length=1)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    run: RunOptions = Field(default_factory=RunOptions)
    tracking: TrackingConfig = Field(default_factory=TrackingConfig)

    @model_validator(mode="before")
    @classmethod
    def _expand_names(cls, data: Any) -> Any:
        """Let users write names: a model name, a setting preset (suites resolve their own names). A name that is
        neither is left for the field's own check, so that every other field is still checked."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        entries = data.get("model_registry")
        registry = {
            m["name"]: m
            for m in (entries if isinstance(entries, list) else [])
            if isinstance(m, dict) and isinstance(m.get("name"), str)
        }
        models = data.get("models")
        if isinstance(models, list):
            data["models"] = [
                (registry.get(m) or ({"name": m, "kind": "policy"} if m in POLICIES else m))
                if isinstance(m, str)
                else m
                for m in models
            ]
        settings = data.get("settings")
        if isinstance(settings, list):
            data["settings"] = [
                PRESET_SETTINGS[s].model_dump() if isinstance(s, str) and s in PRESET_SETTINGS else s for s in settings
            ]
        return data

    @field_validator("models", mode="before")
    @classmethod
    def _known_model_names(cls, models: Any, info: ValidationInfo) -> Any:
        unknown = [(i, m) for i, m in enumerate(models) if isinstance(m, str)] if isinstance(models, list) else []
        if unknown:
            known = ", ".join([*POLICIES, *[m.name for m in info.data.get("model_registry") or []]])
            raise located_all(
                [
                    (
                        (i,),
                        f"unknown model '{name}'; expected a built-in policy or a name defined under model_registry "
                        f"({known}), or a full model entry",
                        name,
                    )
                    for i, name in unknown
                ]
            )
        return models

    @field_validator("settings", mode="before")
    @classmethod
    def _known_setting_names(cls, settings: Any) -> Any:
        unknown = [(i, s) for i, s in enumerate(settings) if isinstance(s, str)] if isinstance(settings, list) else []
        if unknown:
            presets = ", ".join(PRESET_SETTINGS)
            raise located_all(
                [
                    (
                        (i,),
                        f"unknown setting '{name}'; expected a preset ({presets}) or a mapping with name and faults",
                        name,
                    )
                    for i, name in unknown
                ]
            )
        return settings

    @model_validator(mode="before")
    @classmethod
    def _retrieval_cache_relative_to_the_config(cls, data: Any, info: ValidationInfo) -> Any:
        # RetrievalConfig is also built from command-line options (retrieval evaluation); only a config file's
        # cache folder is relative to the config
        base = _base(info)
        if not base or not isinstance(data, dict) or not isinstance(data.get("retrieval"), dict):
            return data
        cache = data["retrieval"].get("cache")
        if isinstance(cache, str) and cache and not is_s3(cache):
            data = {**data, "retrieval": {**data["retrieval"], "cache": config_relative(cache, base)}}
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
                raise located(
                    ("models", i, "tool_call_parser"),
                    f"model '{model.name}' is served by vLLM with agent.protocol function_calling, so it needs "
                    "vLLM's parser for its call format: hermes (Qwen2.5, Hermes), llama3_json (Llama 3.1/3.2, "
                    "with its tool chat template), mistral (Mistral); see the README's parser table — or use a "
                    "text protocol (react, direct, codeact)",
                    None,
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


def located(loc: tuple[str | int, ...], message: str, value: Any) -> ValidationError:
    """A validation error at ``loc`` (a field path, as pydantic's), raised from a validator of a model above it,
    so that the message names the field and the loader finds its line."""
    return located_all([(loc, message, value)])


def located_all(problems: list[tuple[tuple[str | int, ...], str, Any]]) -> ValidationError:
    """Several errors at once, each ``(loc, message, value)``; raised from a field's validator, ``loc`` is inside
    the field."""
    errors = [
        InitErrorDetails(type=PydanticCustomError("value_error", message), loc=loc, input=value)
        for loc, message, value in problems
    ]
    return ValidationError.from_exception_data("SweepConfig", errors)


def _unique(items: list[Any], what: str) -> list[Any]:
    names = [item.name for item in items]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"{what} names must be unique; repeated: {', '.join(dupes)}")
    return items


def one_line(text: str) -> str:
    """``text`` with every character that is not printable (a newline, a tab, a line separator) escaped: what a user
    typed or wrote stays one line of a message."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def apply_override(data: dict[str, Any], override: str) -> None:
    """Apply ``a.b.c=value`` (value parsed as YAML) to a nested dict; numeric segments index lists."""
    try:
        _apply(data, override)
    except ConfigError as exc:
        raise ConfigError(one_line(str(exc))) from exc


def _apply(data: dict[str, Any], override: str) -> None:
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


Loc = tuple[str | int, ...]
_MERGE = "tag:yaml.org,2002:merge"


class _Lines:
    """The line of every field of a YAML document: of its key (in a mapping) or of the item (in a list)."""

    def __init__(self, root: yaml.Node | None) -> None:
        self.lines: dict[tuple[str, ...], int] = {}
        if root is not None:
            self.lines[()] = root.start_mark.line + 1
            self._walk(root, (), set())

    def _walk(self, node: yaml.Node, path: tuple[str, ...], open_nodes: set[int]) -> None:
        if id(node) in open_nodes:  # an alias of a node that contains it: the data is cyclic, stop here
            return
        open_nodes = open_nodes | {id(node)}
        if isinstance(node, yaml.MappingNode):
            merged: list[yaml.Node] = []
            for key, value in node.value:
                if key.tag == _MERGE:  # `<<: *anchor`: its fields are this mapping's, unless written here too
                    merged.extend(value.value if isinstance(value, yaml.SequenceNode) else [value])
                elif isinstance(key, yaml.ScalarNode):
                    self.lines[(*path, key.value)] = key.start_mark.line + 1
                    self._walk(value, (*path, key.value), open_nodes)
            for source in merged:
                if isinstance(source, yaml.MappingNode):
                    for key, value in source.value:
                        if isinstance(key, yaml.ScalarNode) and (*path, key.value) not in self.lines:
                            self.lines[(*path, key.value)] = key.start_mark.line + 1
                            self._walk(value, (*path, key.value), open_nodes)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self.lines[(*path, str(index))] = item.start_mark.line + 1
                self._walk(item, (*path, str(index)), open_nodes)

    def line(self, loc: Loc) -> int | None:
        """The line of the field at ``loc``, else of its nearest parent that the file has."""
        path = tuple(str(part) for part in loc)
        for end in range(len(path), -1, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return None


def _override_of(loc: Loc, overrides: list[str]) -> str | None:
    """The (last) override that set the field at ``loc``, or a field inside it or around it."""
    path = tuple(str(part) for part in loc)
    for override in reversed(overrides):
        keys = tuple(override.partition("=")[0].strip().split("."))
        if path[: len(keys)] == keys or (path and keys[: len(path)] == path):
            return override
    return None


def _field(loc: Loc) -> str:
    """``models[2].kind``: a location as the messages write it (the same as ``validation_problems``)."""
    where = ""
    for part in loc:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    return where


def _config_errors(exc: ValidationError, path: Path, lines: _Lines, overrides: list[str]) -> ConfigError:
    """One ``FILE:LINE: field: message`` per problem; a problem an override brought in names the override."""
    problems: list[tuple[str, int | None, str, str]] = []  # place, line, field, message
    for error, problem in zip(exc.errors(), validation_problems(exc), strict=True):
        loc = tuple(error["loc"])
        field = _field(loc)
        message = problem.removeprefix(f"{field}: ") if field else problem
        field, message = one_line(field), one_line(message)
        override = _override_of(loc, overrides)
        if override is not None:
            problems.append((f"{path} (override '{one_line(override)}')", None, field, message))
        else:
            problems.append((str(path), lines.line(loc), field, message))
    if len(problems) == 1:
        place, line, field, message = problems[0]
        return ConfigError(message, file=place, line=line, field=field or None)
    return ConfigError("\n".join(str(ConfigError(m, file=p, line=n, field=f or None)) for p, n, f, m in problems))


def _yaml_error(exc: yaml.YAMLError, path: Path) -> ConfigError:
    """``FILE:LINE: not valid YAML: problem (column N; context)`` on one line."""
    mark = getattr(exc, "problem_mark", None)
    if not isinstance(exc, yaml.MarkedYAMLError) or mark is None:
        return ConfigError(f"not valid YAML: {one_line(' '.join(str(exc).split()))}", file=str(path))
    context = f"; {exc.context}" if exc.context else ""
    if exc.context and exc.context_mark is not None and exc.context_mark.line != mark.line:
        context += f" at line {exc.context_mark.line + 1}"
    message = f"not valid YAML: {exc.problem} (column {mark.column + 1}{one_line(context)})"
    return ConfigError(one_line(message), file=str(path), line=mark.line + 1)


def load_config(path: str | Path, overrides: list[str] | None = None) -> SweepConfig:
    """Read, override and validate a sweep config. Relative paths written in it (or in an override) are resolved
    against the config's folder. Problems are reported as ``FILE:LINE: field: message``, one line each."""
    path = Path(path)
    overrides = list(overrides or [])
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the config: {exc}") from exc
    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text, Loader=yaml.SafeLoader)  # the same document, with the line of every node
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, path) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of fields at the top level, got {type(data).__name__}")
    for override in overrides:
        apply_override(data, override)
    try:
        config = SweepConfig.model_validate(data, context={"base": str(path.resolve().parent)})
    except ValidationError as exc:
        raise _config_errors(exc, path, _Lines(root), overrides) from exc
    return config
