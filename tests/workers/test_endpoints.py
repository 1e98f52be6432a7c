"""OpenAI-compatible endpoints end to end: the real ``openai`` SDK over real HTTP against a scripted server.

Each test scripts what the "model" answers (tool calls, text, broken replies, HTTP errors) and checks the outcome
class the episode ends in, the error it records, and what the client sent to the server.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import UNDERTOW
from helpers.endpoint import Reply, answer, closed_port, error, scripted_server, tool_calls

from undertow.cluster.store import RunStore
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import Outcome, Scenario
from undertow.env_core.suites import Suite, SuiteRef
from undertow.scoring.summary import summarize
from undertow.workers.agent import AgentConfig
from undertow.workers.clients import EndpointModel, ModelConfig, probe_endpoint
from undertow.workers.runner import EpisodePlan, ShardOutput, ShardSpec, run_shard

CONTEXT_OVERFLOW = (
    "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens "
    "(4096 in the messages, 1024 in the completion). Please reduce the length of the messages or completion."
)

VLLM_OVERFLOW = {"object": "error", "message": CONTEXT_OVERFLOW, "type": "BadRequestError", "param": None, "code": 400}


def endpoint(base_url: str, **overrides: Any) -> EndpointModel:
    fields = {"name": "scripted", "kind": "openai", "base_url": base_url, "timeout_s": 5.0, "max_retries": 0}
    return EndpointModel(**(fields | overrides))


def run_episodes(
    ref: SuiteRef, model: ModelConfig, scenarios: list[Scenario], max_turns: int = 6, max_parse_errors: int = 3
) -> ShardOutput:
    shard = ShardSpec(
        shard_id="endpoint-test",
        model=model,
        suite=ref,
        setting=PRESET_SETTINGS["clean"],
        agent=AgentConfig(max_turns=max_turns, max_parse_errors=max_parse_errors),
        episodes=[EpisodePlan(episode_id=f"ep-{s.id}", scenario_id=s.id, seed=0) for s in scenarios],
    )
    output = run_shard(shard)
    assert [r.scenario_id for r in output.results] == [s.id for s in scenarios]
    return output


def task_of(request: dict[str, Any]) -> str:
    return request["messages"][1]["content"]


def direct_call(scenario: Scenario) -> tuple[str, dict[str, Any]]:
    """The primary gold plan of a smoke scenario: one call with literal arguments."""
    (call,) = scenario.gold.plans[0]
    return call.tool, dict(call.arguments)


def gold_model(scenarios: list[Scenario]) -> Callable[[dict[str, Any]], Reply]:
    """A scripted model that solves smoke scenarios: turn 1 calls the direct tool and the backup plan's lookup tool
    in parallel, turn 2 answers with the direct tool's result as read from the tool message."""
    by_task = {s.task: s for s in scenarios}

    def reply(request: dict[str, Any]) -> Reply:
        scenario = by_task[task_of(request)]
        if not any(m["role"] == "tool" for m in request["messages"]):
            lookup = scenario.gold.plans[1][0]
            ids = [f"{scenario.id}-direct", f"{scenario.id}-lookup"]
            return tool_calls(direct_call(scenario), (lookup.tool, dict(lookup.arguments)), ids=ids, usage=(100, 10))
        result = next(m["content"] for m in request["messages"] if m.get("tool_call_id") == f"{scenario.id}-direct")
        return answer(f"Here are the records:\n```json\n{result}\n```", usage=(150, 20))

    return reply


# ---------------------------------------------------------------------------------------------------------------
# 1. A model that solves the task


