"""Issue 29's findings through a real ``undertow run``: scripted OpenAI-compatible models write what a hostile model
would — lone surrogates, numbers far beyond float range, answers nested hundreds of levels deep, sandbox probes,
forged protocol messages, huge and slow tool arguments — beside honest episodes in the same shards. The run goes
through the CLI as users run it (on the test session's Ray); the stored results, trajectories, ``undertow status``,
``undertow episodes`` and ``undertow resume`` must show every shard committed, each hostile episode ending in the
outcome the issue names, and its neighbours scored normally."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import ray
import yaml
from helpers.cli import run_cli
from helpers.endpoint import Reply, answer, scripted_server, tool_calls
from helpers.paths import SPIDER_DEV, TESTS
from helpers.shipped import shipped_suite
from toy_family.tools import SLOW

from undertow.cluster.store import RunStore
from undertow.env_core.model import EpisodeResult, Outcome, Scenario, Trajectory
from undertow.env_core.sandbox import available_isolation
from undertow.env_core.suites import Suite, load_ref, suite_ref

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        available_isolation().level != "namespaces", reason=f"no namespaces here: {available_isolation().detail}"
    ),
]


def codeact(code: str) -> Reply:
    return answer(f"<thought>...</thought>\n<execute>\n{code}\n</execute>")


def solution(code: str) -> Reply:
    return answer(f"<solution>\n{code}\n</solution>")


def honest_code(scenario: Scenario) -> str:
    (call,) = scenario.gold.plans[0]
    arguments = ", ".join(f"{k}={v!r}" for k, v in call.arguments.items())
    return f"rows = {call.tool}({arguments})\nprint(len(rows))"


@dataclass
class Attack:
    """What one hostile episode does: the replies it gives turn by turn, and a check of how it ended."""

    replies: list[Reply]
    check: Callable[[EpisodeResult, Trajectory], None]


def scored_wrong(result: EpisodeResult, trajectory: Trajectory) -> None:
    assert result.outcome == Outcome.scored, (result.outcome, result.error)
    assert not result.solved and not result.correct and result.score == 0.0


def unscorable(why: str) -> Callable[[EpisodeResult, Trajectory], None]:
    def check(result: EpisodeResult, trajectory: Trajectory) -> None:
        scored_wrong(result, trajectory)
        detail = result.details["unscorable_answer"]
        assert detail["why"].startswith(f"UnscorableAnswer: {why}"), detail
        assert len(detail["answer"]) < 300 and detail["answer"].endswith("characters)"), detail

    return check


def cleaned(where: Callable[[Trajectory], str | None], expected: str) -> Callable[[EpisodeResult, Trajectory], None]:
    def check(result: EpisodeResult, trajectory: Trajectory) -> None:
        scored_wrong(result, trajectory)
        text = where(trajectory)
        assert text is not None and expected in text, text

    return check


def observations(trajectory: Trajectory) -> str:
    return "\n".join(
        json.dumps(s.observation.model_dump(), ensure_ascii=False) for s in trajectory.steps if s.observation
    )


def tool_arguments(trajectory: Trajectory) -> str:
    calls = [s.action.tool_call.arguments for s in trajectory.tool_steps() if s.action.tool_call]
    return json.dumps(calls, ensure_ascii=False)


def code_steps(trajectory: Trajectory) -> list[Any]:
    return [s for s in trajectory.steps if s.action.kind == "code" and s.observation is not None]


def cell_printed(expected: str) -> Callable[[EpisodeResult, Trajectory], None]:
    """The attack's cell ran and printed ``expected`` (what the refused calls returned); the episode went on."""

    def check(result: EpisodeResult, trajectory: Trajectory) -> None:
        scored_wrong(result, trajectory)
        cell = code_steps(trajectory)[0].observation
        assert cell.ok and cell.result == expected, cell

    return check


