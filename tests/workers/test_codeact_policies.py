"""Built-in policies under CodeAct: their calls run as cells in the sandboxed kernel, so a sweep of the paper's
protocol with oracle / naive / random exercises the same path a model's code does."""

from __future__ import annotations

import pytest
from helpers.endpoint import answer, scripted_server
from helpers.spider import make_spider

from undertow.env_core.faults import PRESET_SETTINGS, transient_error, unavailable_error
from undertow.env_core.model import Outcome
from undertow.env_core.sandbox import python_name
from undertow.env_core.search import ToolAccess
from undertow.env_core.suites import SuiteRef, load_ref, suite_ref
from undertow.workers.agent import AgentConfig
from undertow.workers.clients import EndpointModel, PolicyModel
from undertow.workers.policies import CodeActPolicy
from undertow.workers.runner import EpisodePlan, ShardOutput, ShardSpec, run_shard


@pytest.fixture(scope="module")
def spider_ref(tmp_path_factory: pytest.TempPathFactory) -> SuiteRef:
    return suite_ref({"family": "sqlfuncs", "spider": str(make_spider(tmp_path_factory.mktemp("spider")))})


def run(ref: SuiteRef, policy: str, setting: str, access: ToolAccess | None = None) -> ShardOutput:
    suite = load_ref(ref)
    shard = ShardSpec(
        shard_id=f"{policy}-{setting}",
        model=PolicyModel(name=policy),
        suite=ref if access is None else ref.model_copy(update={"access": access}),
        setting=PRESET_SETTINGS[setting],
        agent=AgentConfig(protocol="codeact"),
        episodes=[EpisodePlan(episode_id=s.id, scenario_id=s.id, seed=0) for s in suite.scenarios],
    )
    return run_shard(shard)


def test_the_oracle_solves_every_scenario_in_code_and_recovers_from_the_first_tried_fault(spider_ref: SuiteRef) -> None:
    for setting in ("clean", "first_tried"):
        out = run(spider_ref, "oracle", setting)
        assert out.results and all(r.outcome == Outcome.scored and r.correct for r in out.results), setting
        for trajectory in out.trajectories:
            cells = [s for s in trajectory.steps if s.action.kind == "code"]
            assert cells, "the calls ran as code"
            assert trajectory.steps[-1].action.kind == "final_answer"
        if setting == "first_tried":
            # the disabled function raised in the policy's cell, and the oracle moved to its backup plan
            failed = [s for t in out.trajectories for s in t.steps if s.action.kind == "code" and not s.observation.ok]
            assert failed and all("is currently unavailable" in s.observation.error.message for s in failed)


def test_in_the_open_world_the_oracle_reads_a_functions_docs_before_calling_it(spider_ref: SuiteRef) -> None:
    out = run(spider_ref, "oracle", "first_tried", ToolAccess(mode="open", search="lexical"))
    assert out.results and all(r.correct for r in out.results)
    for trajectory in out.trajectories:
        calls = [s.action.tool_call.name for s in trajectory.steps if s.action.kind == "tool_call"]
        first_function = next(i for i, name in enumerate(calls) if name != "get_info")
        assert calls[first_function - 1] == "get_info"  # the kernel defines a function once it has been shown


def test_the_naive_policy_fails_when_its_first_function_is_disabled(spider_ref: SuiteRef) -> None:
    out = run(spider_ref, "naive", "first_tried")
    assert out.results and not any(r.correct for r in out.results)
    assert all(r.outcome == Outcome.scored for r in out.results)


def test_the_oracle_gives_up_when_every_solution_is_unavailable(spider_ref: SuiteRef) -> None:
    out = run(spider_ref, "oracle", "impossible")
    assert out.results and all(r.gave_up and r.correct for r in out.results)


def test_cell_output_is_read_back_as_the_tool_message() -> None:
    read = CodeActPolicy._result
    assert read('Observation:\nCould not find entry\n[{"a": 1}]') == [{"a": 1}]
    error = read("Observation:\nTraceback (most recent call last):\n  ...\nValueError: f is currently unavailable.")
    assert error == {"error": {"type": "ValueError", "message": "f is currently unavailable."}}
    transient = read(f"ToolError: {transient_error('f').message}")
    assert transient["error"]["type"] == "service_unavailable"
    # an outage's message says nothing of retrying: read back as the exception it is, not as a retryable error
    outage = read(f"ToolError: {unavailable_error('f', 'service_unavailable').message}")
    assert outage["error"]["type"] == "ToolError"
    assert read("")["error"]["message"] == "no output"


def test_an_argument_of_the_wrong_type_raises_assertionerror_in_the_agents_code(spider_ref: SuiteRef) -> None:
    suite = load_ref(spider_ref)
    tool = next(t for t in suite.toolbox.specs.values() if any(p["type"] == "float" for p in t.binding["params"]))
    name = next(p["name"] for p in tool.binding["params"] if p["type"] == "float")
    script = [  # open world: get_info makes the function callable in the kernel
        answer(f"<execute>print(get_info(tool_name={tool.name!r}))</execute>"),
        answer(f"<execute>{python_name(tool.name)}({name}=10)</execute>"),
        answer("<solution>solution = []</solution>"),
    ]
    with scripted_server(script) as server:
        run_shard(
            ShardSpec(
                shard_id="types",
                model=EndpointModel(name="scripted", base_url=server.base_url, max_retries=0, timeout_s=10),
                suite=spider_ref.model_copy(update={"access": ToolAccess(mode="open")}),
                setting=PRESET_SETTINGS["clean"],
                agent=AgentConfig(protocol="codeact", prompt="hohw"),
                episodes=[EpisodePlan(episode_id="e", scenario_id=suite.scenarios[0].id, seed=0)],
            )
        )
    shown = server.chat_requests[2]["messages"][-1]["content"]
    assert shown.splitlines()[-1] == f"AssertionError: Expected float but got int for {name}"