def test_native_tool_calls_solve_the_task(smoke: Suite, smoke_ref: SuiteRef, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNDERTOW_TEST_KEY", "sk-scripted")
    scenarios = [smoke.scenarios[0], smoke.scenarios[-1]]
    with scripted_server(gold_model(scenarios)) as server:
        model = endpoint(server.base_url, api_key_env="UNDERTOW_TEST_KEY", concurrency=2)
        output = run_episodes(smoke_ref, model, scenarios)

    for scenario, result, trajectory in zip(scenarios, output.results, output.trajectories, strict=True):
        assert (result.outcome, result.solved, result.correct, result.score) == (Outcome.scored, True, True, 1.0)
        assert (result.n_turns, result.n_tool_calls, result.n_tool_errors, result.error) == (2, 2, 0, None)
        assert (result.prompt_tokens, result.completion_tokens) == (100 + 150, 10 + 20)
        assert [t.finish_reason for t in trajectory.turns] == ["tool_calls", "stop"]
        assert [s.observation.ok for s in trajectory.tool_steps()] == [True, True]

        first, second = [r for r in server.chat_requests if task_of(r) == scenario.task]
        for request in (first, second):
            assert request["model"] == "scripted"
            assert (request["temperature"], request["max_tokens"]) == (0.0, 1024)
            # the scenario's tools, in the order the episode lists them (shuffled per scenario and seed)
            listed = smoke.environment(scenario, 0, PRESET_SETTINGS["clean"]).reset().tools
            assert request["tools"] == [spec.openai() for spec in listed]
            assert sorted(t["function"]["name"] for t in request["tools"]) == sorted(scenario.tools)
        assert [m["role"] for m in first["messages"]] == ["system", "user"]
        assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool", "tool"]
        assistant, direct, lookup = second["messages"][2:]
        sent = [(c["id"], c["function"]["name"]) for c in assistant["tool_calls"]]
        assert sent == [(f"{scenario.id}-direct", direct_call(scenario)[0]), (f"{scenario.id}-lookup", sent[1][1])]
        assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == direct_call(scenario)[1]
        assert [direct["tool_call_id"], lookup["tool_call_id"]] == [i for i, _ in sent]
        assert json.loads(direct["content"]) == scenario.gold.answer
    assert {e.headers.get("authorization") for e in server.exchanges} == {"Bearer sk-scripted"}


# ---------------------------------------------------------------------------------------------------------------
# 2. Tool-call arguments that are not JSON objects


@pytest.mark.parametrize("raw", ['{"city": "Berlin"', "city=Berlin", "[1, 2]"])
def test_malformed_arguments_on_every_turn_is_parse_error(smoke: Suite, smoke_ref: SuiteRef, raw: str) -> None:
    with scripted_server(lambda request: tool_calls(("projects_in_city", raw))) as server:
        output = run_episodes(smoke_ref, endpoint(server.base_url), smoke.scenarios[:1], max_turns=10)

    (result,), (trajectory,) = output.results, output.trajectories
    assert result.outcome == Outcome.parse_error
    assert result.error == "3 consecutive unparseable replies; last: tool arguments are not a JSON object"
    assert (server.hits(), result.n_turns, result.solved, result.score) == (3, 3, False, 0.0)
    assert [s.observation.error.type for s in trajectory.tool_steps()] == ["invalid_arguments"] * 3
    # The model saw its own raw arguments echoed back, and the environment's complaint as the tool result.
    last = server.chat_requests[-1]["messages"]
    assert last[-2]["tool_calls"][0]["function"]["arguments"] == raw
    assert last[-1]["role"] == "tool" and last[-1]["tool_call_id"] == last[-2]["tool_calls"][0]["id"]
    complaint = json.loads(last[-1]["content"])["error"]
    assert complaint["type"] == "invalid_arguments"
    assert complaint["message"].startswith("Arguments for projects_in_city are not a JSON object")


@pytest.mark.parametrize(("replies", "max_parse_errors"), [("bad good answer", 3), ("bad good bad answer", 2)])
def test_malformed_reply_then_recovery_is_scored(
    smoke: Suite, smoke_ref: SuiteRef, replies: str, max_parse_errors: int
) -> None:
    """A malformed reply costs a turn and shows the model an invalid_arguments error; a good call resets the count."""
    scenario = smoke.scenarios[0]
    name, arguments = direct_call(scenario)
    truncated = json.dumps(arguments)[:-1]
    make = {
        "bad": lambda: tool_calls((name, truncated)),
        "good": lambda: tool_calls((name, arguments)),
        "answer": lambda: answer(json.dumps(scenario.gold.answer)),
    }
    script = [make[word]() for word in replies.split()]
    with scripted_server(script) as server:
        output = run_episodes(smoke_ref, endpoint(server.base_url), [scenario], max_parse_errors=max_parse_errors)

    (result,), (trajectory,) = output.results, output.trajectories
    assert (result.outcome, result.solved, result.error) == (Outcome.scored, True, None)
    n_bad = replies.split().count("bad")
    assert (server.hits(), result.n_turns, result.n_tool_calls) == (len(script), len(script), len(script) - 1)
    assert result.n_tool_errors == n_bad
    bad, good = trajectory.tool_steps()[:2]
    assert bad.action.tool_call.unparsed_arguments == truncated and bad.action.tool_call.arguments == {}
    assert (bad.observation.ok, bad.observation.error.type) == (False, "invalid_arguments")
    assert good.observation.ok and good.observation.result == scenario.gold.answer
    tool_message = server.chat_requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "invalid_arguments" in tool_message["content"]


# ---------------------------------------------------------------------------------------------------------------
# 2b. Tool calls that arrive as text (the server's parser or chat template does not match the model)


def _text_call(family: str, name: str, arguments: dict[str, Any]) -> str:
    """How each model family writes one call when the server leaves it in the text."""
    args = json.dumps(arguments)
    return {
        "hermes": f'I will look it up.\n<tool_call>\n{{"name": "{name}", "arguments": {args}}}\n</tool_call>',
        "llama3_json": f'<|python_tag|>{{"name": "{name}", "parameters": {args}}}<|eom_id|>',
        "mistral": f'[TOOL_CALLS] [{{"name": "{name}", "arguments": {args}}}]',
        "mistral_args": f"[TOOL_CALLS]{name}[ARGS]{args}",
        "pythonic": f"[{name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})]",
        "deepseek_fenced": f'Calling the tool.\n```json\n{{"name": "{name}", "arguments": {args}}}\n```',
    }[family]


TEXT_FAMILIES = {
    "hermes": "tool_call_xml",
    "llama3_json": "json",
    "mistral": "json",
    "mistral_args": "mistral_args",
    "pythonic": "pythonic",
    "deepseek_fenced": "fenced_json",
}


@pytest.mark.parametrize(("family", "stage"), TEXT_FAMILIES.items(), ids=list(TEXT_FAMILIES))
def test_a_tool_call_written_as_text_is_run_not_scored_as_an_answer(
    smoke: Suite, smoke_ref: SuiteRef, family: str, stage: str
) -> None:
    scenario = smoke.scenarios[0]
    name, arguments = direct_call(scenario)
    script = [answer(_text_call(family, name, arguments)), answer(json.dumps(scenario.gold.answer))]
    with scripted_server(script) as server:
        output = run_episodes(smoke_ref, endpoint(server.base_url), [scenario])

    (result,), (trajectory,) = output.results, output.trajectories
    assert (result.outcome, result.solved, result.n_tool_calls, result.n_parse_failures) == (Outcome.scored, True, 1, 0)
    assert result.n_text_calls == 1  # the first turn's call came as text; the answer is no call
    assert [t.parse_stage for t in trajectory.turns] == [stage, None]
    (step,) = trajectory.tool_steps()
    assert (step.action.tool_call.name, step.action.tool_call.arguments) == (name, arguments)
    assert step.observation.ok and step.observation.result == scenario.gold.answer
    # the call goes back to the model as a structured call with its tool message, as a native one would
    assistant, tool = server.chat_requests[1]["messages"][2:]
    assert assistant["content"] is None and assistant["tool_calls"][0]["function"]["name"] == name
    assert tool == {"role": "tool", "tool_call_id": assistant["tool_calls"][0]["id"], "content": tool["content"]}
    assert json.loads(tool["content"]) == scenario.gold.answer
    row = summarize(output.results)[0]
    assert row.text_call_rate == 0.5 and row.parse_failure_rate == 0.0


def test_records_with_a_name_field_stay_an_answer(smoke: Suite, smoke_ref: SuiteRef) -> None:
    scenario = smoke.scenarios[0]
    records = json.dumps([{"name": "Sofia Schmidt", "salary": 52000}, {"name": "Lena Moreau", "salary": 52000}])
    with scripted_server([answer(records)]) as server:
        output = run_episodes(smoke_ref, endpoint(server.base_url), [scenario])
    (result,), (trajectory,) = output.results, output.trajectories
    assert (result.outcome, result.n_tool_calls, result.n_text_calls, result.n_parse_failures) == (
        Outcome.scored,
        0,
        0,
        0,
    )
    assert trajectory.final_answer == records and server.hits() == 1


def test_an_unreadable_text_call_is_fed_back_never_an_answer(smoke: Suite, smoke_ref: SuiteRef) -> None:
    scenario = smoke.scenarios[0]
    name, arguments = direct_call(scenario)
    broken = f'<tool_call>\n{{"name": "{name}", "arguments": {json.dumps(arguments)[:-1]}\n</tool_call>'
    script = [answer(broken), answer(_text_call("hermes", name, arguments)), answer(json.dumps(scenario.gold.answer))]
    with scripted_server(script) as server:
        output = run_episodes(smoke_ref, endpoint(server.base_url), [scenario])
    (result,), (trajectory,) = output.results, output.trajectories
    assert (result.outcome, result.solved, result.n_parse_failures, result.n_text_calls) == (Outcome.scored, True, 1, 1)
    assert trajectory.turns[0].parse_error.startswith("unreadable <tool_call> block")
    feedback = server.chat_requests[1]["messages"][-1]
    assert feedback["role"] == "user" and "could not be read: unreadable <tool_call> block" in feedback["content"]

    # a model that never manages: parse_error after max_parse_errors, not a wrong answer
    with scripted_server(lambda request: answer(broken)) as server:
        output = run_episodes(smoke_ref, endpoint(server.base_url), [scenario], max_parse_errors=2)
    (result,) = output.results
    assert result.outcome == Outcome.parse_error and server.hits() == 2
    assert result.error.startswith("2 consecutive unparseable replies; last: unreadable <tool_call> block")


# ---------------------------------------------------------------------------------------------------------------
# 3. Replies the model is responsible for


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (answer(None), "empty reply (no text, no tool call)"),
        (answer("  \n"), "empty reply (no text, no tool call)"),
        (answer("The projects in Berlin are Apollo and", finish_reason="length"), "reply truncated at the token limit"),
        (error(400, CONTEXT_OVERFLOW, code="context_length_exceeded"), "context overflow: Error code: 400"),
        (Reply(400, VLLM_OVERFLOW), "context overflow: Error code: 400"),
    ],
    ids=["no-content", "blank", "length", "context-overflow", "context-overflow-vllm-body"],
)
def test_unusable_replies_are_model_error(smoke: Suite, smoke_ref: SuiteRef, reply: Reply, message: str) -> None:
    with scripted_server([reply]) as server:
        output = run_episodes(smoke_ref, endpoint(server.base_url, max_retries=2), smoke.scenarios[:1])

    (result,) = output.results
    assert result.outcome == Outcome.model_error
    assert result.error.startswith(message)
    assert (result.solved, result.correct, result.score) == (False, False, 0.0)
    assert server.hits() == 1  # a 400 is final: the SDK does not retry it
    if reply.status == 400:
        assert "maximum context length is 4096 tokens" in result.error


