"""The CodeAct kernel: real child processes, a dict-backed tool implementation in the parent."""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from undertow.env_core.sandbox import CodeResult, FunctionStub, Kernel, SandboxError, ToolReply, python_name

# Test data: what the tools answer. The kernel only ever sees what call_tool returns.
EMPLOYEES = {"Shelley": 205, "Payam": 122}
REPORTS = {205: [{"EMPLOYEE_ID": 206, "SALARY": 8300}], 122: [{"EMPLOYEE_ID": 190, "SALARY": 2900}]}

STUBS = [
    FunctionStub("function_985", ["lambda_sigma"], "Get the employee_id for a first_name."),
    FunctionStub("function_986", ["beta_epsilon", "limit"], "Get employee_id and salary by manager_ids."),
    FunctionStub("function_987", ["lambda_epsilon"], "Get reports of a manager by first name."),
]


class Tools:
    """A tiny tool implementation: records every call that reaches the parent."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, name: str, arguments: dict[str, Any]) -> ToolReply:
        self.calls.append((name, arguments))
        if name == "function_985":
            first = arguments.get("lambda_sigma")
            if first not in EMPLOYEES:
                return ToolReply(ok=True, value=[], notes=[f"Could not find entry with `lambda_sigma` value `{first}`"])
            return ToolReply(ok=True, value=[{"EMPLOYEE_ID": EMPLOYEES[first]}])
        if name == "function_986":
            rows = [row for manager in arguments.get("beta_epsilon", []) for row in REPORTS.get(manager, [])]
            return ToolReply(ok=True, value=rows[: arguments.get("limit") or None])
        if name == "function_987":
            return ToolReply(ok=False, error="function_987 is currently unavailable. Please try a different function.")
        return ToolReply(ok=False, error=f"unknown tool {name}")


@pytest.fixture
def tools() -> Tools:
    return Tools()


@pytest.fixture
def kernel(tools: Tools) -> Iterator[Kernel]:
    with Kernel(STUBS, tools, step_timeout_s=5.0) as k:
        yield k


def ok(result: CodeResult) -> str:
    assert result.error is None, result.error
    assert not result.timed_out
    return result.output


def test_variables_persist_and_output_is_captured(kernel: Kernel) -> None:
    assert ok(kernel.run("x = 40\ndef double(v):\n    return 2 * v")) == ""
    assert ok(kernel.run("y = double(x) + 2\nprint('y is', y)")) == "y is 82\n"
    assert ok(kernel.run("import sys\nprint('to stderr', file=sys.stderr)")) == "to stderr\n"
    # A cell ending with an expression shows its value, as a notebook does; a trailing ';' hides it.
    assert ok(kernel.run("{'y': y}")) == "{'y': 82}\n"
    assert ok(kernel.run("y;")) == ""


def test_exception_gives_user_facing_traceback(kernel: Kernel) -> None:
    result = kernel.run("print('before')\ndef f(d):\n    return d['movie']\nf({'title': 'Titanic'})")
    assert result.output == "before\n"
    assert not result.timed_out
    error = result.error
    assert error is not None
    assert error.startswith("Traceback (most recent call last):")
    assert "Cell In[1], line 4" in error and "Cell In[1], line 3, in f" in error
    assert "return d['movie']" in error
    assert error.endswith("KeyError: 'movie'")
    assert "sandbox" not in error and "exec(" not in error
    # The kernel survives an error; a syntax error shows the cell line and no kernel frames at all.
    syntax = kernel.run("x = = 1").error
    assert syntax is not None and "Cell In[2], line 1" in syntax and "SyntaxError" in syntax
    assert "Traceback" not in syntax and "ast.py" not in syntax
    assert ok(kernel.run("print('alive')")) == "alive\n"


def test_tools_are_functions_that_call_the_parent(kernel: Kernel, tools: Tools) -> None:
    out = ok(kernel.run("shelley = function_985('Shelley')\nprint(shelley)"))
    assert out == "[{'EMPLOYEE_ID': 205}]\n"
    ok(kernel.run("rows = function_986([shelley[0]['EMPLOYEE_ID']], limit=1)"))
    ok(kernel.run("rows2 = function_986(beta_epsilon=[205, 122])\ntotal = sum(r['SALARY'] for r in rows2)"))
    assert tools.calls == [
        ("function_985", {"lambda_sigma": "Shelley"}),
        ("function_986", {"beta_epsilon": [205], "limit": 1}),
        ("function_986", {"beta_epsilon": [205, 122]}),
    ]
    assert kernel.get("rows") == (True, [{"EMPLOYEE_ID": 206, "SALARY": 8300}])
    assert kernel.get("total") == (True, 8300 + 2900)
    # Arguments go as JSON: tuples and sets become lists; an object JSON cannot carry fails in the kernel.
    ok(kernel.run("function_986((205,))\nfunction_986({122})"))
    assert tools.calls[-2:] == [("function_986", {"beta_epsilon": [205]}), ("function_986", {"beta_epsilon": [122]})]
    error = kernel.run("function_985(object())").error
    assert error is not None and "TypeError" in error and "cannot be passed to a tool" in error
    assert len(tools.calls) == 5
    # The docstring and signature are the tool's.
    assert "function_985(lambda_sigma)" in ok(kernel.run("help(function_985)"))
    assert "Get the employee_id" in ok(kernel.run("print(function_985.__doc__)"))


def test_tool_error_raises_in_the_kernel(kernel: Kernel) -> None:
    result = kernel.run("result = function_987(lambda_epsilon='Shelley')\nprint(result)")
    assert result.output == ""
    assert result.error is not None
    assert "Cell In[1], line 1" in result.error
    assert result.error.endswith("ToolError: function_987 is currently unavailable. Please try a different function.")
    caught = "try:\n    function_987('Shelley')\nexcept Exception as e:\n    print('caught:', type(e).__name__, e)"
    assert ok(kernel.run(caught)) == (
        "caught: ToolError function_987 is currently unavailable. Please try a different function.\n"
    )
    assert kernel.get("result") == (False, None)


def test_tool_notes_are_printed(kernel: Kernel) -> None:
    out = ok(kernel.run("print('start')\nr = function_985('Shelly')\nprint('got', r)"))
    assert out == "start\nCould not find entry with `lambda_sigma` value `Shelly`\ngot []\n"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("function_985(name='Shelley')", "function_985() got an unexpected keyword argument 'name'"),
        ("function_985('a', 'b')", "function_985() takes 1 positional argument but 2 were given"),
        ("function_986([1], beta_epsilon=[2])", "function_986() got multiple values for argument 'beta_epsilon'"),
    ],
)
def test_bad_calls_fail_without_reaching_the_parent(kernel: Kernel, tools: Tools, call: str, message: str) -> None:
    error = kernel.run(call).error
    assert error is not None and error.endswith(f"TypeError: {message}")
    assert "sandbox" not in error
    assert tools.calls == []


def test_get_converts_to_json_data(kernel: Kernel) -> None:
    code = (
        "a_list = [1, 2.5, 'x', None, True, (3, 4)]\n"
        "a_dict = {'k': {'n': [1]}, 7: 'seven'}\n"
        "a_str = 'hello'\nan_int = 42\na_float = 0.5\nnothing = None\na_set = {3, 1, 2}\n"
        "class Thing:\n    def __repr__(self):\n        return 'Thing()'\n"
        "a_thing = Thing()\nnested = [Thing()]\n"
        "cycle = []\ncycle.append(cycle)"
    )
    ok(kernel.run(code))
    assert kernel.get("a_list") == (True, [1, 2.5, "x", None, True, [3, 4]])
    assert kernel.get("a_dict") == (True, {"k": {"n": [1]}, "7": "seven"})
    assert kernel.get("a_str") == (True, "hello")
    assert kernel.get("an_int") == (True, 42)
    assert kernel.get("a_float") == (True, 0.5)
    assert kernel.get("nothing") == (True, None)
    assert kernel.get("a_set") == (True, [1, 2, 3])
    assert kernel.get("a_thing") == (True, "Thing()")
    assert kernel.get("nested") == (True, ["Thing()"])
    assert kernel.get("missing") == (False, None)
    found, value = kernel.get("cycle")
    assert found and json.dumps(value)  # a cycle ends in a repr instead of recursing forever


def test_data_too_deep_for_a_message_stays_inside(kernel: Kernel, tools: Tools) -> None:
    # The worker takes a message nested deeper than 100 levels for a forged one; honest code never sends one: its
    # deep arguments raise in the cell, and a deep value is cut to fit
    ok(kernel.run("deep = []\nfor _ in range(150):\n    deep = [deep]"))
    error = kernel.run("function_986(deep)").error
    assert error is not None and error.endswith("ValueError: function_986(): arguments nested deeper than 99 levels")
    assert tools.calls == []
    found, value = kernel.get("deep")
    levels = 0
    while isinstance(value, list):
        value, levels = value[0], levels + 1
    assert found and levels == 98 and isinstance(value, str) and value.startswith("[[[")


def test_timeout_kills_and_restarts_with_fresh_namespace(tools: Tools) -> None:
    with Kernel(STUBS, tools, step_timeout_s=1.0) as kernel:
        ok(kernel.run("keep = 1"))
        first_pid = kernel.pid
        started = time.monotonic()
        result = kernel.run("print('spinning')\nwhile True:\n    pass")
        elapsed = time.monotonic() - started
        assert result.timed_out
        assert 0.9 <= elapsed < 3.0
        assert result.error is not None and "restarted" in result.error and "variables were lost" in result.error
        assert kernel.pid is None
        assert not _alive(first_pid)
        # The next run starts a fresh kernel: the old variables are gone, the tools are back.
        assert "NameError" in (kernel.run("keep").error or "")
        assert kernel.pid != first_pid
        assert ok(kernel.run("print(function_985('Payam'))")) == "[{'EMPLOYEE_ID': 122}]\n"


def test_time_inside_tool_calls_counts_toward_the_timeout() -> None:
    def slow_tool(name: str, arguments: dict[str, Any]) -> ToolReply:
        time.sleep(1.2)
        return ToolReply(ok=True, value=1)

    with Kernel([FunctionStub("slow", [])], slow_tool, step_timeout_s=1.0) as kernel:
        result = kernel.run("slow()")
        assert result.timed_out
        assert ok(kernel.run("print('fresh')")) == "fresh\n"


def test_kernel_death_is_reported_and_the_kernel_restarts(kernel: Kernel) -> None:
    ok(kernel.run("x = 1"))
    pid = kernel.pid
    result = kernel.run("import os\nos._exit(3)")
    assert not result.timed_out
    assert result.error is not None and "died" in result.error and "exit code 3" in result.error
    assert "restarted" in result.error
    assert not _alive(pid)
    assert "NameError" in (kernel.run("x").error or "")
    assert ok(kernel.run("print(2 + 2)")) == "4\n"
    # SystemExit is an ordinary exception in a notebook: the kernel keeps its state.
    ok(kernel.run("z = 5"))
    assert "SystemExit" in (kernel.run("raise SystemExit(1)").error or "")
    assert kernel.get("z") == (True, 5)


def test_memory_bomb_fails_without_hanging(tools: Tools) -> None:
    with Kernel(STUBS, tools, step_timeout_s=5.0, memory_mb=256) as kernel:
        started = time.monotonic()
        result = kernel.run("blob = bytearray(2 * 1024**3)")
        assert time.monotonic() - started < 5.0
        assert not result.timed_out
        assert result.error is not None
        assert "MemoryError" in result.error or "died" in result.error
        assert ok(kernel.run("print(len(bytearray(10 * 1024**2)))")) == f"{10 * 1024**2}\n"


def test_kernel_sees_none_of_the_parents_environment(tools: Tools, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNDERTOW_FAKE_SECRET", "sk-do-not-leak")
    with Kernel(STUBS, tools) as kernel:
        ok(kernel.run("import os\nenv = dict(os.environ)"))
        found, env = kernel.get("env")
    assert found
    assert "UNDERTOW_FAKE_SECRET" not in env and "sk-do-not-leak" not in json.dumps(env)
    # Only what the sandbox sets itself (constants, and PATH from the parent).
    assert set(env) <= {
        "PATH",
        "PYTHONPATH",
        "PYTHONNOUSERSITE",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "HOME",
        "TMPDIR",
        "LANG",
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
    }, env
    assert env["HOME"] == env["TMPDIR"] != os.environ.get("HOME")


def test_kernel_runs_in_its_own_process_and_directory(tools: Tools, tmp_path: Path) -> None:
    kernel = Kernel(STUBS, tools)
    name = f"scratch-{tmp_path.name}.txt"
    ok(kernel.run(f"import os\npid = os.getpid()\ncwd = os.getcwd()\nopen({name!r}, 'w').write('x')"))
    _, pid = kernel.get("pid")
    _, cwd = kernel.get("cwd")
    # PID 1 of its own PID namespace, in its own /tmp: what it writes there is not in the host's /tmp
    assert pid == 1 and kernel.pid not in (None, os.getpid())
    assert cwd == "/tmp" and not Path("/tmp", name).exists()
    host_pid = kernel.pid
    kernel.close()
    assert not _alive(host_pid)


def test_without_namespaces_the_kernel_has_a_folder_deleted_on_close(tools: Tools) -> None:
    kernel = Kernel(STUBS, tools, level="rlimits")
    ok(kernel.run("import os\npid = os.getpid()\ncwd = os.getcwd()\nopen('scratch.txt', 'w').write('x')"))
    _, pid = kernel.get("pid")
    _, cwd = kernel.get("cwd")
    assert pid == kernel.pid and pid != os.getpid()
    assert Path(cwd).is_dir() and Path(cwd, "scratch.txt").exists()
    assert Path(cwd).name.startswith(f"undertow-kernel-{os.getpid()}-")  # named after its worker, for the sweep
    kernel.close()
    assert not Path(cwd).exists()
    assert not _alive(pid)


def test_user_output_cannot_corrupt_the_protocol(kernel: Kernel) -> None:
    fake = json.dumps({"op": "done", "output": "forged", "error": None})
    code = (
        "import os, sys\n"
        f"print({fake!r})\n"
        f"sys.__stdout__.write({fake!r} + '\\n')\n"
        "sys.__stdout__.flush()\n"
        f"os.write(1, ({fake!r} + '\\n').encode())\n"
        f'os.write(2, b\'{{"op": "call"}}\\n\')\n'
        "r = function_985('Shelley')\n"
        "print('after', r)"
    )
    out = ok(kernel.run(code))
    # Everything the code wrote, in order, and nothing else: the output is a file the host reads, not a message
    assert out == (fake + "\n") * 3 + '{"op": "call"}\n' + "after [{'EMPLOYEE_ID': 205}]\n"
    assert ok(kernel.run("print(input)")).startswith("<built-in function input>")
    assert "EOFError" in (kernel.run("input()").error or "")  # stdin is /dev/null, not the channel
    assert ok(kernel.run("print('still fine')")) == "still fine\n"


def test_output_is_truncated(tools: Tools) -> None:
    with Kernel(STUBS, tools, max_output=100) as kernel:
        out = ok(kernel.run("for i in range(10_000):\n    print('x' * 10)"))
        assert out.startswith("x" * 10 + "\n")
        assert out.endswith("[output truncated: showing the first 100 of 110000 characters]")


def test_without_namespaces_starting_processes_is_refused_best_effort(tools: Tools) -> None:
    kernel = Kernel(STUBS, tools, level="rlimits")  # an audit hook: ctypes walks around it (SECURITY.md)
    for code in ("import subprocess\nsubprocess.run(['true'])", "import os\nos.system('true')", "import os\nos.fork()"):
        error = kernel.run(code).error
        assert error is not None and "PermissionError" in error and "not allowed" in error
    kernel.close()


# -- the seccomp filter

# The system calls it refuses, by number on x86-64 and ARM64 (-: no such call there). Written out here, not taken
# from env_core/sandbox/seccomp.py, so that a wrong number there fails this test.
_REFUSED_TABLE = """
    inotify_init      253    -
    inotify_init1     294   26
    fanotify_init     300  262
    add_key           248  217
    request_key       249  218
    keyctl            250  219
    memfd_create      319  279
    memfd_secret      447  447
    shmget             29  194
    msgget             68  186
    semget             64  190
    mq_open           240  180
    unshare           272   97
    setns             308  268
    mount             165   40
    umount2           166   39
    pivot_root        155   41
    chroot            161   51
    open_tree         428  428
    move_mount        429  429
    fsopen            430  430
    fsconfig          431  431
    fsmount           432  432
    fspick            433  433
    mount_setattr     442  442
    open_tree_attr    467  467
    userfaultfd       323  282
    bpf               321  280
    perf_event_open   298  241
    io_uring_setup    425  425
