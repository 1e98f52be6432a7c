"""FAIL-TaLMs' No-tools answer is judged against the same model's Perfect answer to the same query (issue 34): a sweep
of the offline library on Ray local, a scripted model under test and a scripted grader; the No-tools shard runs
after the Perfect one is committed, its grader is shown the Perfect answer, and a rerun and a replay keep it."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import yaml
from helpers.cli import invoke
from helpers.endpoint import Reply, answer, error, scripted_server

from undertow.cluster.api.replays import replay
from undertow.cluster.store import RunStore
from undertow.env_core.suites import load_ref, suite_ref
from undertow.scoring.failtalms import COMPARE_SYSTEM

QUERIES = 3


def cli(*args: str) -> tuple[int, str]:
    code, out, err = invoke(*args)
    return code, " ".join((out + err).split())


def model_reply(request: dict[str, Any]) -> Reply:
    """A model that answers at once and says in its answer which setting it saw: tools offered (Perfect) or none."""
    task = request["messages"][1]["content"]
    return answer(f"[{'perfect' if request.get('tools') else 'no-tools'}] {task}")


class Grader:
    """Passes every answer and calls every comparison a tie; a comparison of the query ``lost`` fails (the endpoint
    errs, no retry) while ``down`` is set. Keeps the user prompt of every comparison it was asked."""

    def __init__(self, lost: str):
        self.lost = lost
        self.down = True
        self.compared: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Reply:
        system, prompt = (m["content"] for m in request["messages"][:2])
        if system != COMPARE_SYSTEM:
            return answer("Pass")
        with self.lock:  # what it was shown: the request and the two answers, without the closing question
            self.compared.append(prompt.partition("\n\nIs the first answer")[0])
        if self.down and f"User's request:\n{self.lost}\n" in prompt:
            return error(500, "grader down", headers={"x-should-retry": "false"})
        return answer("Tie")


def paired_prompt(task: str) -> str:
    """What a comparison of ``task`` shows when it holds the No-tools answer first and the Perfect one second."""
    return f"User's request:\n{task}\n\nFirst answer:\n[no-tools] {task}\n\nSecond answer:\n[perfect] {task}"


def test_no_tools_is_judged_against_the_perfect_answer_and_a_rerun_and_a_replay_keep_it(
    tmp_path: Path, ray_local: None
) -> None:
    tasks = [s.task for s in load_ref(suite_ref({"family": "failtalms", "limit": QUERIES})).scenarios]
    grader = Grader(lost=tasks[1])
    with scripted_server(model_reply) as model, scripted_server(grader) as judge:
        config = {
            "name": "paired",
            "models": [{"name": "scripted", "kind": "openai", "base_url": model.base_url, "max_retries": 0}],
            "suites": [
                {
                    "family": "failtalms",
                    "limit": QUERIES,
                    # no cache: every verdict and comparison is asked of the endpoint, so the test sees each
                    "judge": {"url": judge.base_url, "name": "grader", "cache": False, "max_retries": 0},
                }
            ],
            "settings": [{"name": "perfect", "scenario_faults": False}, "no_tools"],
            "run": {"store": str(tmp_path / "runs")},
        }
        sweep = tmp_path / "sweep.yaml"
        sweep.write_text(yaml.safe_dump(config))
        code, output = cli("run", str(sweep))
        assert code == 0, output
        (run_dir,) = list((tmp_path / "runs").iterdir())
        store = RunStore(run_dir)
        shards = {s.setting.name: s.shard_id for s in store.manifest().shards}
        assert sorted(shards) == ["no_tools", "perfect"]  # one shard each: the pairing crosses shards

        # every Perfect episode had answered before the first No-tools episode was asked anything
        seen = [bool(r.get("tools")) for r in model.chat_requests]
        assert seen == [True] * QUERIES + [False] * QUERIES
        # each No-tools comparison showed the Perfect answer to the same query, and only those were asked
        assert sorted(grader.compared) == sorted(paired_prompt(t) for t in tasks)
        results = {(r.setting, r.scenario_id): r for r in store.results()}
        by_task = {s.task: s.id for s in load_ref(store.manifest().shards[0].suite).scenarios}
        for task in tasks:
            perfect, no_tools = results[("perfect", by_task[task])], results[("no_tools", by_task[task])]
            assert perfect.details["passed"] is True and perfect.details.get("win_rate") is None
            if task == grader.lost:  # its comparison never came back: the grader's failure, not the model's
                assert no_tools.outcome.value == "infra_error" and "judge:" in (no_tools.error or "")
            else:
                assert no_tools.outcome.value == "scored"
                assert (no_tools.details["passed"], no_tools.details["win_rate"]) == (True, 1)  # a tie
                # whose answer it was compared with: the metrics join the two episodes on it
                assert no_tools.details["perfect_scenario"] == by_task[task]

        # the rerun runs the No-tools shard alone, and its grader is shown the stored Perfect answers again
        grader.down = False
        grader.compared.clear()
        asked = len(model.chat_requests)
        perfect_file = store.folder / "results" / f"{shards['perfect']}.parquet"
        stamp = perfect_file.stat().st_mtime_ns
        code, output = cli("rerun", str(run_dir), "--failed")
        assert code == 0 and f"rerunning 1 failed shard(s), {QUERIES} episode(s)" in output, output
        assert perfect_file.stat().st_mtime_ns == stamp
        assert [bool(r.get("tools")) for r in model.chat_requests[asked:]] == [False] * QUERIES
        assert sorted(grader.compared) == sorted(paired_prompt(t) for t in tasks)
        rerun = [r for r in store.results() if r.setting == "no_tools"]
        assert len(rerun) == QUERIES
        assert all((r.outcome.value, r.details["win_rate"], r.details["paired"]) == ("scored", 1, True) for r in rerun)

        # a replay of a No-tools episode is shown the same Perfect answer, and so reproduces its details
        grader.compared.clear()
        episode = next(r for r in rerun if r.scenario_id == by_task[tasks[0]])
        replayed = replay(str(run_dir), episode.episode_id)
        assert replayed.identical, replayed.differences
        assert grader.compared == [paired_prompt(tasks[0])]