def test_other_bad_request_is_infra_error(smoke: Suite, smoke_ref: SuiteRef) -> None:
    with scripted_server([error(400, "tools: unsupported value for tool_choice")]) as server:
        (result,) = run_episodes(smoke_ref, endpoint(server.base_url), smoke.scenarios[:1]).results
    assert result.outcome == Outcome.infra_error
    assert result.error.startswith("InfraError: endpoint rejected the request: Error code: 400")


# ---------------------------------------------------------------------------------------------------------------
# 4. Endpoint failures: infra_error, never a model failure


def test_http_503_is_retried_then_infra_error_excluded_from_accuracy(smoke: Suite, smoke_ref: SuiteRef) -> None:
    down, fine = smoke.scenarios[0], smoke.scenarios[-1]
    solve = gold_model([fine])

    def reply(request: dict[str, Any]) -> Reply:
        if task_of(request) == down.task:
            return error(503, "Service Unavailable: the model is loading")
        return solve(request)

    with scripted_server(reply) as server:
        model = endpoint(server.base_url, max_retries=2, timeout_s=2.0, concurrency=2)
        output = run_episodes(smoke_ref, model, [down, fine])

    failed, scored = output.results
    assert sum(task_of(r) == down.task for r in server.chat_requests) == 2 + 1  # max_retries + 1
    assert failed.outcome == Outcome.infra_error
    assert failed.error.startswith("InfraError: InternalServerError: Error code: 503")
    assert "the model is loading" in failed.error
    assert (failed.solved, failed.correct, failed.score, failed.n_turns) == (False, False, 0.0, 0)
    assert (scored.outcome, scored.solved) == (Outcome.scored, True)

    (row,) = summarize(output.results)
    assert (row.n, row.n_valid, row.accuracy, row.correct_rate) == (2, 1, 1.0, 1.0)
    assert row.outcomes == {**{o.value: 0 for o in Outcome}, "scored": 1, "infra_error": 1}


