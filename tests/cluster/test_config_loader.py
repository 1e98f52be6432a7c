"""The sweep config loader: every number has a finite range, every problem names its file and line, relative paths
follow one rule (docs/configuration.md), and no input makes it fail with anything but a ``ConfigError``."""

from __future__ import annotations

import os
import types
import typing
from pathlib import Path
from typing import Any

import annotated_types
import pytest
import yaml
from helpers.paths import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from typer.testing import CliRunner

from undertow.cluster import api
from undertow.cluster.cli import app
from undertow.cluster.config import RunOptions, SweepConfig, TrackingConfig, load_config
from undertow.env_core.errors import ConfigError
from undertow.env_core.families import FolderSuite
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.suites import SuiteError, load_suite
from undertow.retrieval.index import RetrievalConfig
from undertow.workers.agent import AgentConfig
from undertow.workers.clients import EndpointModel, PolicyModel, SamplingRanges, VLLMModel

runner = CliRunner()


def write(folder: Path, text: str, name: str = "sweep.yaml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def refusal(path: Path, *overrides: str) -> str:
    """The message ``load_config`` refuses the file with."""
    with pytest.raises(ConfigError) as refused:
        load_config(path, list(overrides))
    return str(refused.value)


SWEEP = """\
name: t
models: [oracle]
suites: [smoke]
seeds: [0, 1]
agent:
  max_turns: 4
run:
  shard_size: 8
"""


# ---------------------------------------------------------------------------------------------------------------
# Ranges: every number of every config model has a lower and an upper bound


MODELS: list[type[BaseModel]] = [
    SweepConfig,
    AgentConfig,
    PolicyModel,
    EndpointModel,
    VLLMModel,
    SamplingRanges,
    RetrievalConfig,
    RunOptions,
    TrackingConfig,
]


def _numbers(annotation: Any, metadata: list[Any]) -> list[tuple[type, list[Any]]]:
    """The int and float types inside an annotation (``int | None``, ``list[Annotated[int, ...]]``), each with the
    constraints that apply to it."""
    if annotation in (int, float):
        return [(annotation, metadata)]
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        inner = [m for a in args[1:] for m in (a.metadata if isinstance(a, FieldInfo) else [a])]
        return _numbers(args[0], [*metadata, *inner])
    if origin in (typing.Union, types.UnionType):
        return [n for a in args for n in _numbers(a, metadata)]
    if origin is list:
        return _numbers(args[0], [])
    return []


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_number_of_every_config_model_has_both_bounds(model: type[BaseModel]) -> None:
    unbounded = []
    for name, field in model.model_fields.items():
        for kind, constraints in _numbers(field.annotation, list(field.metadata)):
            lower = any(isinstance(c, annotated_types.Ge | annotated_types.Gt) for c in constraints)
            upper = any(isinstance(c, annotated_types.Le | annotated_types.Lt) for c in constraints)
            finite = kind is int or any(getattr(c, "allow_inf_nan", True) is False for c in constraints)
            if not (lower and upper and finite):
                unbounded.append(name)
    assert not unbounded, f"{model.__name__}: fields without a lower and an upper bound (or allowing NaN/inf)"


def test_a_seed_past_32_bits_is_refused_before_anything_is_stored(tmp_path: Path) -> None:
    # a seed this big used to validate, then crash the store with a pyarrow traceback (and every resume after it)
    path = write(tmp_path, SWEEP.replace("seeds: [0, 1]", "seeds: [100000000000000000000000, -1]"))
    assert refusal(path) == (
        f"{path}:4: seeds[0]: Input should be less than 2147483648 (got 100000000000000000000000)\n"
        f"{path}:4: seeds[1]: Input should be greater than or equal to 0 (got -1)"
    )
    assert load_config(path, ["seeds=[0, 2147483647]"]).seeds == [0, 2**31 - 1]


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        # limits that used to be switched off by a big enough number
        ("agent.memory_mb=100000000", "agent.memory_mb: Input should be less than or equal to 65536 (got 100000000)"),
        ("agent.step_timeout_s=1e12", 'agent.step_timeout_s: Input should be less than or equal to 86400 (got "1e12")'),
        ("agent.step_timeout_s=.inf", "agent.step_timeout_s: Input should be a finite number (got Infinity)"),
        ("agent.step_timeout_s=.nan", "agent.step_timeout_s: Input should be a finite number (got NaN)"),
        ("agent.max_turns=100000", "agent.max_turns: Input should be less than or equal to 1000 (got 100000)"),
        ("run.shard_size=10000000", "run.shard_size: Input should be less than or equal to 100000 (got 10000000)"),
        ("run.workers=0", "run.workers: Input should be greater than or equal to 1 (got 0)"),
        (
            "retrieval.batch_size=1000000",
            "retrieval.batch_size: Input should be less than or equal to 65536 (got 1000000)",
        ),
        ("retrieval.query_cache=-1", "retrieval.query_cache: Input should be greater than or equal to 0 (got -1)"),
        (
            "models=[{name: oracle, concurrency: 1000000}]",
            "models[0].concurrency: Input should be less than or equal to 4096 (got 1000000)",
        ),
    ],
)
def test_numbers_out_of_range_name_the_field_and_the_range(tmp_path: Path, override: str, expected: str) -> None:
    path = write(tmp_path, SWEEP)
    assert refusal(path, override) == f"{path} (override '{override}'): {expected}"