def cell_failed(last_line: str) -> Callable[[EpisodeResult, Trajectory], None]:
    """The attack's cell failed inside the kernel with this error; the episode went on."""

    def check(result: EpisodeResult, trajectory: Trajectory) -> None:
        scored_wrong(result, trajectory)
        cell = code_steps(trajectory)[0].observation
        assert not cell.ok and cell.error.type == "code_error", cell
        assert cell.error.message.strip().splitlines()[-1].startswith(last_line), cell.error.message

    return check


def violation(error: str) -> Callable[[EpisodeResult, Trajectory], None]:
    """The episode ended as ``sandbox_violation`` (the model's doing: judged, wrong, never rerun)."""

    def check(result: EpisodeResult, trajectory: Trajectory) -> None:
        assert result.outcome == Outcome.sandbox_violation, (result.outcome, result.error)
        assert result.error is not None and result.error.startswith(error), result.error
        assert not result.correct and result.score == 0.0

    return check


def small_trace(result: EpisodeResult, trajectory: Trajectory) -> None:
    """200 calls, each carrying a 1 MB argument (under the 1 MiB message cap; refused by the tool, or not): recorded
    cut, not 200 MB of trace."""
    scored_wrong(result, trajectory)
    assert result.n_tool_calls == 200
    assert len(trajectory.model_dump_json()) < 4_000_000
    argument = trajectory.tool_steps()[0].action.tool_call.arguments["first_name"]
    assert argument.startswith("xxxx") and argument.endswith("more characters cut]"), argument[-60:]


def refusal_quotes_a_prefix(result: EpisodeResult, trajectory: Trajectory) -> None:
    """A refused 1 MB argument: the refusal the model reads quotes a short prefix of it, not the whole."""
    scored_wrong(result, trajectory)
    (step,) = trajectory.tool_steps()
    error = step.observation.error
    assert error is not None and error.type == "invalid_arguments", step.observation
    assert len(error.message) < 1_000, len(error.message)


# Reaching the kernel's end of its protocol pipe, as code that digs through its own frames can
SESSION = (
    "session = dict(zip(find_employee_ids.__code__.co_freevars, "
    "[c.cell_contents for c in find_employee_ids.__closure__]))['session']\n"
)
LIBC = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
FORGED_OP = "\x1b]52;c;cHduZWQ=\x07\x1b]0;pwned\x07\x1b[2J"  # clipboard write, window title, clear screen