def test_http_401_is_infra_error(smoke: Suite, smoke_ref: SuiteRef) -> None:
    with scripted_server([error(401, "Invalid API key", code="invalid_api_key")]) as server:
        output = run_episodes(smoke_ref, endpoint(server.base_url, max_retries=2), smoke.scenarios[:1])
    (result,) = output.results
    assert result.outcome == Outcome.infra_error
    assert result.error.startswith("InfraError: AuthenticationError: Error code: 401")
    assert "Invalid API key" in result.error
    assert server.hits() == 1

    (row,) = summarize(output.results)
    assert (row.n, row.n_valid, row.accuracy, row.correct_rate) == (1, 0, None, None)


def test_connection_refused_is_infra_error(smoke: Suite, smoke_ref: SuiteRef) -> None:
    model = endpoint(f"http://127.0.0.1:{closed_port()}/v1", max_retries=1, timeout_s=2.0)
    output = run_episodes(smoke_ref, model, smoke.scenarios[:2])
    assert [r.outcome for r in output.results] == [Outcome.infra_error] * 2
    assert all(r.error.startswith("InfraError: APIConnectionError: Connection error") for r in output.results)
    assert all(r.n_turns == 0 and not r.solved for r in output.results)

    (row,) = summarize(output.results)
    assert (row.n, row.n_valid, row.accuracy, row.outcomes["infra_error"]) == (2, 0, None, 2)


