"""Helper models: the emulator of imported tools, the judge of episodes without gold and the model playing the
Ask-and-Help person, each reached over real HTTP (a scripted OpenAI-compatible server plays the helper, so that its
replies are planned; tests/test_workers/test_vllm.py runs the same paths against a real vLLM server).

Also the importer of the released FAIL-TaLMs files (``undertow import failtalms``), the plan's checks that the
helpers a suite needs are configured, and what a failing helper makes of an episode (never a model failure)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import UNDERTOW
from helpers.endpoint import Reply, answer, error, scripted_server
from helpers.paths import FAIL_TALMS

from undertow.cluster.config import load_config
from undertow.cluster.plan import plan_sweep
from undertow.cluster.store import RunStore
from undertow.env_core.errors import ConfigError
from undertow.env_core.faults import PRESET_SETTINGS, Setting
from undertow.env_core.model import ASK_HUMAN, Action, Outcome, Scenario, ToolCall
from undertow.env_core.simulated import EMULATOR_SYSTEM, PERSON_SYSTEM, read_emulated
from undertow.env_core.suites import Suite, load_ref, suite_ref
from undertow.scoring.failtalms import GRADER_SYSTEM
from undertow.workers.clients import HelperClient, PolicyModel
from undertow.workers.runner import EpisodePlan, ShardSpec, run_shard

EXPECTED = {"perfect": 575, "underspecified": 599, "replaceable": 204, "non_replaceable": 297, "no_tools": 575}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The released files imported through the CLI, as a user does."""
    if not FAIL_TALMS.is_dir():
        pytest.fail(f"{FAIL_TALMS} is missing: the tests need ../shared beside the repository")
    out = tmp_path_factory.mktemp("imported") / "failtalms-released"
    done = subprocess.run(
        [UNDERTOW, "import", "failtalms", str(FAIL_TALMS), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out, done.stdout


def helper_script(body: dict[str, Any]) -> Reply:
    """Each helper by its system prompt: the emulator returns a quote, the grader passes, the person answers."""
    system = body["messages"][0]["content"]
    if system == EMULATOR_SYSTEM:
        return answer('```json\n{"symbol": "ETH", "price_usd": 2011.5}\n```')
    if system == GRADER_SYSTEM:
        return answer("Pass: the answer uses the tool's response.")
    if system == PERSON_SYSTEM:
        return answer("I mean Ethereum.")
    return error(400, f"unexpected system prompt: {system[:60]}", headers={"x-should-retry": "false"})


def released_ref(folder: Path, url: str, **changes: Any) -> Any:
    entry = {
        "path": str(folder),
        "emulator": {"url": url, "name": "helper"},
        "judge": {"url": url, "name": "helper", "k": 3},
        **changes,
    }
    return suite_ref(entry)


def shard(ref: Any, suite: Suite, scenarios: list[Scenario], setting: Setting, policy: str = "random") -> ShardSpec:
    return ShardSpec(
        shard_id=f"helpers-{policy}-{setting.name}",
        model=PolicyModel(name=policy),
        suite=ref,
        setting=setting,
        episodes=[EpisodePlan(episode_id=f"e{i}", scenario_id=s.id, seed=0) for i, s in enumerate(scenarios)],
    )


def of_condition(suite: Suite, condition: str, n: int) -> list[Scenario]:
    return [s for s in suite.scenarios if s.condition == condition][:n]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private helper cache for the test (UNDERTOW_CACHE), empty at the start."""
    monkeypatch.setenv("UNDERTOW_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "helpers"


# ---------------------------------------------------------------------------------------------------------------
# The importer


def test_import_yields_the_released_split_sizes_each_in_its_condition(imported: tuple[Path, str]) -> None:
    folder, printed = imported
    for setting, n in EXPECTED.items():
        assert f" {setting} " in printed and f" {n} " in printed
    assert "2250" in printed and "868 tools, every one emulated" in printed
    suite = load_ref(suite_ref(str(folder)))
    assert len(suite.scenarios) == sum(EXPECTED.values())
    by_condition: dict[str | None, int] = {}
    for scenario in suite.scenarios:
        by_condition[scenario.condition] = by_condition.get(scenario.condition, 0) + 1
    assert by_condition == {
        "none": 575,
        "underspecified": 599,
        "replaceable": 204,
        "non_replaceable": 297,
        "no_tools": 575,
    }
    assert all(spec.binding["emulated"] for spec in suite.toolbox.specs.values())
    assert not any(s.gold.graded() for s in suite.scenarios), "the released files carry no gold"
    # what the person knows: the request as first written, and the tool taken away
    under = next(s for s in suite.scenarios if s.id == "failtalms/released/underspecified/0001")
    assert "Ethereum" in under.metadata["intended"] and "Ethereum" not in under.task
    replaceable = next(s for s in suite.scenarios if s.condition == "replaceable" and s.metadata.get("removed"))
    assert all(replaceable.replaceable[t] is True for t in replaceable.metadata["removed"])
    assert not set(replaceable.metadata["removed"]) & set(replaceable.tools)


def test_import_reports_malformed_entries_and_keeps_the_rest(tmp_path: Path) -> None:
    folder = tmp_path / "fail-talms"
    shutil.copytree(FAIL_TALMS, folder)
    path = folder / "all_Replaceable_queries.json"
    entries = json.loads(path.read_text())
    entries[3] = {"query": 17}
    path.write_text(json.dumps(entries))
    done = subprocess.run(
        [UNDERTOW, "import", "failtalms", str(folder), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "1 entries skipped" in done.stdout and "all_Replaceable_queries.json[3]" in done.stdout
    assert " 203 " in done.stdout and " 575 " in done.stdout


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["sqlfuncs", "PATH"], "family 'sqlfuncs' cannot import released files (families that can: failtalms)"),
        (["failtalm", "PATH"], "unknown family 'failtalm'; did you mean 'failtalms'?"),
        (["failtalms", "MISSING"], "not found; did you mean 'fail-talms'?"),
    ],
)
def test_import_bad_input(arguments: list[str], message: str, tmp_path: Path) -> None:
    path = str(FAIL_TALMS) if arguments[1] == "PATH" else str(FAIL_TALMS.parent / "fail-talm")
    done = subprocess.run(
        [UNDERTOW, "import", arguments[0], path, "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert message in " ".join(done.stderr.split()), done.stderr


# ---------------------------------------------------------------------------------------------------------------
# What a sweep over the imported folder must configure


def sweep(tmp_path: Path, suite: dict[str, Any], settings: list[Any] | None = None) -> Any:
    config = {
        "name": "helpers",
        "models": [{"name": "random"}],
        "suites": [suite],
        "settings": settings or ["perfect"],
        "run": {"store": str(tmp_path / "runs")},
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(config))
    return load_config(path)


def test_the_plan_asks_for_the_helpers_the_suite_needs(imported: tuple[Path, str], tmp_path: Path) -> None:
    folder = str(imported[0])
    url = "http://127.0.0.2:9/v1"
    with pytest.raises(ConfigError, match=r"868 emulated tool\(s\).*no emulator model") as found:
        plan_sweep(sweep(tmp_path, {"path": folder}))
    assert found.value.field == "suites[0].emulator"
    with pytest.raises(ConfigError, match=r"2250 scenario\(s\) without a gold answer") as found:
        plan_sweep(sweep(tmp_path, {"path": folder, "emulator": {"url": url}}))
    assert found.value.field == "suites[0].judge"
    with pytest.raises(ConfigError, match="has no judge") as found:
        plan_sweep(sweep(tmp_path, {"family": "smoke", "judge": {"url": url}}))
    assert found.value.field == "suites[0].judge"
    person = {"name": "asked", "condition": "underspecified", "human_model": {"url": url}}
    with pytest.raises(ConfigError, match="names a human_model, but offers no one to ask") as found:
        plan_sweep(sweep(tmp_path, {"path": folder, "emulator": {"url": url}, "judge": {"url": url}}, [person]))
    assert found.value.field == "settings[0].human_model"


def test_each_imported_scenario_runs_under_its_own_condition_only(imported: tuple[Path, str], tmp_path: Path) -> None:
    url = "http://127.0.0.2:9/v1"
    suite = {"path": str(imported[0]), "emulator": {"url": url}, "judge": {"url": url}}
    manifest = plan_sweep(sweep(tmp_path, suite, ["perfect", "underspecified", "no_tools"]))
    planned: dict[str, int] = {}
    for spec in manifest.shards:
        planned[spec.setting.name] = planned.get(spec.setting.name, 0) + len(spec.episodes)
    assert planned == {"perfect": 575, "underspecified": 599, "no_tools": 575}
    skipped = " ".join(manifest.suites[0].skipped)
    assert "already in condition" in skipped


# ---------------------------------------------------------------------------------------------------------------
# Episodes with helpers


def test_emulated_tools_and_the_judge_grade_a_random_agent(imported: tuple[Path, str], cache: Path) -> None:
    with scripted_server(helper_script) as server:
        ref = released_ref(imported[0], server.base_url)
        suite = load_ref(ref)
        output = run_shard(shard(ref, suite, of_condition(suite, "none", 8), PRESET_SETTINGS["perfect"]))
        asked = len(server.chat_requests)
    assert {r.outcome for r in output.results} == {Outcome.scored}
    calls = [s for t in output.trajectories for s in t.steps if s.observation is not None]
    assert calls and all(s.observation is not None and s.observation.emulated for s in calls)
    assert all(
        s.observation is not None and s.observation.result == {"symbol": "ETH", "price_usd": 2011.5} for s in calls
    )
    judged = [r for r in output.results if not r.details["skipped"]]
    assert judged, "some episodes were attempted"
    for result in judged:
        assert result.details["passed"] is True and result.details["judge_model"] == "helper"
        assert [v["verdict"] for v in result.details["judge_votes"]] == ["pass"] * 3
        assert result.details["emulated_calls"] == result.n_tool_calls
    for result in output.results:
        if result.details["skipped"]:  # answered No: not attempted, not judged, not passed
            assert result.details["passed"] is False and "judge_votes" not in result.details
    # cached: the same shard again asks the helpers nothing and sees the same responses
    with scripted_server(helper_script) as server:
        again = run_shard(shard(ref, suite, of_condition(suite, "none", 8), PRESET_SETTINGS["perfect"]))
        assert server.chat_requests == []
    assert asked > 0 and len(list(cache.glob("*.json"))) > 0
    assert [r.details for r in again.results] == [r.details for r in output.results]


def test_a_judge_that_never_gives_a_verdict_is_a_judge_error_never_a_pass(
    imported: tuple[Path, str], cache: Path
) -> None:
    def script(body: dict[str, Any]) -> Reply:
        if body["messages"][0]["content"] == GRADER_SYSTEM:
            return answer("The assistant did a reasonable job overall.")
        return helper_script(body)

    with scripted_server(script) as server:
        ref = released_ref(imported[0], server.base_url)
        suite = load_ref(ref)
        output = run_shard(shard(ref, suite, of_condition(suite, "none", 6), PRESET_SETTINGS["perfect"]))
        # the authors' judge (FailTalmsJudge's defaults): 3 votes, each re-asked 3 times with the reminder
        reminders = [
            b for b in server.chat_requests if b["messages"][0]["content"] == GRADER_SYSTEM and len(b["messages"]) > 2
        ]
    judged = [r for r in output.results if not r.details["skipped"]]
    assert judged
    for result in judged:
        assert result.outcome == Outcome.scored and result.details["passed"] is None
        assert [(v["verdict"], v["attempts"]) for v in result.details["judge_votes"]] == [("error", 4)] * 3
    assert len(reminders) == 3 * 3 * len(judged), "each vote was asked again 3 times, with the reminder"
    summary = suite_family_summary(output.results)
    assert summary.rows[0].metrics.judge_errors == len(judged)
    assert summary.rows[0].metrics.pr.k == 0


def suite_family_summary(results: list[Any]) -> Any:
    from undertow.scoring.failtalms import summarize

    summary = summarize(results)
    assert summary is not None
    return summary


@pytest.mark.parametrize("down", ["judge", "emulator"])
def test_a_helper_that_is_down_is_an_infra_error(imported: tuple[Path, str], cache: Path, down: str) -> None:
    with scripted_server(helper_script) as server:
        dead = "http://127.0.0.2:9/v1"
        ref = released_ref(
            imported[0],
            server.base_url,
            **{down: {"url": dead, "name": "helper", "max_retries": 0, "timeout_s": 5}},
        )
        suite = load_ref(ref)
        output = run_shard(shard(ref, suite, of_condition(suite, "none", 6), PRESET_SETTINGS["perfect"]))
    failed = [r for r in output.results if r.outcome == Outcome.infra_error]
    assert failed, "some episode needed the helper that is down"
    for result in failed:
        assert "helper model 'helper' at http://127.0.0.2:9/v1" in (result.error or "")
        if down == "judge":
            assert (result.error or "").startswith("judge: ")
        assert not result.details, "nothing is scored from an episode whose helper failed"
    # the rest never needed it: the random agent said No (skipped) before any call
    assert all(r.details["skipped"] for r in output.results if r.outcome != Outcome.infra_error)


# ---------------------------------------------------------------------------------------------------------------
# The person played by a model


def test_a_model_plays_the_person_with_what_the_request_left_out(imported: tuple[Path, str], cache: Path) -> None:
    with scripted_server(helper_script) as server:
        ref = released_ref(imported[0], server.base_url)
        suite = load_ref(ref)
        scenario = next(s for s in suite.scenarios if s.id == "failtalms/released/underspecified/0001")
        setting = Setting(
            name="underspecified_aah",
            condition="underspecified",
            ask_human=True,
            human_model={"url": server.base_url, "name": "helper"},
        )
        person = HelperClient(setting.human_model)  # type: ignore[arg-type]
        env = suite.environment(scenario, 0, setting, person=person)
        env.reset()
        call = Action(
            kind="tool_call", tool_call=ToolCall(id="c1", name=ASK_HUMAN, arguments={"question": "Which coin?"})
        )
        assert env.needs_helper(call)
        observation = env.step(call)
        (request,) = server.chat_requests
    assert observation is not None and observation.ok and observation.result == {"reply": "I mean Ethereum."}
    prompt = request["messages"][1]["content"]
    assert scenario.task in prompt and scenario.metadata["intended"] in prompt and "Which coin?" in prompt
    assert request["model"] == "helper" and request["temperature"] == 0.0


def test_the_person_is_told_the_masked_value_and_the_replaceable_tool_it_stands_in_for(
    smoke: Suite, cache: Path
) -> None:
    scenario = next(s for s in smoke.scenarios if s.gold.plans)
    tool = scenario.gold.plans[0][0].tool
    flagged = scenario.model_copy(
        update={
            "replaceable": {tool: True},
            "metadata": {**scenario.metadata, "masked": {"tool": tool, "argument": "city", "value": "Oslo"}},
        }
    )
    with scripted_server(helper_script) as server:
        setting = Setting(
            name="replaceable_aah",
            condition="replaceable",
            ask_human=True,
            human_model={"url": server.base_url, "name": "helper"},
        )
        env = smoke.environment(flagged, 0, setting, person=HelperClient(setting.human_model))  # type: ignore[arg-type]
        env.reset()
        env.step(Action(kind="tool_call", tool_call=ToolCall(id="c", name=ASK_HUMAN, arguments={"question": "?"})))
        prompt = server.chat_requests[0]["messages"][1]["content"]
    assert "the city you mean is Oslo" in prompt
    assert f"The assistant lacks the tool {tool}" in prompt


def test_reading_an_emulated_reply() -> None:
    assert read_emulated('```json\n{"a": 1}\n```') == {"a": 1}
    assert read_emulated(" [1, 2] ") == [1, 2]
    assert read_emulated("no JSON here") == "no JSON here"


# ---------------------------------------------------------------------------------------------------------------
# Through the CLI on Ray


@pytest.fixture(scope="module")
def helpers_server() -> Iterator[Any]:
    with scripted_server(helper_script) as server:
        yield server


@pytest.mark.slow
def test_a_sweep_over_the_imported_folder_through_the_cli(
    imported: tuple[Path, str], helpers_server: Any, tmp_path: Path
) -> None:
    url = helpers_server.base_url
    config = {
        "name": "released",
        "models": [{"name": "random"}, {"name": "oracle"}],
        "suites": [
            {
                "path": str(imported[0]),
                "limit": 40,
                "emulator": {"url": url, "name": "helper"},
                "judge": {"url": url, "name": "helper", "k": 3},
            }
        ],
        "settings": ["perfect"],
        "run": {"store": str(tmp_path / "runs")},
    }
    path = tmp_path / "released.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {"UNDERTOW_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(
        [UNDERTOW, "run", str(path)], capture_output=True, text=True, timeout=900, env={**os.environ, **env}
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (folder,) = [p for p in (tmp_path / "runs").iterdir() if (p / "manifest.json").is_file()]
    results = list(RunStore(folder).results())
    assert len(results) == 2 * 40 and all(r.outcome == Outcome.scored for r in results)
    assert "FAIL-TaLMs Table 1" in done.stdout and "Emulated" in done.stdout
    emulated = [
        r for r in results if r.model == "random" and r.details["emulated_calls"] > 0 and "judge_votes" in r.details
    ]
    assert emulated
    # a replay gets the emulated responses and the votes from the helper cache: the same trajectory and score
    replayed = subprocess.run(
        [UNDERTOW, "replay", folder.name, emulated[0].episode_id, "--store", str(tmp_path / "runs")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "identical" in replayed.stdout