DEEP = "[" * 600 + "1" + "]" * 600
# model name -> attacks, one per scenario after the first (the honest neighbour in the same shard)
MODELS: dict[str, list[Attack]] = {
    "big-numbers": [
        # an exact integer far beyond float range: compared exactly, so simply wrong
        Attack([solution("solution = [10**400]")], scored_wrong),
        # the same as text, 401 digits
        Attack([solution("solution = '[1' + '0' * 400 + ']'")], scored_wrong),
        # an answer nested 600 deep: json reads it, no comparison may recurse through it
        Attack([solution(f"import json\nsolution = json.loads({DEEP!r})")], unscorable("nested deeper than 64 levels")),
    ],
    "surrogates": [
        # a lone surrogate in the answer, in an error the code raises, in a tool's argument
        Attack([solution("solution = 'Sofia \\ud800'")], cleaned(lambda t: t.final_answer, "Sofia \ufffd")),
        Attack(
            [codeact("raise ValueError('bad byte \\ud83d')"), solution("solution = 'none'")],
            cleaned(observations, "bad byte \ufffd"),
        ),
        Attack(
            [codeact("print(find_employee_ids(first_name='x\\udfff', last_name='y'))"), solution("solution = []")],
            cleaned(tool_arguments, "x\ufffd"),
        ),
    ],
    "sandbox-probe": [
        # 3: inotify instances count against the worker's uid on the host: refused in the kernel
        Attack(
            [
                codeact(
                    LIBC + "held = []\nwhile len(held) < 200 and (fd := libc.inotify_init1(0)) >= 0:\n"
                    "    held.append(fd)\nprint(len(held), ctypes.get_errno())"
                )
            ],
            cell_printed("0 1\n"),
        ),
        # 4: memory out of the resident count: memfds, a tmpfs in a nested namespace, SysV and POSIX queues
        Attack(
            [
                codeact(
                    "import os\nfor _ in range(160):\n    fd = os.memfd_create('hoard')\n"
                    "    os.ftruncate(fd, 16 << 20)\n    os.write(fd, b'x' * (16 << 20))"
                )
            ],
            cell_failed("PermissionError: [Errno 1] Operation not permitted"),
        ),
        Attack(
            [
                codeact(
                    LIBC + "print(libc.unshare(0x10000000 | 0x00020000), ctypes.get_errno())\n"
                    "print(libc.shmget(0, 1 << 30, 0o1600), ctypes.get_errno())\n"
                    "print(libc.mq_open(b'/hoard', 0o102, 0o600, None), ctypes.get_errno())"
                )
            ],
            cell_printed("-1 1\n-1 1\n-1 1\n"),
        ),
        # 5: a protocol message nested 100,000 deep
        Attack(
            [
                codeact(
                    SESSION + 'session.outbound.write(b\'{"op": "call", "name": "find_employee_ids", '
                    "\"arguments\": {\"first_name\": ' + b'[' * 100000 + b']' * 100000 + b'}}\\n')\n"
                    "session.outbound.flush()\nimport time\ntime.sleep(5)"
                )
            ],
            violation("SandboxViolation: protocol: a message from the kernel nested deeper than 100 levels"),
        ),
        # 8: a forged protocol op full of terminal escapes (checked in status and episodes below)
        Attack(
            [
                codeact(
                    SESSION + f"import json, time\nsession.outbound.write(json.dumps({{'op': {FORGED_OP!r}}})"
                    ".encode() + b'\\n')\nsession.outbound.flush()\ntime.sleep(5)"
                )
            ],
            violation("SandboxViolation: protocol: an unexpected message from the kernel"),
        ),
        # 9: the kernel keyring, shared with other episodes' kernels
        Attack(
            [
                codeact(
                    LIBC + "add_key, keyctl = (248, 250) if ctypes.sizeof(ctypes.c_void_p) == 8 and "
                    "__import__('platform').machine() == 'x86_64' else (217, 219)\n"
                    "print(libc.syscall(add_key, b'user', b'leak', b'secret', 6, -4), ctypes.get_errno())"
                )
            ],
            cell_printed("-1 1\n"),
        ),
        # 10: /dev is read-only
        Attack(
            [codeact("open('/dev/pwned', 'w').write('x')")], cell_failed("OSError: [Errno 30] Read-only file system")
        ),
        # 11: 200 calls with 1 MB arguments; a refused 1 MB argument
        Attack(
            [
                codeact(
                    "for i in range(200):\n    try:\n"
                    "        find_employee_ids(first_name='x' * 1_000_000, last_name=str(i))\n"
                    "    except Exception:\n        pass"
                ),
                solution("solution = []"),
            ],
            small_trace,
        ),
        Attack(
            [codeact("find_employee_ids(first_name=['x' * 1_000_000], last_name='y')"), solution("solution = []")],
            refusal_quotes_a_prefix,
        ),
        # 12: a forged `done` for the next cell
        Attack(
            [
                codeact(
                    SESSION + "import json, threading, time\n"
                    "def forge(started=session.cell):\n    while session.cell == started:\n        time.sleep(0.001)\n"
                    "    session.outbound.write(json.dumps({'op': 'done', 'error': None, 'printed': 0, "
                    "'cell': session.cell}).encode() + b'\\n')\n    session.outbound.flush()\n"
                    "threading.Thread(target=forge, daemon=True).start()"
                ),
                codeact("import time\ntime.sleep(1)\nprint('cell two')"),
            ],
            violation("SandboxViolation: protocol: the kernel ended a cell it was not running"),
        ),
    ],
}