"""
REFUSED_CALLS: dict[str, tuple[int | None, int | None]] = {
    name: (None if x86 == "-" else int(x86), None if arm == "-" else int(arm))
    for name, x86, arm in (line.split() for line in _REFUSED_TABLE.strip().splitlines())
}
COLUMN, CLONE, CLONE3 = {"x86_64": (0, 56, 435), "aarch64": (1, 220, 435)}.get(platform.machine(), (0, 0, 0))
needs_filter = pytest.mark.skipif(not CLONE, reason=f"no seccomp filter on {platform.machine()}")


@needs_filter
def test_the_filter_refuses_its_calls_and_leaves_processes_and_threads_working(kernel: Kernel) -> None:
    numbers = {name: pair[COLUMN] for name, pair in REFUSED_CALLS.items() if pair[COLUMN] is not None}
    clone_newuser = 0x10000000 | 17  # and SIGCHLD, as fork would
    code = (
        "import ctypes, os, subprocess, threading\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        f"for name, number in {numbers!r}.items():\n"
        "    print(name, libc.syscall(number, 0, 0, 0, 0, 0), ctypes.get_errno())\n"
        f"pid = libc.syscall({CLONE}, {clone_newuser}, 0, 0, 0, 0)\n"
        "if pid == 0:\n"
        "    os._exit(0)\n"  # only if the filter let it through
        "print('clone', pid, ctypes.get_errno())\n"
        f"print('clone3', libc.syscall({CLONE3}, 0, 0), ctypes.get_errno())\n"
        "print(open('/proc/self/status').read().split('Seccomp:')[1].split()[0])\n"
        "seen = []\n"
        "thread = threading.Thread(target=seen.append, args=('thread',))\n"
        "thread.start()\n"
        "thread.join()\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    os._exit(7)\n"
        "seen.append(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]))\n"
        "seen.append(subprocess.run(['/bin/echo', 'spawned'], capture_output=True, text=True).stdout.strip())\n"
        "seen.append(ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(lambda x: x + 1)(41))\n"
        "seen.append(open('/dev/null', 'w').write('into a device'))\n"
        "print(seen)\n"
    )
    assert ok(kernel.run(code)).splitlines() == [
        *(f"{name} -1 1" for name in numbers),  # EPERM, whatever the arguments
        "clone -1 1",
        "clone3 -1 38",  # ENOSYS: the C library falls back to clone, whose flags the filter sees
        "2",  # Seccomp: filter mode
        "['thread', 7, 'spawned', 42, 13]",
    ]


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the i386 ABI of x86-64")
def test_the_filter_cannot_be_bypassed_through_another_abi(kernel: Kernel) -> None:
    # int 0x80 reaches the i386 system calls, whose numbers differ: every one is refused
    code = (
        "import ctypes, mmap\n"
        "page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n"
        "page.write(bytes.fromhex('b814000000cd80c3'))\n"  # mov eax, 20 (getpid); int 0x80; ret
        "call = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))\n"
        "print(call() == os.getpid(), call())\n"
    )
    assert ok(kernel.run("import os\n" + code)) == "False -1\n"  # without the filter: "True <its PID>"


@needs_filter
def test_without_namespaces_the_seccomp_filter_is_installed_too(tools: Tools) -> None:
    # At this level the kernel is the worker's own uid: 128 inotify instances held there would fail the worker's
    with Kernel(STUBS, tools, level="rlimits") as kernel:
        code = (
            "import ctypes\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "print(libc.inotify_init1(0), ctypes.get_errno())\n"
            "print(open('/proc/self/status').read().split('Seccomp:')[1].split()[0])"
        )
        assert ok(kernel.run(code)) == "-1 1\n2\n"


def test_with_namespaces_processes_may_start_inside_the_namespace(kernel: Kernel) -> None:
    code = "import subprocess\nprint(subprocess.run(['/bin/sh', '-c', 'echo $$'], capture_output=True).stdout.decode())"
    assert 1 < int(ok(kernel.run(code))) < 50  # a low PID: its own PID namespace


def test_close_is_idempotent_and_leaves_no_process(tools: Tools) -> None:
    kernel = Kernel(STUBS, tools)
    pid = kernel.pid
    assert pid is not None and _alive(pid)
    kernel.close()
    kernel.close()
    assert kernel.pid is None
    assert not _alive(pid)
    with pytest.raises(SandboxError):
        kernel.run("1")


def test_call_tool_exception_propagates_and_drops_the_kernel() -> None:
    def broken(name: str, arguments: dict[str, Any]) -> ToolReply:
        raise RuntimeError("database is gone")

    with Kernel([FunctionStub("f", [])], broken) as kernel:
        pid = kernel.pid
        with pytest.raises(RuntimeError, match="database is gone"):
            kernel.run("f()")
        assert not _alive(pid)
        assert ok(kernel.run("print('restarted')")) == "restarted\n"


def test_functions_can_be_added_mid_episode(kernel: Kernel, tools: Tools) -> None:
    assert "NameError" in (kernel.run("function_12").error or "")
    kernel.add_functions([FunctionStub("function-12", ["q"], "a disclosed tool")])
    assert python_name("function-12") == "function_12"
    kernel.run("function_12(q=1)")
    assert tools.calls[-1] == ("function-12", {"q": 1})


def _alive(pid: int | None) -> bool:
    """Whether a process with this PID exists (a reaped child does not; a zombie would count as alive)."""
    return pid is not None and Path(f"/proc/{pid}").exists()