def test_endpoint_timeout_is_retried_then_infra_error(smoke: Suite, smoke_ref: SuiteRef) -> None:
    slow = dataclasses.replace(answer("[]"), delay_s=1.0)
    with scripted_server(lambda request: slow) as server:
        model = endpoint(server.base_url, max_retries=1, timeout_s=0.3)
        (result,) = run_episodes(smoke_ref, model, smoke.scenarios[:1]).results
        assert server.hits() == 2
    assert result.outcome == Outcome.infra_error
    assert result.error.startswith("InfraError: APITimeoutError: Request timed out")


# ---------------------------------------------------------------------------------------------------------------
# 5. A model that never answers


def test_model_that_never_answers_exhausts_the_budget(smoke: Suite, smoke_ref: SuiteRef) -> None:
    scenario = smoke.scenarios[0]
    with scripted_server(lambda request: tool_calls(direct_call(scenario))) as server:
        output = run_episodes(smoke_ref, endpoint(server.base_url), [scenario], max_turns=4)

    (result,), (trajectory,) = output.results, output.trajectories
    assert result.outcome == Outcome.budget_exhausted
    assert result.error == "no answer after 4 turns"
    assert (server.hits(), result.n_turns, result.n_tool_calls, result.n_tool_errors) == (4, 4, 4, 0)
    assert (result.solved, result.score, trajectory.final_answer) == (False, 0.0, None)
    assert [m["role"] for m in server.chat_requests[-1]["messages"]] == ["system", "user"] + ["assistant", "tool"] * 3