def run_sweep(tmp_path: Path, base_url: str, suite: dict[str, Any]) -> Path:
    config = {
        "name": "hostile",
        "models": [{"name": name, "kind": "openai", "base_url": base_url, "max_retries": 0} for name in MODELS],
        "suites": [suite],
        "settings": ["clean"],
        "agent": {"protocol": "codeact"},
        "run": {"store": str(tmp_path / "runs")},
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(config))
    done = run_cli("run", str(path), "--address", ray.get_runtime_context().gcs_address)
    assert done.returncode == 0, done.stdout + done.stderr
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    return run_dir


def stored(run_dir: Path) -> tuple[dict[str, EpisodeResult], dict[str, Trajectory]]:
    """Results and trajectories of a run by episode id; every planned episode has exactly one of each, and every
    shard is committed."""
    store = RunStore(run_dir)
    manifest = store.manifest()
    assert store.committed() == {s.shard_id for s in manifest.shards}
    planned = sorted(e.episode_id for s in manifest.shards for e in s.episodes)
    results, trajectories = store.results(), list(store.trajectories())
    assert sorted(r.episode_id for r in results) == planned
    assert sorted(t.episode_id for t in trajectories) == planned
    return {r.episode_id: r for r in results}, {t.episode_id: t for t in trajectories}


@pytest.fixture(scope="module")
def suite() -> tuple[dict[str, Any], Suite]:
    config = {"family": "smoke", "limit": 1 + max(len(attacks) for attacks in MODELS.values())}
    return config, load_ref(suite_ref(config))


def test_a_sweep_with_hostile_models_commits_every_shard_and_resumes(
    tmp_path: Path, ray_local: None, suite: tuple[dict[str, Any], Suite]
) -> None:
    config, loaded = suite
    honest, *others = loaded.scenarios
    attack_of = {(model, s.task): a for model, attacks in MODELS.items() for s, a in zip(others, attacks, strict=False)}

    def reply(request: dict[str, Any]) -> Reply:
        model, task = request["model"], str(request["messages"][1]["content"])
        turn = sum(message["role"] == "assistant" for message in request["messages"])
        if task == honest.task:
            return codeact(honest_code(honest)) if turn == 0 else solution("solution = rows")
        attack = attack_of.get((model, task))
        if attack is None:  # a scenario this model has no attack for: it gives up
            return answer("<solution>\nsolution = 'I cannot'\n</solution>")
        return attack.replies[turn] if turn < len(attack.replies) else solution("solution = []")

    with scripted_server(reply) as server:
        run_dir = run_sweep(tmp_path, server.base_url, config)
        results, trajectories = stored(run_dir)
        by_key = {(r.model, r.scenario_id): r for r in results.values()}
        for model, attacks in MODELS.items():
            neighbour = by_key[(model, honest.id)]
            assert neighbour.outcome == Outcome.scored and neighbour.correct, (model, neighbour.error)
            for scenario, attack in zip(others, attacks, strict=False):
                result = by_key[(model, scenario.id)]
                attack.check(result, trajectories[result.episode_id])
        assert not [r for r in results.values() if not r.outcome.judged]  # nothing charged to the infrastructure

        # 8: what the model wrote reaches the terminal with its control characters shown, never sent
        for command in (["status", str(run_dir)], ["episodes", str(run_dir), "--model", "sandbox-probe"]):
            done = run_cli(*command, env={**os.environ, "COLUMNS": "2000"})  # wide: no cell folded
            assert done.returncode == 0, done.stderr
            printed = done.stdout + done.stderr
            assert "\x1b" not in printed and "\x07" not in printed, command
            assert "\\x1b]52;c;cHduZWQ=\\x07" in printed, printed

        # The driver died before the hostile shards were stored: resume runs them again, and they commit
        store = RunStore(run_dir)
        lost = sorted(store.committed())
        for shard_id in lost:
            (run_dir / "results" / f"{shard_id}.parquet").unlink()
            (run_dir / "traces" / f"{shard_id}.jsonl.gz").unlink()
        done = run_cli("resume", str(run_dir), "--address", ray.get_runtime_context().gcs_address)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"{len(lost)} of {len(lost)} shard(s) to run" in done.stdout + done.stderr
        again, _ = stored(run_dir)
    assert {(r.model, r.scenario_id, r.outcome, r.correct) for r in again.values()} == {
        (r.model, r.scenario_id, r.outcome, r.correct) for r in results.values()
    }


