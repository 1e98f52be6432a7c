"""Deployment planning without a server: packing replicas onto the GPUs of each node, the refusals, the vLLM
command line and environment, and how a sweep config names its vLLM models."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from helpers.paths import CONFIGS

from undertow.cluster.config import ConfigError, load_config
from undertow.cluster.deployments import Node, PlacementError, end_group, forwarded_env, plan_waves, server_command
from undertow.cluster.server_guard import group_members
from undertow.workers.clients import VLLMModel, parse_model


def model(name: str, tp: int = 1, replicas: int = 1, device: str = "cuda", **extra: object) -> VLLMModel:
    return VLLMModel(
        name=name,
        weights=f"org/{name}",
        tensor_parallel=tp,
        replicas=replicas,
        device=device,
        tool_call_parser="hermes",
        **extra,
    )


def nodes(*gpus: int) -> list[Node]:
    return [Node(f"node{i}", f"10.0.0.{i}", count) for i, count in enumerate(gpus, start=1)]


def layout(waves: list) -> list[list[tuple[str, list[str | None]]]]:
    return [[(p.model.name, p.nodes) for p in wave] for wave in waves]


def test_replicas_are_packed_per_node_not_against_the_cluster_total() -> None:
    # 8 GPUs in all, but 4 per node: two 3-GPU models take one node each and leave 1 + 1 free, so the 2-GPU model
    # (which the cluster total of 2 free would have admitted, and Ray could never have placed) opens a new wave
    waves = plan_waves([model("a", tp=3), model("b", tp=3), model("c", tp=2)], nodes(4, 4))
    assert layout(waves) == [[("a", ["node1"]), ("b", ["node2"])], [("c", ["node1"])]]
    sweep = [model("7b"), model("14b", tp=2), model("32b", tp=4), model("3b")]
    assert layout(plan_waves(sweep, nodes(4, 4))) == [
        [("7b", ["node1"]), ("14b", ["node1"]), ("32b", ["node2"]), ("3b", ["node1"])]
    ]
    # replicas of one model spread over nodes; larger nodes are filled first
    assert layout(plan_waves([model("r", tp=2, replicas=3)], nodes(2, 4))) == [[("r", ["node2", "node2", "node1"])]]


def test_models_that_no_node_can_hold_are_refused_with_the_numbers() -> None:
    with pytest.raises(PlacementError) as refused:
        plan_waves([model("7b"), model("70b", tp=8)], nodes(4, 4))
    assert str(refused.value) == (
        "model '70b': tensor_parallel 8 needs 8 GPUs on one node, and the largest node has 4 (GPUs per node: "
        "10.0.0.1: 4, 10.0.0.2: 4); lower tensor_parallel, or add a node with 8 GPUs"
    )
    with pytest.raises(PlacementError, match=r"× 3 replicas: the cluster holds at most 2 such replicas at once"):
        plan_waves([model("32b", tp=4, replicas=3)], nodes(4, 4))
    with pytest.raises(PlacementError, match=r"no node of the cluster has one .*serve it with device: cpu"):
        plan_waves([model("7b")], nodes(0))


def test_cpu_models_are_served_one_at_a_time() -> None:
    waves = plan_waves([model("a", device="cpu"), model("b", device="cpu", replicas=2)], nodes(0))
    assert layout(waves) == [[("a", [None])], [("b", [None, None])]]


def test_the_server_command_carries_the_configured_flags(tmp_path: Path) -> None:
    template = tmp_path / "template.jinja"
    template.write_text("{{ messages }}")
    config = model(
        "qwen",
        tp=2,
        max_model_len=8192,
        dtype="bfloat16",
        chat_template=str(template),
        server_args=["--seed", "0"],
    )
    command = server_command(config, "10.0.0.5", 8000, max_num_seqs=64)
    text = " ".join(command)
    assert command[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    for flag in (
        "--model org/qwen",
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


def test_the_server_environment_forwards_hub_and_vllm_settings_and_the_start_up_limit() -> None:
    driver = {
        "HF_HOME": "/shared/hf",
        "HF_HUB_OFFLINE": "1",
        "HF_TOKEN": "hf_secret",
        "VLLM_CACHE_ROOT": "/shared/vllm-cache",
        "VLLM_HOST_IP": "10.9.9.9",  # the driver's own address: wrong on any other node
        "AWS_SECRET_ACCESS_KEY": "no",
        "PATH": "/usr/bin",
    }
    env = forwarded_env(model("70b", tp=4, size_b=70, env={"VLLM_LOGGING_LEVEL": "DEBUG"}), driver)
    assert env == {
        "HF_HOME": "/shared/hf",
        "HF_HUB_OFFLINE": "1",
        "HF_TOKEN": "hf_secret",
        "VLLM_CACHE_ROOT": "/shared/vllm-cache",
        "VLLM_LOGGING_LEVEL": "DEBUG",
        # the default start-up limit grows with the model: 600 + 10 × 70 + 120 × 3
        "VLLM_ENGINE_READY_TIMEOUT_S": "1660",
    }
    assert forwarded_env(model("7b", startup_timeout_s=900), {})["VLLM_ENGINE_READY_TIMEOUT_S"] == "900"
    assert model("7b").startup_limit_s == 600


def test_ending_a_process_group_waits_until_every_member_is_gone() -> None:
    # a leader that ignores SIGTERM, and a child of it that survives its parent: both must be gone on return
    script = (
        "import signal, subprocess, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "subprocess.Popen(['sleep', '600']); time.sleep(600)"
    )
    leader = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    deadline = time.monotonic() + 10
    while len(group_members(leader.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(group_members(leader.pid)) == 2
    started = time.monotonic()
    end_group(leader.pid, grace_s=1.0)
    assert group_members(leader.pid) == [] and time.monotonic() - started < 10
    leader.wait(timeout=5)
    assert leader.returncode == -signal.SIGKILL  # SIGTERM was ignored: it took the SIGKILL after the grace period


def test_the_guard_ends_the_server_group_when_its_parent_dies() -> None:
    # parent -> guard (new group) -> a "server" that forks a child of its own; SIGKILL the parent only
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-m',"
            " 'undertow.cluster.server_guard', '--', 'bash', '-c', 'sleep 600 & sleep 600'], start_new_session=True);"
            " print(p.pid, flush=True);"
            " time.sleep(600)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    guard = int(parent.stdout.readline())
    deadline = time.monotonic() + 10
    while len(group_members(guard)) < 4 and time.monotonic() < deadline:  # guard, bash, two sleeps
        time.sleep(0.05)
    assert len(group_members(guard)) == 4
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 15
    while group_members(guard) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert group_members(guard) == []


def test_a_guarded_server_reports_its_own_exit_status() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "undertow.cluster.server_guard", "--", "bash", "-c", "exit 3"], timeout=30
    )
    assert done.returncode == 3


def sweep(tmp_path: Path, entry: dict, protocol: str = "function_calling") -> Path:
    path = tmp_path / "sweep.yaml"
    config = {"models": [entry], "suites": ["smoke"], "agent": {"protocol": protocol}}
    path.write_text(yaml.safe_dump(config))
    return path


def test_relative_weights_and_templates_are_read_next_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "models" / "tiny").mkdir(parents=True)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "tools.jinja").write_text("{{ messages }}")
    entry = {
        "name": "m",
        "kind": "vllm",
        "weights": "models/tiny",
        "chat_template": "templates/tools.jinja",
        "tool_call_parser": "llama3_json",
    }
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    previous = Path.cwd()
    os.chdir(elsewhere)  # the config's folder decides, not the working folder
    try:
        config = load_config(sweep(tmp_path, entry))
    finally:
        os.chdir(previous)
    (served,) = config.models
    assert served.weights == str(tmp_path / "models" / "tiny")
    assert served.chat_template == str(tmp_path / "templates" / "tools.jinja")
    hub = load_config(sweep(tmp_path, {**entry, "weights": "Qwen/Qwen2.5-7B-Instruct", "chat_template": None}))
    assert hub.models[0].weights == "Qwen/Qwen2.5-7B-Instruct"  # a hub id stays one
    # a manifest read back elsewhere (a report on a laptop of a cluster's run) keeps its paths and reads fine
    recorded = parse_model({**entry, "weights": "/cluster/models/tiny", "chat_template": None})
    assert isinstance(recorded, VLLMModel) and recorded.weights == "/cluster/models/tiny"


def test_bad_vllm_entries_name_the_field(tmp_path: Path) -> None:
    base = {"name": "llama", "kind": "vllm", "weights": "meta-llama/Llama-3.1-8B-Instruct"}
    with pytest.raises(ConfigError) as missing:
        load_config(sweep(tmp_path, base))
    assert str(missing.value).count("\n") == 0  # one line
    assert "models[0].tool_call_parser: model 'llama' is served by vLLM with agent.protocol function_calling" in str(
        missing.value
    )
    assert "llama3_json (Llama 3.1/3.2" in str(missing.value)
    with pytest.raises(ConfigError, match=r"models\[0\]\.tool_call_parser"):
        load_config(sweep(tmp_path, {**base, "tool_call_parser": None}))  # an explicit null too
    assert load_config(sweep(tmp_path, base, protocol="react")).models[0].tool_call_parser is None  # text protocol
    with pytest.raises(ConfigError, match="tool_call_parser: unknown parser 'llama3json'; did you mean 'llama3_json'"):
        load_config(sweep(tmp_path, {**base, "tool_call_parser": "llama3json"}))
    plugin = {**base, "tool_call_parser": "llama3json", "server_args": ["--tool-parser-plugin", "my_parser.py"]}
    assert load_config(sweep(tmp_path, plugin)).models[0].tool_call_parser == "llama3json"
    with pytest.raises(ConfigError, match=r"models\[0\]: weights folder not found: /no/such/model$"):
        load_config(sweep(tmp_path, {**base, "weights": "/no/such/model", "tool_call_parser": "hermes"}))
    with pytest.raises(ConfigError, match=r"weights folder not found: ./models/none \(looked in "):
        load_config(sweep(tmp_path, {**base, "weights": "./models/none", "tool_call_parser": "hermes"}))
    with pytest.raises(ConfigError, match=r"chat_template file not found: missing\.jinja"):
        load_config(sweep(tmp_path, {**base, "chat_template": "missing.jinja", "tool_call_parser": "hermes"}))
    with pytest.raises(ConfigError, match=r"models\[0\]\.env\.VLLM_X: Input should be a valid string"):
        load_config(sweep(tmp_path, {**base, "tool_call_parser": "hermes", "env": {"VLLM_X": [1]}}))


def test_the_worked_gpu_sweep_validates_and_packs_as_the_docs_say() -> None:
    config = load_config(CONFIGS / "qwen-sizes.yaml")
    assert [m.size_b for m in config.models] == [0.5, 1.5, 3, 7, 14, 32, 72]
    assert {m.tool_call_parser for m in config.models} == {"hermes"}
    # one 8-GPU node: the five single-GPU sizes and 32B (2 GPUs) side by side, then 72B (4 GPUs)
    waves = plan_waves(config.models, nodes(8))
    assert [[p.model.name for p in wave] for wave in waves] == [
        ["qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b", "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b"],
        ["qwen2.5-72b"],
    ]
    assert [m.startup_limit_s for m in config.models] == [605, 615, 630, 670, 740, 1040, 1680]
