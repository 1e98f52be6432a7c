"""Decoupled generation and error feedback (FUXI §3.2, Figure 2): the environment's valid actions, the thought /
choice loop with its lettered candidates, the built-in policies speaking it, and the retry prompt after a failed
action. On a real knowledge base: spider-dev's concert_singer converted to a KB, with questions derived from it."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import SPIDER_DEV as SPIDER

from undertow.env_core.environment import Environment
from undertow.env_core.middleware.convert import Question, database_to_kb, derive_questions
from undertow.env_core.middleware.kb import KB_TOOLS, KBToolBox, TripleStore, answer_entities, f1
from undertow.env_core.middleware.prompts import PRESETS
from undertow.env_core.model import Gold, Outcome, PlannedCall, Scenario, ToolSpec, Trajectory
from undertow.env_core.spider import read_spider
from undertow.env_core.tools import ToolBox
from undertow.workers.agent import PROTOCOLS, AgentConfig, choice_request, run_decoupled, run_react
from undertow.workers.clients import ChatReply, ModelClient
from undertow.workers.parsers import (
    choice_index,
    choice_label,
    parse_choice,
    parse_thought,
    read_candidates,
    render_action,
)
from undertow.workers.policies import DecoupledPolicy, ReActPolicy, decoupled_choice, make_policy
from undertow.workers.runner import POLICY_TRANSLATORS

KB = "concert_singer"
FUXI = PRESETS["protocol"]  # the family's texts of decoupled generation and error feedback
DECOUPLED_CHOICE_OPENING = FUXI.part("decoupled_choice_opening")
DECOUPLED_NO_ACTION = FUXI.part("decoupled_no_action")
DECOUPLED_NOT_CHOSEN = FUXI.part("decoupled_not_chosen")
ERROR_FEEDBACK = FUXI.part("error_feedback")
TOOL_NAMES = [spec.name for spec in KB_TOOLS]


@pytest.fixture(scope="module")
def kb_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (SPIDER / "tables.json").is_file():
        pytest.fail(f"spider-dev data not found at {SPIDER}")
    spider = read_spider(SPIDER)
    path = tmp_path_factory.mktemp("kbs") / f"{KB}.kb"
    database_to_kb(spider.databases[KB], spider.schemas[KB], path)
    return path


@pytest.fixture(scope="module")
def box(kb_path: Path) -> KBToolBox:
    return KBToolBox(KB_TOOLS, {KB: kb_path})


@pytest.fixture(scope="module")
def questions(kb_path: Path) -> list[Question]:
    store = TripleStore.open(kb_path)
    try:
        found = derive_questions(store, seed=0)
    finally:
        store.close()
    kinds = {q.kind for q in found}
    if not {"path", "count", "argmax", "argmin"} <= kinds:
        pytest.fail(f"the derived questions lack a kind: {sorted(kinds)}")
    return found


def kb_scenario(question: Question, n: int = 0, tools: list[str] | None = None) -> Scenario:
    """A derived question as a scenario: its gold actions as the one plan (variables as the literal "#0", "#1",
    …), and the answer to report: the variable that holds it, or a count's number."""
    plan = [PlannedCall(tool=tool, arguments=dict(arguments)) for tool, arguments in question.actions]
    report = question.answer_variable if question.answer_variable is not None else question.answer[0]
    return Scenario(
        id=f"kb/{n}",
        family="middleware",
        task=f"{question.text}\nEntities: [{question.entity}]",
        tools=tools or TOOL_NAMES,
        gold=Gold(answer=question.answer, plans=[plan], reports=[report]),
        metadata={"kb": KB, "entities": [question.entity]},
    )


def entity_scenario(entity: str, tools: list[str] | None = None) -> Scenario:
    return Scenario(
        id="kb/entity",
        family="middleware",
        task=f"Which concerts did {entity} sing in?\nEntities: [{entity}]",
        tools=tools or TOOL_NAMES,
        gold=Gold(),
        metadata={"kb": KB, "entities": [entity]},
    )


def answer_f1(env: Environment, question: Question, trajectory: Trajectory) -> float:
    """The episode's answer F1: the entities of the variable the final answer names, or a count's number."""
    answer = trajectory.final_answer or ""
    if question.answer_variable is None:
        return 1.0 if answer.strip() == question.answer[0] else 0.0
    labels = re.findall(r"#\d+", answer)
    if not labels:
        return 0.0
    return f1(answer_entities(env._state, labels[-1]), question.answer)