def test_tool_time_counts_against_the_cells_budget(tmp_path: Path) -> None:
    """7: a cell that keeps calling a slow tool ends at its step timeout, within one call's time: no call starts
    after the deadline, and the model sees the usual ``TimeoutError``. The slow tool is the test family's lookup
    (``TOY_LOOKUP_S``), so the run starts its own Ray with the family on its path, as a user's own family would be.
    The timeout is 3 s instead of the shipped 10 s to keep the test short; the rule it checks is the same."""
    slow_s, timeout_s = 1.0, 3

    def reply(request: dict[str, Any]) -> Reply:
        turn = sum(message["role"] == "assistant" for message in request["messages"])
        return (
            codeact("for _ in range(30):\n    lookup_capital(country='France')")
            if turn == 0
            else answer("<solution>\nsolution = 'Paris'\n</solution>")
        )

    env = {**os.environ, "COLUMNS": "250", "PYTHONPATH": str(TESTS), SLOW: str(slow_s)}
    with scripted_server(reply) as server:
        config = {
            "name": "slow-tool",
            "models": [{"name": "looper", "kind": "openai", "base_url": server.base_url, "max_retries": 0}],
            "suites": [{"family": "toy_family:FAMILY", "countries": 1}],
            "settings": ["clean"],
            "agent": {"protocol": "codeact", "step_timeout_s": timeout_s},
            "run": {"store": str(tmp_path / "runs")},
        }
        (tmp_path / "slow.yaml").write_text(yaml.safe_dump(config))
        done = run_cli("run", str(tmp_path / "slow.yaml"), "--workers", "1", env=env, timeout=400)
    assert done.returncode == 0, done.stdout + done.stderr
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    (result,) = RunStore(run_dir).results()
    (trajectory,) = RunStore(run_dir).trajectories()
    assert result.outcome == Outcome.scored and result.correct  # the episode went on after the timeout
    cell = code_steps(trajectory)[0].observation
    assert cell.error is not None and cell.error.type == "timeout", cell
    assert cell.error.message.startswith(f"TimeoutError: the code ran longer than {timeout_s} s"), cell.error
    # calls start at 0, 1 and 2 s; the third returns at 3 s, past the deadline, and the cell ends there
    assert len(trajectory.tool_steps()) == 3, [s.observation for s in trajectory.tool_steps()]
    assert cell.latency_ms < (timeout_s + slow_s + 2) * 1000, cell.latency_ms


# ---------------------------------------------------------------------------------------------------------------
# Hostile tool arguments (6, 7, 11): refused or bounded by the tools, as tool errors the model reads

EMAIL_SCENARIO = "services.card.FM5"  # offers gmail_send_email
LIKE_36 = "%" * 36 + "#"  # a LIKE pattern that once backtracked for 22 s over five continent names


def react(tool: str, arguments: dict[str, Any]) -> Reply:
    return answer(f"Thought: try it\nAction: {tool}\nAction Input: {json.dumps(arguments, ensure_ascii=False)}")