def test_the_same_ranges_hold_in_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, SWEEP.replace("max_turns: 4", "max_turns: 4\n  memory_mb: 100000000"))
    assert refusal(path) == f"{path}:7: agent.memory_mb: Input should be less than or equal to 65536 (got 100000000)"


# ---------------------------------------------------------------------------------------------------------------
# Line numbers


def test_each_problem_names_its_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
# a comment, then a blank line

name: t
models:
  - oracle
  - gpt-9
  - {name: m, kind: openai, base_url: "http://127.0.0.2:8000/v1"}
suites: [smoke]
settings: [clean, chaos]
agent:
  protocol: react
  max_turns: 0
retreival: {}
""",
    )
    assert refusal(path).splitlines() == [
        f"{path}:6: models[1]: unknown model 'gpt-9'; expected a built-in policy or a name defined under "
        "model_registry (oracle, naive, random), or a full model entry",
        f"{path}:9: settings[1]: unknown setting 'chaos'; expected a preset ({', '.join(PRESET_SETTINGS)}) or a "
        "mapping with name and faults",
        f"{path}:12: agent.max_turns: Input should be greater than or equal to 1 (got 0)",
        f"{path}:13: retreival: unknown field (got {{}})",
    ]
    # one problem: the error's parts are set too
    path = write(tmp_path, SWEEP.replace("max_turns: 4", "max_turns: many"))
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    error = refused.value
    assert (error.file, error.line, error.field) == (str(path), 6, "agent.max_turns")
    assert (
        str(error) == f"{path}:6: agent.max_turns: Input should be a valid integer, unable to parse string as an "
        'integer (got "many")'
    )


def test_a_field_the_file_lacks_names_the_line_of_its_parent(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
name: t
suites: [smoke]
models:
  - oracle
  -
    kind: openai
    base_url: http://127.0.0.2:8000/v1
""",
    )
    assert refusal(path) == f"{path}:6: models[1].name: Field required"
    path = write(tmp_path, "name: t\nsuites: [smoke]\n")
    assert refusal(path) == f"{path}:1: models: Field required"


def test_fields_from_a_yaml_merge_name_the_line_they_come_from(tmp_path: Path) -> None:
    merged = """\
name: t
suites: [smoke]
model_registry:
  - &base {name: a, kind: openai, base_url: "http://127.0.0.2:8000/v1",
           timeout_s: -1}
  - <<: *base
    name: b
models: [a]
"""
    path = write(tmp_path, merged)
    # entry b inherits the bad timeout from a's line; the model named 'a' has no timeout_s of its own in the file,
    # so its line is that of its name
    assert refusal(path).splitlines() == [
        f"{path}:5: model_registry[0].timeout_s: Input should be greater than 0 (got -1)",
        f"{path}:5: model_registry[1].timeout_s: Input should be greater than 0 (got -1)",
        f"{path}:8: models[0].timeout_s: Input should be greater than 0 (got -1)",
    ]