# ---------------------------------------------------------------------------------------------------------------
# 6. Probing an endpoint before a run


def test_probe_endpoint() -> None:
    with scripted_server([]) as server:
        assert asyncio.run(probe_endpoint(endpoint(server.base_url))) is None
        assert [(e.method, e.path) for e in server.exchanges] == [("GET", "/v1/models")]

    with scripted_server([], models=error(401, "Invalid API key")) as server:
        reason = asyncio.run(probe_endpoint(endpoint(server.base_url)))
        assert reason == f"{server.base_url} answered HTTP 401: Invalid API key"

    with scripted_server([], models=error(404, "Not Found")) as server:  # no /models route: still reachable
        assert asyncio.run(probe_endpoint(endpoint(server.base_url))) is None

    url = f"http://127.0.0.1:{closed_port()}/v1"
    reason = asyncio.run(probe_endpoint(endpoint(url, timeout_s=2.0)))
    assert reason is not None and reason.startswith(f"{url} unreachable after ")
    assert "Connection error" in reason


# ---------------------------------------------------------------------------------------------------------------
# 7. The CLI with an unreachable endpoint


@pytest.mark.slow
def test_cli_records_unreachable_endpoint_as_infra_error(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    store = tmp_path / "store"
    config = {
        "name": "endpoints",
        "models": ["oracle", {"name": "ghost", "kind": "openai", "base_url": url, "max_retries": 0, "timeout_s": 2}],
        "suites": ["smoke"],
        "settings": ["clean"],
        "seeds": [0],
        "run": {"store": str(store)},
    }
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(config))
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}

    run = subprocess.run(
        [str(UNDERTOW), "run", "cfg.yaml"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=90
    )
    output = " ".join((run.stdout + run.stderr).split())  # rich wraps long lines
    assert run.returncode == 0, output
    assert f"model 'ghost': {url} unreachable after" in output
    assert "its episodes are recorded as infra_error" in output

    (run_dir,) = [p for p in store.iterdir() if p.is_dir()]
    report = subprocess.run(
        [str(UNDERTOW), "report", run_dir.name, "--format", "json", "--store", str(store)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert report.returncode == 0, report.stderr
    rows = {row["model"]: row for row in json.loads(report.stdout)["rows"]}
    assert set(rows) == {"oracle", "ghost"}
    ghost, oracle = rows["ghost"], rows["oracle"]
    assert (ghost["n"], ghost["n_valid"], ghost["accuracy"]) == (35, 0, None)
    assert ghost["outcomes"] == {**{o.value: 0 for o in Outcome}, "infra_error": 35}
    assert (oracle["n"], oracle["n_valid"], oracle["accuracy"]) == (35, 35, 1.0)
    assert oracle["outcomes"]["scored"] == 35
    ghost_rows = [r for r in RunStore(run_dir).results() if r.model == "ghost"]
    assert len(ghost_rows) == 35 and all(r.n_turns == 0 for r in ghost_rows)
    assert {r.error.split(" unreachable after")[0] for r in ghost_rows} == {f"endpoint unreachable: {url}"}