# by a tool the request offers: the calls the model makes, one per turn, and what each observation must be
TOOL_ATTACKS: dict[str, list[tuple[Reply, str, str]]] = {
    # function calling (services): an address of 60,000 characters; one just under the cap, for the quadratic check
    "gmail_send_email": [
        (
            tool_calls(("gmail_send_email", {"to": ["a@" + "." * 59_997 + "@"], "subject": "s", "body": "b"})),
            "invalid_arguments",
            "Invalid arguments for gmail_send_email: a string of ",
        ),
        (
            tool_calls(("gmail_send_email", {"to": ["a@" + "." * 3_995 + "@"], "subject": "s", "body": "b"})),
            "invalid_request",
            "recipient 'a@.....",
        ),
    ],
    # ReAct (liveapi REST): a URL past what the HTTP client takes
    "get_car_makers_count_by_country_name_car_1": [
        (
            react("get_car_makers_count_by_country_name_car_1", {"country_name": "€" * 70_000}),
            "invalid_arguments",
            "Invalid arguments for get_car_makers_count_by_country_name_car_1: a string of ",
        ),
        (
            react("get_car_makers_count_by_country_name_car_1", {"country_name": "€" * 1_000}),
            "invalid_arguments",
            "Invalid arguments for get_car_makers_count_by_country_name_car_1: the request URL would be 9056 "
            "characters long, more than the 8000 the API accepts",
        ),
    ],
    # ReAct (liveapi slot): a LIKE pattern that cannot backtrack any more: it simply runs
    "filter_data": [
        (
            react(
                "filter_data",
                {
                    "data_source": "$starting_table_var$",
                    "key_name": "continents_Continent",
                    "condition": "like",
                    "value": LIKE_36,
                },
            ),
            "ok",
            "",
        )
    ],
}


def offered(request: dict[str, Any]) -> str:
    """The attacked tool this episode offers: in the request's tools, or named in a ReAct system prompt."""
    names = {t["function"]["name"] for t in request.get("tools", [])}
    prompt = str(request["messages"][0]["content"])
    return next(tool for tool in TOOL_ATTACKS if tool in names or tool in prompt)


def test_hostile_tool_arguments_are_tool_errors_in_a_real_run(tmp_path: Path, ray_local: None) -> None:
    services = load_ref(suite_ref("services"))
    (line,) = [json.dumps(s.model_dump(mode="json")) for s in services.scenarios if s.id == EMAIL_SCENARIO]
    (tmp_path / "email.jsonl").write_text(line + "\n")
    suites = [
        {"family": "services", "scenarios": str(tmp_path / "email.jsonl")},
        {"family": "liveapi", "spider": str(SPIDER_DEV), "formulation": "rest", "mode": "react", "limit": 1},
        {"family": "liveapi", "spider": str(SPIDER_DEV), "formulation": "slot", "mode": "react", "limit": 1},
    ]
    for entry in suites[1:]:
        shipped_suite(entry)  # built once per session, shared with the family tests

    def reply(request: dict[str, Any]) -> Reply:
        attacks = TOOL_ATTACKS[offered(request)]
        turn = sum(message["role"] == "assistant" for message in request["messages"])
        if turn < len(attacks):
            return attacks[turn][0]
        return answer("Final Answer: I could not do it" if "tools" not in request else "I could not do it")

    with scripted_server(reply) as server:
        config = {
            "name": "hostile-tools",
            "models": [{"name": "abuser", "kind": "openai", "base_url": server.base_url, "max_retries": 0}],
            "suites": suites,
            "settings": ["clean"],
            "run": {"store": str(tmp_path / "runs")},
        }
        (tmp_path / "tools.yaml").write_text(yaml.safe_dump(config))
        done = run_cli("run", str(tmp_path / "tools.yaml"), "--address", ray.get_runtime_context().gcs_address)
        assert done.returncode == 0, done.stdout + done.stderr
        (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
        results, trajectories = stored(run_dir)
    assert len(results) == 3
    for result in results.values():
        assert result.outcome == Outcome.scored and not result.correct, (result.suite, result.error)
        steps = trajectories[result.episode_id].tool_steps()
        attacks = TOOL_ATTACKS[steps[0].action.tool_call.name]
        assert len(steps) == len(attacks), (result.suite, steps)
        for step, (_, kind, prefix) in zip(steps, attacks, strict=True):
            observation = step.observation
            assert observation is not None
            if kind == "ok":
                assert observation.ok, observation.error
                assert observation.latency_ms < 5_000, observation.latency_ms  # 22 s before the matcher changed
            else:
                assert observation.error is not None and observation.error.type == kind, observation
                assert observation.error.message.startswith(prefix), observation.error.message[:300]
                assert len(observation.error.message) < 2_100  # quoted short, however long the argument
