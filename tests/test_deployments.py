"""Deployment planning without a server: packing replicas onto GPUs, and the vLLM command line."""

from __future__ import annotations

from pathlib import Path

from cluster.deployments import pack, server_command
from workers.clients import ModelConfig


def model(name: str, tp: int = 1, replicas: int = 1, device: str = "cuda") -> ModelConfig:
    return ModelConfig(
        name=name, kind="vllm", weights=f"org/{name}", tensor_parallel=tp, replicas=replicas, device=device
    )


def names(waves: list[list[ModelConfig]]) -> list[list[str]]:
    return [[m.name for m in wave] for wave in waves]


def test_models_are_packed_onto_free_gpus_in_sweep_order() -> None:
    sweep = [model("7b"), model("14b", tp=2), model("32b", tp=4), model("72b", tp=8), model("3b")]
    assert names(pack(sweep, 8)) == [["7b", "14b", "32b"], ["72b"], ["3b"]]
    assert names(pack(sweep, 4)) == [["7b", "14b"], ["32b"], ["72b"], ["3b"]]  # 72b cannot fit: served alone
    assert names(pack([model("a", replicas=2), model("b", replicas=2)], 4)) == [["a", "b"]]


def test_cpu_models_are_served_one_at_a_time() -> None:
    assert names(pack([model("a", device="cpu"), model("b", device="cpu")], 0)) == [["a"], ["b"]]


def test_the_server_command_carries_the_configured_flags(tmp_path: Path) -> None:
    template = tmp_path / "template.jinja"
    template.write_text("{{ messages }}")
    config = ModelConfig(
        name="qwen",
        kind="vllm",
        weights="Qwen/Qwen2.5-7B-Instruct",
        tensor_parallel=2,
        max_model_len=8192,
        dtype="bfloat16",
        chat_template=str(template),
        tool_call_parser="hermes",
        server_args=["--seed", "0"],
    )
    command = server_command(config, "10.0.0.5", 8000, max_num_seqs=64)
    text = " ".join(command)
    assert command[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    for flag in (
        "--model Qwen/Qwen2.5-7B-Instruct",
        "--tensor-parallel-size 2",
        "--max-model-len 8192",
        "--dtype bfloat16",
        f"--chat-template {template}",
        "--enable-auto-tool-choice",
        "--tool-call-parser hermes",
        "--enable-prefix-caching",
        "--max-num-seqs 64",
        "--host 10.0.0.5",
        "--port 8000",
        "--seed 0",
    ):
        assert flag in text, flag
    cpu = server_command(config.model_copy(update={"device": "cpu", "tool_call_parser": None}), "127.0.0.2", 1, 4)
    assert "--tensor-parallel-size" not in cpu and "--tool-call-parser" not in cpu