def order(env: Environment) -> dict[str, list[str]]:
    return {spec.name: list(spec.parameters.get("properties", {})) for spec in env.tools()}


class Scripted(ModelClient):
    """Replies from a script, keeping every request."""

    def __init__(self, replies: list[str]):
        self.replies = list(replies)
        self.requests: list[list[dict[str, Any]]] = []

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        self.requests.append([dict(m) for m in messages])
        if not self.replies:
            pytest.fail("the script ran out of replies")
        return ChatReply(content=self.replies.pop(0), finish_reason="stop")


class Spy(ModelClient):
    """Passes requests to ``inner``, keeping every one."""

    def __init__(self, inner: ModelClient):
        self.inner = inner
        self.requests: list[list[dict[str, Any]]] = []

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        self.requests.append([dict(m) for m in messages])
        return await self.inner.complete(messages, tools)


class Recording(ModelClient):
    """Passes requests to ``inner``, and checks each choice request against the environment's valid actions."""

    def __init__(self, inner: ModelClient, env: Environment):
        self.inner, self.env = inner, env
        self.choices = 0

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        if decoupled_choice(messages):
            self.choices += 1
            allowed = self.env.valid_actions()
            assert allowed is not None
            shape = order(self.env)
            expected = [(choice_label(i), render_action(n, a, shape[n])) for i, (n, a) in enumerate(allowed)]
            request = messages[-1]["content"]
            assert read_candidates(request) == expected
            assert request.endswith(f"Make a choice from {', '.join(label for label, _ in expected)}.")
        return await self.inner.complete(messages, tools)


def play(protocol: str, env: Environment, client: ModelClient, config: AgentConfig | None = None) -> Trajectory:
    config = config or AgentConfig(protocol=protocol, max_turns=20)  # type: ignore[arg-type]
    trajectory = Trajectory(episode_id="e", scenario_id=env.scenario.id, model="m", setting="clean", seed=0)
    return asyncio.run(PROTOCOLS[protocol](env, client, config, trajectory))


# ---------------------------------------------------------------------------------------------------------------
# The environment's valid actions


def test_the_environment_lists_the_valid_actions_of_the_shown_tools(box: KBToolBox):
    env = Environment(entity_scenario("Justin Brown"), box)
    with pytest.raises(RuntimeError, match="reset"):
        env.valid_actions()
    env.reset()
    assert env.valid_actions() == [("get_relations", {"variable": "Justin Brown"})]
    env.close()
    # only the tools shown: without get_relations there is nothing to start from
    narrow = Environment(entity_scenario("Justin Brown", tools=["get_neighbors", "count"]), box)
    narrow.reset()
    assert narrow.valid_actions() == []
    narrow.close()