def test_a_problem_an_override_brought_names_the_override(tmp_path: Path) -> None:
    path = write(tmp_path, SWEEP)
    assert refusal(path, "agent.max_turns=0") == (
        f"{path} (override 'agent.max_turns=0'): agent.max_turns: Input should be greater than or equal to 1 (got 0)"
    )
    # a problem inside what an override set, and one the file has next to it: each names its own place
    text = SWEEP.replace("shard_size: 8", "shard_size: 0")
    assert refusal(write(tmp_path, text), "models=[oracle, {name: x, kind: vllm}]").splitlines() == [
        f"{path} (override 'models=[oracle, {{name: x, kind: vllm}}]'): models[1]: a model of kind 'vllm' needs "
        "weights (a local folder or a hub id)",
        f"{path}:8: run.shard_size: Input should be greater than or equal to 1 (got 0)",
    ]


# ---------------------------------------------------------------------------------------------------------------
# Relative paths: in a config file, relative to its folder; on the command line, to the current directory


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current directory: a folder that is not the config's."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


def test_paths_written_in_a_config_are_relative_to_its_folder(tmp_path: Path, elsewhere: Path) -> None:
    folder = tmp_path / "configs"
    folder.mkdir()
    text = SWEEP.replace(
        "run:\n  shard_size: 8\n",
        "run:\n  store: ../results\n  local_copy: copy\ntracking:\n  mlflow_uri: mlruns\nretrieval:\n  cache: emb\n",
    )
    config = load_config(write(folder, text))
    assert config.run.store == str(tmp_path / "results") and config.run.store_as_written == "../results"
    assert config.run.local_copy == str(folder / "copy")
    assert config.tracking.mlflow_uri == str(folder / "mlruns")
    assert config.retrieval.cache == str(folder / "emb")
    # an override of the file is part of the file: the same rule
    config = load_config(folder / "sweep.yaml", ["run.store=out", "tracking.mlflow_uri=~/ml"])
    assert config.run.store == str(folder / "out") and config.tracking.mlflow_uri == str(Path.home() / "ml")
    # URIs are not paths; absolute paths stay as written
    config = load_config(
        folder / "sweep.yaml",
        [
            "run.store=s3://bucket/runs",
            "tracking.mlflow_uri=http://127.0.0.2:5000",
            "retrieval.cache=s3://bucket/emb",
            f"run.local_copy={tmp_path / 'abs'}",
        ],
    )
    assert (config.run.store, config.tracking.mlflow_uri) == ("s3://bucket/runs", "http://127.0.0.2:5000")
    assert (config.retrieval.cache, config.run.local_copy) == ("s3://bucket/emb", str(tmp_path / "abs"))
    for uri in ("sqlite:///x.db", "file:///x", "databricks"):
        assert load_config(folder / "sweep.yaml", [f"tracking.mlflow_uri={uri}"]).tracking.mlflow_uri == uri


def test_the_default_store_is_runs_in_the_current_directory(tmp_path: Path, elsewhere: Path) -> None:
    config = load_config(write(tmp_path, SWEEP))
    assert config.run.store == "runs" and config.run.local_copy == "runs" and config.run.store_as_written is None
    assert Path(config.run.store).resolve() == elsewhere / "runs"
    # built by code (a manifest read back, the API), nothing is rewritten
    assert RunOptions.model_validate({"store": "rel"}).store == "rel"
    assert TrackingConfig.model_validate({"mlflow_uri": "mlruns"}).mlflow_uri == "mlruns"


