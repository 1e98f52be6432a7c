"""Model entries by kind: each kind is its own class, and a field of another kind is refused naming its kind."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError
from typer.testing import CliRunner

from undertow.cluster.cli import app
from undertow.cluster.config import load_config
from undertow.env_core.errors import ConfigError
from undertow.env_core.model import Strict
from undertow.env_core.scenarios import validation_problems
from undertow.workers.clients import _UNSPLIT_FIELDS, EndpointModel, ModelConfig, PolicyModel, VLLMModel, parse_model

runner = CliRunner()

ENDPOINT = {"name": "gpt", "kind": "openai", "base_url": "http://127.0.0.2:8000/v1"}
SERVED = {"name": "qwen", "kind": "vllm", "weights": "Qwen/Qwen2.5-7B-Instruct", "tool_call_parser": "hermes"}
KINDS = (
    "expected policy (a built-in policy), openai (an OpenAI-compatible endpoint) or vllm (weights undertow serves "
    "with vLLM)"
)


class Recorded(Strict):
    model: ModelConfig


def write_config(tmp_path: Path, *models: object) -> Path:
    path = tmp_path / "sweep.yaml"
    config = {"name": "t", "models": list(models), "suites": ["smoke"], "run": {"store": str(tmp_path / "runs")}}
    path.write_text(yaml.safe_dump(config))
    return path


def validate(tmp_path: Path, *models: object) -> tuple[int, str]:
    """``undertow validate`` on a sweep of these models: the exit code and the output on one line."""
    result = runner.invoke(app, ["validate", str(write_config(tmp_path, *models))])
    return result.exit_code, " ".join(result.output.split())


def problems(data: object) -> list[str]:
    with pytest.raises(ValidationError) as refused:
        parse_model(data)
    return validation_problems(refused.value)


def test_each_kind_loads_as_its_own_class(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, "oracle", {"name": "naive", "latency_s": 0.01}, ENDPOINT, SERVED))
    policy, naive, endpoint, served = config.models
    assert isinstance(policy, PolicyModel) and policy.policy == "oracle" and not policy.served
    assert isinstance(naive, PolicyModel) and naive.latency_s == 0.01
    assert isinstance(endpoint, EndpointModel) and endpoint.base_url == ENDPOINT["base_url"] and endpoint.served
    assert isinstance(served, VLLMModel) and served.served and served.tensor_parallel == 1
    assert served.startup_limit_s == 600 and served.base_url is None  # a replica's address comes at run time
    assert served.at("http://10.0.0.1:8000/v1").base_url == "http://10.0.0.1:8000/v1"
    # each class has its own fields only
    assert "tensor_parallel" not in EndpointModel.model_fields and "base_url" not in VLLMModel.model_fields
    assert "sampling" not in PolicyModel.model_fields and "latency_s" not in EndpointModel.model_fields
    assert set(PolicyModel.model_fields) & set(EndpointModel.model_fields) & set(VLLMModel.model_fields) == {
        "name",
        "kind",
        "concurrency",
        "size_b",
    }
    # a field of type ModelConfig (as ShardSpec.model) takes any kind, and a dump reads back as the same class
    for model in config.models:
        again = Recorded.model_validate_json(Recorded(model=model).model_dump_json())
        assert type(again.model) is type(model) and again.model == model
    code, output = validate(tmp_path, ENDPOINT, SERVED)
    assert code == 0, output
    assert "models: gpt, qwen" in output
    assert "qwen: served by vLLM, 1 replica(s) × 1 GPU(s) on one node, parser hermes, start-up limit 600 s" in output


def test_the_default_kind_is_policy(tmp_path: Path) -> None:
    model = parse_model({"name": "random"})
    assert isinstance(model, PolicyModel) and model.kind == "policy" and model.policy == "random"
    assert isinstance(parse_model({"name": "mine", "policy": "naive"}), PolicyModel)
    # without a kind an entry is a policy, so an endpoint's fields are refused as such
    assert problems({"name": "gpt", "base_url": "http://127.0.0.2:8000/v1"}) == [
        "base_url: only for kind 'openai' models (this model is kind 'policy')"
    ]
    code, output = validate(tmp_path, {"name": "gpt-4o"})
    assert code == 2
    assert output == (
        f"error: {tmp_path / 'sweep.yaml'}:2: models[0]: unknown policy 'gpt-4o'; "
        "built-in policies: oracle, naive, random"
    )


def test_a_vllm_field_on_an_endpoint_names_vllm(tmp_path: Path) -> None:
    code, output = validate(tmp_path, {**ENDPOINT, "tensor_parallel": 2})
    assert code == 2
    assert output == (
        f"error: {tmp_path / 'sweep.yaml'}:2: models[0]: tensor_parallel: only for kind 'vllm' models "
        "(this model is kind 'openai')"
    )
    # several at once: grouped by the kind they belong to
    assert problems({**ENDPOINT, "weights": "org/m", "chat_template": "t.jinja", "policy": "oracle"}) == [
        "weights, chat_template: only for kind 'vllm' models (this model is kind 'openai'); "
        "policy: only for kind 'policy' models (this model is kind 'openai')"
    ]
    # also when the class is built directly
    with pytest.raises(ValidationError, match="tool_call_parser: only for kind 'vllm' models"):
        EndpointModel(name="gpt", base_url="http://127.0.0.2:8000/v1", tool_call_parser="hermes")


def test_an_endpoint_field_on_a_policy_or_vllm_model_names_openai(tmp_path: Path) -> None:
    code, output = validate(tmp_path, {"name": "oracle", "kind": "policy", "base_url": "http://127.0.0.2:8000/v1"})
    assert code == 2
    assert output.endswith("models[0]: base_url: only for kind 'openai' models (this model is kind 'policy')")
    # a vLLM model's address is undertow's to set, per replica
    assert problems({**SERVED, "base_url": "http://127.0.0.2:8000/v1"}) == [
        "base_url: only for kind 'openai' models (this model is kind 'vllm')"
    ]
    # fields of both served kinds, on a policy
    assert problems({"name": "oracle", "sampling": {"temperature": 0.7}, "timeout_s": 10}) == [
        "sampling, timeout_s: only for kind 'openai' or 'vllm' models (this model is kind 'policy')"
    ]
    assert problems({**ENDPOINT, "latency_s": 0.1}) == [
        "latency_s: only for kind 'policy' models (this model is kind 'openai')"
    ]


def test_an_unknown_kind_lists_the_kinds(tmp_path: Path) -> None:
    code, output = validate(tmp_path, {"name": "q", "kind": "sglang", "base_url": "http://127.0.0.2:8000/v1"})
    assert code == 2
    assert output == f"error: {tmp_path / 'sweep.yaml'}:2: models[0]: kind: unknown kind 'sglang'; {KINDS}"
    assert problems({"name": "q", "kind": None}) == [f"kind: unknown kind null; {KINDS}"]
    assert problems(7) == ["Input should be a mapping of model fields (got 7)"]


def test_errors_inside_a_model_keep_the_model_path(tmp_path: Path) -> None:
    # pydantic puts the kind in the path of a union's member ("models.0.vllm.env"); the message does not
    code, output = validate(tmp_path, {**SERVED, "env": {"VLLM_X": [1]}})
    assert code == 2
    assert output.endswith("models[0].env.VLLM_X: Input should be a valid string (got [1])")
    assert problems({**ENDPOINT, "timeout_s": 0}) == ["timeout_s: Input should be greater than 0 (got 0)"]
    assert problems({**ENDPOINT, "tensor_paralel": 2}) == ["tensor_paralel: unknown field (got 2)"]
    assert problems({"name": "m", "kind": "openai"}) == [
        "a model of kind 'openai' needs base_url (e.g. http://127.0.0.2:8000/v1)"
    ]
    assert problems({**SERVED, "tool_call_parser": "herms"}) == [
        "tool_call_parser: unknown parser 'herms'; did you mean 'hermes'?"
    ]


def test_a_manifest_recorded_before_the_split_still_reads() -> None:
    # the one class of before recorded every field of every kind, None or the default where it did not apply
    recorded = dict.fromkeys(_UNSPLIT_FIELDS)
    recorded |= {"api_key_env": "OPENAI_API_KEY", "sampling": {}, "timeout_s": 120.0, "max_retries": 3}
    recorded |= {"concurrency": 8, "latency_s": 0.0, "tensor_parallel": 1, "replicas": 1, "dtype": "auto"}
    recorded |= {"device": "cuda", "server_args": [], "env": {}, "placement_timeout_s": 600.0, "max_restarts": 3}
    policy = parse_model({**recorded, "name": "oracle", "kind": "policy", "policy": "oracle"})
    assert policy == PolicyModel(name="oracle")
    endpoint = parse_model({**recorded, **ENDPOINT})
    assert isinstance(endpoint, EndpointModel) and endpoint.base_url == ENDPOINT["base_url"]
    served = parse_model({**recorded, **SERVED})
    assert isinstance(served, VLLMModel) and served.weights == SERVED["weights"] and served.base_url is None


def test_every_number_of_a_model_has_a_finite_range() -> None:
    # a typo (an extra zero or ten) is an error, never a limit that is silently off
    assert problems(
        {
            **SERVED,
            "concurrency": 10**6,
            "size_b": float("inf"),
            "timeout_s": float("nan"),
            "max_retries": 1000,
            "tensor_parallel": 1000,
            "replicas": 0,
            "max_model_len": 10**9,
            "max_num_seqs": 10**6,
            "startup_timeout_s": float("inf"),
            "placement_timeout_s": 1e6,
            "max_restarts": 10**6,
        }
    ) == [
        "concurrency: Input should be less than or equal to 4096 (got 1000000)",
        "size_b: Input should be a finite number (got Infinity)",
        "timeout_s: Input should be a finite number (got NaN)",
        "max_retries: Input should be less than or equal to 100 (got 1000)",
        "tensor_parallel: Input should be less than or equal to 64 (got 1000)",
        "replicas: Input should be greater than or equal to 1 (got 0)",
        "max_model_len: Input should be less than or equal to 10000000 (got 1000000000)",
        "max_num_seqs: Input should be less than or equal to 65536 (got 1000000)",
        "startup_timeout_s: Input should be a finite number (got Infinity)",
        "placement_timeout_s: Input should be less than or equal to 86400 (got 1000000.0)",
        "max_restarts: Input should be less than or equal to 1000 (got 1000000)",
    ]
    assert problems({"name": "oracle", "latency_s": 1e6}) == [
        "latency_s: Input should be less than or equal to 3600 (got 1000000.0)"
    ]
    # the largest values are still fine
    assert parse_model({**SERVED, "tensor_parallel": 64, "max_model_len": 10_000_000, "timeout_s": 86_400})


def test_sampling_options_are_checked_and_sent_as_given(tmp_path: Path) -> None:
    given = {"temperature": "0.5", "stop": ["\n\n"], "extra_body": {"ignore_eos": True}, "max_tokens": 64}
    model = parse_model({**ENDPOINT, "sampling": given})
    assert isinstance(model, EndpointModel)
    # the well-known options as numbers, the others untouched; nothing is added
    assert model.sampling == {
        "temperature": 0.5,
        "stop": ["\n\n"],
        "extra_body": {"ignore_eos": True},
        "max_tokens": 64,
    }
    assert problems(
        {**ENDPOINT, "sampling": {"temperature": 50, "top_p": 0, "max_tokens": float("nan"), "seed": -1}}
    ) == [
        "sampling.temperature: Input should be less than or equal to 10 (got 50)",
        "sampling.top_p: Input should be greater than 0 (got 0)",
        "sampling.max_tokens: Input should be a finite number (got NaN)",
        "sampling.seed: Input should be greater than or equal to 0 (got -1)",
    ]
    # through the loader: the file, the line of the option, the field
    path = tmp_path / "sweep.yaml"
    path.write_text(
        "name: t\nsuites: [smoke]\nmodels:\n  - name: gpt\n    kind: openai\n    base_url: http://127.0.0.2:8000/v1\n"
        "    sampling:\n      temperature: 0.2\n      max_tokens: 100000000000\n"
    )
    expected = (
        f"{path}:9: models[0].sampling.max_tokens: Input should be less than or equal to 10000000 (got 100000000000)"
    )
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert str(refused.value) == expected
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2 and " ".join(result.output.split()) == f"error: {expected}"