class Echo(ToolBox):
    """A tool box that cannot list its actions (the default), and a subclass that lists forty."""

    def new_state(self) -> dict[str, int]:
        return {}

    def execute(self, state: Any, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        return {"n": arguments["n"]}


class ListedEcho(Echo):
    def valid_actions(self, state: Any) -> list[tuple[str, dict[str, Any]]]:
        return [("echo", {"n": n}) for n in range(40)]


ECHO = ToolSpec(
    name="echo",
    description="Echo a number.",
    parameters={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
)


def echo_scenario() -> Scenario:
    return Scenario(id="echo/1", family="toy", task="Echo 29.", tools=["echo"], gold=Gold())


def test_a_tool_box_that_cannot_list_its_actions_gives_none():
    env = Environment(echo_scenario(), Echo([ECHO]))
    env.reset()
    assert env.valid_actions() is None


# ---------------------------------------------------------------------------------------------------------------
# Labels and parsing


def test_labels_go_past_z():
    assert [choice_label(i) for i in (0, 1, 25, 26, 27, 51, 52, 701, 702)] == [
        "a",
        "b",
        "z",
        "aa",
        "ab",
        "az",
        "ba",
        "zz",
        "aaa",
    ]
    assert all(choice_index(choice_label(i)) == i for i in range(800))
    listed = choice_request("t", [f"echo({n})" for n in range(30)])[1]["content"]
    assert "\nz. echo(25)\naa. echo(26)\nab. echo(27)\nac. echo(28)\nad. echo(29)\n" in listed
    assert listed.endswith("y, z, aa, ab, ac, ad.")
    assert read_candidates(listed)[29] == ("ad", "echo(29)")


@pytest.mark.parametrize(
    ("reply", "count", "chosen"),
    [
        ("My choice: b", 3, 1),
        ("my CHOICE: B.", 3, 1),
        ("**My choice:** (c)", 3, 2),
        ("My choice is a", 2, 0),
        ("Make a choice from a, b, c.\nMy choice: c", 3, 2),
        ("The thought asks for the stadiums. My choice: ad", 30, 29),
        ("choice: aa", 27, 26),
    ],
)
def test_a_choice_is_read_from_the_first_label_after_choice(reply: str, count: int, chosen: int):
    assert parse_choice(reply, count) == (chosen, "")


@pytest.mark.parametrize(
    ("reply", "count", "why"),
    [
        ("I pick the second one.", 3, "expected 'My choice: ' and a label"),
        ("My choice: d", 3, "'d' is not the label of a candidate (the labels run a to c)"),
        ("My choice: aa", 26, "'aa' is not the label of a candidate (the labels run a to z)"),
        ("Among the choices, b fits", 3, "expected 'My choice: ' and a label"),  # "choices" is no "choice"
        ("My choice: none of them", 3, "'none' is not the label of a candidate (the labels run a to c)"),
    ],
)
def test_an_unreadable_choice_says_why(reply: str, count: int, why: str):
    assert parse_choice(reply, count) == (None, why)


def test_a_thought_is_read_without_the_action_the_model_wrote():
    assert parse_thought("Thought: look at #0\nAction: count(#0)\nObservation: 3") == ("thought", "look at #0")
    assert parse_thought("I look at #0") == ("thought", "I look at #0")
    assert parse_thought("Thought: #2 is it.\nFinal Answer: #2") == ("final", "#2")
    assert parse_thought("Thought: x\nAction: count(#0)\nFinal Answer: #0")[0] == "thought"
    assert parse_thought("Observation: made up")[0] == "error"


# ---------------------------------------------------------------------------------------------------------------
# The oracle under decoupled generation and under ReAct


def test_the_oracle_answers_derived_questions_under_decoupled_and_react(box: KBToolBox, questions: list[Question]):
    picked: list[Question] = []
    for kind in ("path", "count", "argmax", "argmin"):
        picked += [q for q in questions if q.kind == kind][:2]
    assert len(picked) == 8
    for n, question in enumerate(picked):
        scenario = kb_scenario(question, n)
        for protocol in ("decoupled", "react"):
            env = Environment(scenario, box)
            translator = POLICY_TRANSLATORS[protocol]
            client = translator(make_policy("oracle", scenario, 0), env.tools)
            recording = Recording(client, env)
            trajectory = play(protocol, env, recording)
            assert trajectory.outcome == Outcome.scored, (protocol, question.text, trajectory.error)
            assert answer_f1(env, question, trajectory) == 1.0, (protocol, question.text, trajectory.final_answer)
            calls = [(s.action.tool_call.name, s.action.tool_call.arguments) for s in trajectory.tool_steps()]
            assert calls == question.actions
            assert all(s.observation.ok for s in trajectory.tool_steps())
            stages = [t.parse_stage for t in trajectory.turns]
            if protocol == "decoupled":
                # each step: a thought, then its choice (a turn of the same step); then the answer
                assert recording.choices == len(question.actions)
                assert stages == ["decoupled_thought", "decoupled_choice"] * len(question.actions) + ["decoupled_final"]
                assert [t.index for t in trajectory.turns[:-1:2]] == [t.index for t in trajectory.turns[1::2]]
            else:
                assert recording.choices == 0 and stages == ["react_action"] * len(question.actions) + ["react_final"]
            env.close()
    assert POLICY_TRANSLATORS["decoupled"] is DecoupledPolicy and POLICY_TRANSLATORS["react"] is ReActPolicy


def test_the_main_context_carries_thought_action_and_observation(box: KBToolBox, questions: list[Question]):
    question = next(q for q in questions if q.kind == "path")
    scenario = kb_scenario(question)
    env = Environment(scenario, box)
    spy = Spy(DecoupledPolicy(make_policy("oracle", scenario, 0), env.tools))
    trajectory = play("decoupled", env, spy)
    assert trajectory.outcome == Outcome.scored
    main = [r for r in spy.requests if not decoupled_choice(r)]
    choices = [r for r in spy.requests if decoupled_choice(r)]
    system = main[0][0]["content"]
    assert "Final Answer: #3" in system and "- get_relations(variable: string): " in system
    assert "{tools}" not in system and "at most 20 steps" in system
    # a choice request is a fresh context: its own system prompt, then the thought and the candidates
    assert all(len(r) == 2 and r[0]["content"].startswith(DECOUPLED_CHOICE_OPENING) for r in choices)
    first_tool, first_arguments = question.actions[0]
    assert choices[0][1]["content"].startswith("Thought: I will call get_relations(")
    last = main[-1]
    shape = order(env)
    assert last[2] == {
        "role": "assistant",
        "content": f"Thought: I will call {render_action(first_tool, first_arguments, shape[first_tool])}.\n"
        f"Action: {render_action(first_tool, first_arguments, shape[first_tool])}",
    }
    assert last[3]["role"] == "user" and last[3]["content"].startswith('Observation: ["')
    env.close()


# ---------------------------------------------------------------------------------------------------------------
# Unreadable choices, no candidates, and the fallback where actions cannot be listed


def test_an_unreadable_choice_is_asked_again_then_counted_as_a_parse_failure(box: KBToolBox):
    script = [
        "Thought: I look at the relations of Justin Brown.",
        "I am not sure which one.",
        "My choice: c",  # one candidate only: out of range
        "Thought: The relations of Justin Brown, please.",
        "**My Choice:** A",
        "Thought: I cannot go on.\nFinal Answer: #0",
    ]
    env = Environment(entity_scenario("Justin Brown"), box)
    client = Scripted(script)
    trajectory = play("decoupled", env, client, AgentConfig(protocol="decoupled", max_turns=5))
    assert trajectory.outcome == Outcome.scored and trajectory.final_answer == "#0"
    assert [t.parse_stage for t in trajectory.turns] == [
        "decoupled_thought",
        "decoupled_choice",
        "decoupled_choice",
        "decoupled_thought",
        "decoupled_choice",
        "decoupled_final",
    ]
    assert [t.index for t in trajectory.turns] == [0, 0, 0, 1, 1, 2]
    errors = [t.parse_error for t in trajectory.turns]
    assert errors[1] == "expected 'My choice: ' and a label"
    assert errors[2] == "'c' is not the label of a candidate (the labels run a)"
    assert errors[0] is None and errors[3:] == [None, None, None]
    # the second ask carries the first reply and a reminder, in the same separate context
    again = client.requests[2]
    assert again[:2] == client.requests[1] and again[2]["content"] == "I am not sure which one."
    assert again[3]["content"].startswith('Reply with "My choice: " followed by one of the labels a')
    # the main context is told no action was chosen, and the next step goes on
    assert client.requests[3][-1]["content"] == f"Observation: {DECOUPLED_NOT_CHOSEN}"
    assert client.requests[3][-2]["content"] == "Thought: I look at the relations of Justin Brown."
    (step,) = trajectory.tool_steps()
    assert step.action.tool_call.name == "get_relations" and step.observation.ok
    env.close()

    env = Environment(entity_scenario("Justin Brown"), box)
    failing = Scripted(script[:3])
    config = AgentConfig(protocol="decoupled", max_turns=5, max_parse_errors=1)
    trajectory = play("decoupled", env, failing, config)
    assert trajectory.outcome == Outcome.parse_error and len(trajectory.turns) == 3
    assert trajectory.error == "1 consecutive unparseable replies; last: " + errors[2]
    assert trajectory.tool_steps() == []
    env.close()


def test_with_no_candidate_left_the_model_is_told_to_answer(box: KBToolBox):
    env = Environment(entity_scenario("Justin Brown", tools=["get_neighbors", "count"]), box)
    client = Scripted(["Thought: I need the relations of Justin Brown.", "Final Answer: #0"])
    trajectory = play("decoupled", env, client, AgentConfig(protocol="decoupled", max_turns=3))
    assert trajectory.outcome == Outcome.scored and len(trajectory.turns) == 2
    assert client.requests[1][-1]["content"] == f"Observation: {DECOUPLED_NO_ACTION}"
    assert "When no action is possible any more, you must give your Final Answer" in client.requests[0][0]["content"]
    env.close()


def test_letters_beyond_z_choose_the_right_candidate():
    env = Environment(echo_scenario(), ListedEcho([ECHO]))
    client = Scripted(["Thought: I echo 29.", "My choice: ad", "Final Answer: 29"])
    trajectory = play("decoupled", env, client, AgentConfig(protocol="decoupled", max_turns=3))
    assert trajectory.outcome == Outcome.scored
    (step,) = trajectory.tool_steps()
    assert step.action.tool_call.arguments == {"n": 29} and step.observation.result == {"n": 29}
    request = client.requests[1][1]["content"]
    assert "\nad. echo(29)\nae. echo(30)\n" in request and request.endswith(", am, an.")


def test_where_actions_cannot_be_listed_the_step_reads_a_react_action():
    env = Environment(echo_scenario(), Echo([ECHO]))
    script = [
        'Thought: I echo 29.\nAction: echo\nAction Input: {"n": 29}',
        "Thought: done\nFinal Answer: 29",
    ]
    client = Scripted(script)
    trajectory = play("decoupled", env, client, AgentConfig(protocol="decoupled", max_turns=3))
    assert trajectory.outcome == Outcome.scored and trajectory.final_answer == "29"
    assert [t.parse_stage for t in trajectory.turns] == ["react_action", "react_final"]
    assert "Action Input:" in client.requests[0][0]["content"]  # the ReAct prompt
    assert not any(decoupled_choice(r) for r in client.requests)
    assert client.requests[1][-1]["content"] == 'Observation: {"n": 29}'


# ---------------------------------------------------------------------------------------------------------------
# Error feedback


def test_error_feedback_follows_a_failed_react_action(box: KBToolBox):
    bad = (
        "Thought: follow the concerts.\nAction: get_neighbors\n"
        'Action Input: {"variable": "Justin Brown", "relation": "singer.singer_in_concert.concert"}'
    )
    good = 'Thought: relations first.\nAction: get_relations\nAction Input: {"variable": "Justin Brown"}'
    for feedback in (True, False):
        env = Environment(entity_scenario("Justin Brown"), box)
        client = Scripted([bad, good, "Final Answer: none"])
        config = AgentConfig(protocol="react", max_turns=4, error_feedback=feedback)
        trajectory = asyncio.run(
            run_react(env, client, config, Trajectory(episode_id="e", scenario_id="s", model="m", setting="c", seed=0))
        )
        assert trajectory.outcome == Outcome.scored
        failed, worked = client.requests[1][-1]["content"], client.requests[2][-1]["content"]
        assert failed.startswith('Observation: {"error": {"type": "tool_error", "message": "get_neighbors: call ')
        assert failed.endswith("\n" + ERROR_FEEDBACK) is feedback
        assert ERROR_FEEDBACK not in worked  # only after a failure
        env.close()
    assert AgentConfig().error_feedback is False  # the bare error by default, as Live API-Bench's ReAct reads it


def test_error_feedback_under_decoupled_generation(box: KBToolBox):
    # a listed action that fails all the same (the tool box's list and its tools disagree): the error comes back
    # with the retry prompt
    broken = ListedEcho([ECHO])
    broken.valid_actions = lambda state: [("echo", {"n": "x"})]  # type: ignore[method-assign]
    env = Environment(echo_scenario(), broken)
    client = Scripted(["Thought: echo", "My choice: a", "Final Answer: none"])
    trajectory = asyncio.run(
        run_decoupled(
            env,
            client,
            AgentConfig(protocol="decoupled", max_turns=3, error_feedback=True),
            Trajectory(episode_id="e", scenario_id="s", model="m", setting="c", seed=0),
        )
    )
    assert trajectory.outcome == Outcome.scored
    observation = client.requests[2][-1]["content"]
    assert '"type": "invalid_arguments"' in observation and observation.endswith("\n" + ERROR_FEEDBACK)