def test_a_store_given_as_an_option_is_relative_to_the_current_directory(tmp_path: Path, elsewhere: Path) -> None:
    path = write(tmp_path, SWEEP.replace("shard_size: 8", "shard_size: 8\n  store: written"))
    assert load_config(path).run.store == str(tmp_path / "written")
    # --store (the API's store=) replaces the config's store as typed: the current directory's
    planned = api.plan(path, store="typed")
    assert planned.config.run.store == "typed" and Path(planned.config.run.store).resolve() == elsewhere / "typed"


def test_the_shipped_configs_write_to_runs_under_the_folder_they_are_run_from(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    for path in sorted((REPO / "configs").glob("*.yaml")):
        run = (yaml.safe_load(path.read_text()) or {}).get("run") or {}
        assert "store" not in run and "local_copy" not in run, path.name
    config = load_config(REPO / "configs" / "quickstart.yaml")
    assert config.run.store == "runs" and Path(config.run.store).resolve() == REPO / "runs"


def test_a_missing_suite_folder_names_the_absolute_path_and_the_closest_name(tmp_path: Path, elsewhere: Path) -> None:
    (tmp_path / "smoke").mkdir()
    (tmp_path / "unrelated").mkdir()
    path = write(tmp_path, SWEEP.replace("suites: [smoke]", "suites: [{path: smok}]"))
    assert refusal(path) == f"{path}:3: suites[0].path: folder {tmp_path / 'smok'} not found; did you mean 'smoke'?"
    path = write(tmp_path, SWEEP.replace("suites: [smoke]", "suites:\n  - path: ./zzz/q"))
    assert refusal(path) == f"{path}:4: suites[0].path: folder {tmp_path / 'zzz' / 'q'} not found"
    # a bare name that is no family either: both are said
    path = write(tmp_path, SWEEP.replace("suites: [smoke]", "suites: [unrelatd]"))
    message = refusal(path)
    assert message.startswith(f"{path}:3: suites[0]: 'unrelatd' is neither a suite folder nor a family: ")
    assert message.endswith(f"; folder {tmp_path / 'unrelatd'} not found; did you mean 'unrelated'?")
    # a folder read later (by a worker, from a manifest) is reported the same way
    with pytest.raises(SuiteError) as missing:
        load_suite(tmp_path / "smok")
    assert str(missing.value) == f"{tmp_path / 'smok'}: suite folder not found; did you mean 'smoke'?"
    # without a config (code, a manifest), the folder is not checked when the reference is read
    assert FolderSuite.model_validate({"path": "nowhere"}).path == "nowhere"


def test_a_suite_folder_is_found_from_another_directory(tmp_path: Path, elsewhere: Path) -> None:
    folder = tmp_path / "configs"
    folder.mkdir()
    (tmp_path / "suites" / "mine").mkdir(parents=True)
    config = load_config(write(folder, SWEEP.replace("suites: [smoke]", "suites: [{path: ../suites/mine}]")))
    (suite,) = config.suites
    assert isinstance(suite, FolderSuite) and suite.path == str(tmp_path / "suites" / "mine")


# ---------------------------------------------------------------------------------------------------------------
# Property tests: whatever the file and the overrides hold, the loader raises only ConfigError and the CLI prints
# one line, never a traceback


def _field_names() -> list[str]:
    names: set[str] = set()
    models: list[type[BaseModel]] = [*MODELS, FolderSuite]
    for model in models:
        names.update(model.model_fields)
    return sorted(names)


FIELD_NAMES = _field_names()
# no ':' in generated text: "module:attribute" is a family reference, and importing random module names is not a
# property of the loader worth testing
TEXT = st.text(st.characters(codec="utf-8", exclude_characters=":"), max_size=12)
KEYS = st.one_of(st.sampled_from(FIELD_NAMES), TEXT)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(),
    TEXT,
    st.sampled_from(
        ["oracle", "smoke", "clean", "vllm", "openai", "policy", "runs", "s3://b/p", "http://127.0.0.2:9", "~", ".."]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=20,
)


def _entries(*models: type[BaseModel]) -> st.SearchStrategy[dict[Any, Any]]:
    """Mappings shaped like these models: mostly their own field names, with any values."""
    fields = sorted({name for model in models for name in model.model_fields})
    return st.dictionaries(st.one_of(st.sampled_from(fields), TEXT), VALUES, max_size=5)


MODEL_ENTRIES = st.lists(
    st.one_of(
        st.sampled_from(["oracle", "naive", "a", "b"]),
        _entries(PolicyModel, EndpointModel, VLLMModel),
        st.fixed_dictionaries(
            {"name": st.sampled_from(["a", "b", "oracle"])},
            optional={"kind": st.sampled_from(["policy", "openai", "vllm"]), "sampling": _entries(SamplingRanges)},
        ),
    ),
    max_size=3,
)
# shaped like a config, so that validation reaches every model under SweepConfig
SHAPED = st.fixed_dictionaries(
    {
        "models": st.one_of(MODEL_ENTRIES, VALUES),
        "suites": st.one_of(
            st.lists(st.one_of(st.just("smoke"), TEXT, _entries(FolderSuite)), max_size=2),
            VALUES,
        ),
    },
    optional={
        "model_registry": MODEL_ENTRIES,
        "settings": st.lists(st.one_of(st.sampled_from(["clean", "first_tried"]), VALUES), max_size=2),
        "seeds": st.lists(st.one_of(st.integers(), VALUES), max_size=3),
        "agent": _entries(AgentConfig),
        "retrieval": _entries(RetrievalConfig),
        "run": _entries(RunOptions),
        "tracking": _entries(TrackingConfig),
        "name": VALUES,
    },
)
DOCUMENTS = st.one_of(st.dictionaries(KEYS, VALUES, max_size=6), SHAPED, VALUES)
SEGMENTS = st.one_of(st.sampled_from(FIELD_NAMES), st.integers(min_value=0, max_value=3).map(str), TEXT)
OVERRIDES = st.one_of(
    st.builds(
        lambda keys, value: ".".join(keys) + "=" + value,
        st.lists(SEGMENTS, min_size=1, max_size=3),
        st.one_of(VALUES.map(lambda v: yaml.safe_dump(v, default_flow_style=True).strip()), TEXT),
    ),
    TEXT,
)
PROPERTIES = settings(
    max_examples=int(os.environ.get("UNDERTOW_PROPERTY_EXAMPLES", "150")),
    deadline=None,
    database=None,  # no .hypothesis folder in the shared working tree
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)


def _dump(document: Any) -> str:
    return yaml.safe_dump(document, allow_unicode=True)


@PROPERTIES
@given(document=DOCUMENTS, overrides=st.lists(OVERRIDES, max_size=3))
def test_any_document_and_overrides_fail_only_with_a_config_error(
    tmp_path_factory: pytest.TempPathFactory, document: Any, overrides: list[str]
) -> None:
    path = write(tmp_path_factory.mktemp("any"), _dump(document))
    try:
        load_config(path, overrides)
    except ConfigError as exc:
        for line in str(exc).splitlines():
            assert line.startswith(("override '", str(path))), line
    # any other exception fails the test


@PROPERTIES
@given(text=st.text(st.characters(codec="utf-8"), max_size=200))
def test_any_text_fails_only_with_a_config_error(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    path = write(tmp_path_factory.mktemp("text"), text)
    try:
        load_config(path)
    except ConfigError as exc:
        assert str(exc).startswith(str(path))


@settings(PROPERTIES, max_examples=max(1, PROPERTIES.max_examples // 3))
@given(document=DOCUMENTS, overrides=st.lists(OVERRIDES, max_size=2))
def test_validate_never_prints_a_traceback(
    tmp_path_factory: pytest.TempPathFactory, document: Any, overrides: list[str]
) -> None:
    path = write(tmp_path_factory.mktemp("cli"), _dump(document))
    result = runner.invoke(app, ["validate", str(path), "--", *overrides])
    assert result.exit_code in (0, 2), f"exit {result.exit_code}: {result.output}\n{result.exception!r}"
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        assert result.output.startswith("error: ")
