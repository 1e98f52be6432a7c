"""What the model reads in each mode of the shipped ``configs/middleware.yaml``: the family's own prompts (FUXI's
structure, appendix C), never the generic agent's. Each mode's first request, as a scripted OpenAI-compatible
endpoint receives it through the real runner and agent loop, is checked against the preset's text file with its
slots filled by hand (the tools listed, the budget, the demonstration) and the tools' JSON schemas after it; the
knowledge-base demonstration is replayed on a ferries knowledge base written here, each step parsed as the ReAct
loop parses replies and each observation compared with what the tools return; the options that would run a task
under the wrong prompt are refused with their field named; and the oracle still solves every task of every shipped
suite."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers.endpoint import answer, scripted_server
from helpers.paths import CONFIGS
from helpers.paths import SPIDER_DEV as SPIDER
from helpers.runs import scripted_episode
from helpers.shipped import shipped_suite

import undertow.env_core.middleware as middleware_package
from undertow.cluster.config import load_config
from undertow.cluster.plan import plan_sweep
from undertow.env_core.environment import Environment
from undertow.env_core.errors import ConfigError
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.middleware.build import MiddlewareSuite
from undertow.env_core.middleware.database import DATABASE_TOOLS
from undertow.env_core.middleware.kb import KB_TOOLS, KBToolBox, load_tsv
from undertow.env_core.model import Action, Gold, Outcome, Scenario, ToolCall
from undertow.env_core.suites import Suite, suite_ref
from undertow.workers.agent import AgentConfig
from undertow.workers.clients import PolicyModel
from undertow.workers.parsers import parse_react
from undertow.workers.prompts import (
    ADVICE_SENTENCE,
    GIVE_UP_MARKER,
    GIVE_UP_SENTENCE,
    REACT_ADVICE_SENTENCE,
    REACT_GIVE_UP_SENTENCE,
    REACT_PROMPT,
)
from undertow.workers.runner import EpisodePlan, ShardSpec, run_shard

SHIPPED = load_config(CONFIGS / "middleware.yaml")
PROMPTS = Path(middleware_package.__file__).parent / "data" / "prompts"
BUDGET = "15"  # FUXI's "at most 15 actions" (Figure C.2), the shipped suites' step budget

# what the generic agent would say: none of it may reach the model
GENERIC = (
    GIVE_UP_MARKER,
    GIVE_UP_SENTENCE,
    ADVICE_SENTENCE.strip(),
    REACT_ADVICE_SENTENCE.strip(),
    REACT_GIVE_UP_SENTENCE,
    REACT_PROMPT.split("\n")[0],
    "as JSON",
    "Tools can fail",
)

# the tools as the prompts list them, written out by hand from appendix A's order (navigational, then clauses)
DATABASE_LIST = """1. find_columns_containing_value(value)
2. find_columns_containing_value_fuzzy(value)
3. get_distinct_values(table, column)
4. is_value_in_column(table, column, value)
5. get_date_format(table, column)
6. search_by_SQL(query)"""
CLAUSE_LIST = """7. from(from_statement)
8. where(where_statement)
9. select(select_statement)
10. group_by(group_by_statement)
11. having(having_statement)
12. order_by(order_by_statement)"""
KB_LIST = """1. get_relations(variable)
2. get_neighbors(variable, relation)
3. intersection(variable1, variable2)
4. get_attributes(variable)
5. argmax(variable, attribute)
6. argmin(variable, attribute)
7. count(variable)"""


def preset_file(preset: str, part: str) -> str:
    """A preset part as its file holds it (the file's last newline is not part of the text)."""
    return (PROMPTS / preset / f"{part}.txt").read_text(encoding="utf-8").removesuffix("\n")


def mode_of(suite: MiddlewareSuite) -> str:
    return f"{suite.environment}-{suite.mode}" if suite.tools else f"{suite.environment}-no-tools"


def loaded(shipped: MiddlewareSuite) -> Suite:
    """The suite, built once per test session (a lock keeps parallel workers from building it twice)."""
    return shipped_suite(shipped.model_dump(mode="json"))


def shipped_suites() -> list[MiddlewareSuite]:
    found = [s for s in SHIPPED.suites if isinstance(s, MiddlewareSuite)]
    assert len(found) == len(SHIPPED.suites) == 4
    return found


def test_the_shipped_config_runs_each_environment_in_a_suite_of_its_own() -> None:
    assert sorted(mode_of(s) for s in shipped_suites()) == [
        "database-no-tools",
        "database-react",
        "kb-decoupled",
        "kb-react",
    ]


# ---------------------------------------------------------------------------------------------------------------
# The first request of each mode

# one reply that ends the episode in each mode (what it answers does not matter here)
ENDING = {
    "database-react": "Final Answer: SELECT 1",
    "kb-react": "Final Answer: #0",
    "kb-decoupled": "Final Answer: #0",
    "database-no-tools": "Final Answer: SELECT 1",
}


def first_request(shipped: MiddlewareSuite) -> tuple[Scenario, dict[str, Any]]:
    """One episode of the suite's first task under the shipped agent settings, the model a scripted endpoint that
    ends it at once: the task and the one request the model received."""
    scenario = sorted(loaded(shipped).scenarios, key=lambda s: s.id)[0]
    with scripted_server([answer(ENDING[mode_of(shipped)])]) as server:
        output = scripted_episode(shipped, server.base_url, scenario.id, **SHIPPED.agent.model_dump())
    assert output.results[0].outcome == Outcome.scored, output.results[0].error
    (request,) = server.chat_requests
    return scenario, request


def schema_lines(text: str, tools: list[str]) -> None:
    """``text`` is each of the task's tools as its JSON schema (name, description, parameters), one per line (in
    the order the episode shows its tools)."""
    specs = {spec.name: spec for spec in (*DATABASE_TOOLS, *KB_TOOLS)}
    listed = [json.loads(line) for line in text.split("\n")]
    assert sorted(tool["name"] for tool in listed) == sorted(tools) and len(listed) == len(tools)
    for tool in listed:
        spec = specs[tool["name"]]
        assert (tool["description"], tool["parameters"]) == (spec.description, spec.parameters)


@pytest.mark.parametrize("shipped", shipped_suites(), ids=mode_of)
def test_the_model_receives_the_modes_preset_and_nothing_generic(shipped: MiddlewareSuite) -> None:
    mode = mode_of(shipped)
    scenario, request = first_request(shipped)
    system, user = request["messages"][0], request["messages"][1]
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert user["content"] == scenario.task and not request.get("tools")
    assert scenario.metadata["environment"] == shipped.environment
    prompt = system["content"]
    if mode == "database-react":
        preset = preset_file("database_react", "instructions")
        preset = preset.replace("{navigational}", DATABASE_LIST).replace("{clauses}", CLAUSE_LIST)
        preset = preset.replace("{budget}", BUDGET) + "\n"
        assert prompt.startswith(preset)
        schema_lines(prompt[len(preset) :], scenario.tools)
        assert scenario.tools == [spec.name for spec in DATABASE_TOOLS]
        # the paper's demands: the clause functions are a MUST, the final SQL comes on one line
        assert "you MUST use the following six functions" in prompt
        assert "give your final SQL query right after 'Final Answer:', all of it on ONE line" in prompt
    elif mode == "kb-react":
        preset = preset_file("kb_react", "instructions").replace("{tools}", KB_LIST).replace("{budget}", BUDGET)
        preset = preset.replace("{demonstration}", preset_file("kb_react", "demonstration")) + "\n"
        assert prompt.startswith(preset)
        schema_lines(prompt[len(preset) :], scenario.tools)
        assert scenario.tools == [spec.name for spec in KB_TOOLS]
        assert "One demonstration, on another knowledge base:" in prompt and "Action: intersection" in prompt
        assert "reply with 'Final Answer: #id'" in prompt
    elif mode == "kb-decoupled":  # the family's decoupled main context: the tools one per line in its {tools} slot
        before, after = preset_file("protocol", "decoupled_prompt").split("{tools}")
        after = after.replace("{max_turns}", BUDGET)
        assert prompt.startswith(before) and prompt.endswith(after)
        lines = prompt[len(before) : len(prompt) - len(after)].split("\n")
        assert sorted(line.split("(")[0] for line in lines) == sorted(f"- {spec.name}" for spec in KB_TOOLS)
    else:  # the baseline: exactly the preset, and no tool anywhere
        assert prompt == preset_file("no_tools", "instructions")
        assert scenario.tools == []
        seen = f"{prompt}\n{user['content']}"
        for word in ("tool", "function", "Action", "Observation", "get_", "search_by_SQL", "argmax", "intersection"):
            assert word.lower() not in seen.lower(), word
        assert "Final Answer:" in prompt and "on ONE line" in prompt and "SQLite" in prompt
        assert "### SQLite tables of database" in user["content"]  # the schema is in the task
    for words in GENERIC:
        assert words not in prompt and words not in user["content"], words


# ---------------------------------------------------------------------------------------------------------------
# The knowledge-base demonstration, replayed

# A knowledge base with the facts the demonstration tells of: Gullwing Yard built four ferries, Tern Lines runs six,
# two of them both; those two call at three harbours. Relations are written both ways, as the family's conversion
# writes them.
FERRIES = [
    *(f"{f}\ttype\tferry" for f in ("Skua", "Petrel", "Gannet", "Fulmar", "Shag", "Puffin", "Eider", "Merlin")),
    *(f"{h}\ttype\tharbour" for h in ("Stornoway", "Ullapool", "Tarbert", "Oban")),
    "Gullwing Yard\ttype\tshipyard",
    "Tern Lines\ttype\toperator",
    "Kestrel Bay\ttype\ttown",
    "Gullwing Yard\tshipyard.located_in\tKestrel Bay",
    "Tern Lines\toperator.head_office\tKestrel Bay",
    *(f"Gullwing Yard\tshipyard.ferries_built\t{f}" for f in ("Skua", "Petrel", "Gannet", "Fulmar")),
    *(f"{f}\tferry.built_at\tGullwing Yard" for f in ("Skua", "Petrel", "Gannet", "Fulmar")),
    *(f"Tern Lines\toperator.ferries_run\t{f}" for f in ("Gannet", "Fulmar", "Shag", "Puffin", "Eider", "Merlin")),
    *(f"{f}\tferry.run_by\tTern Lines" for f in ("Gannet", "Fulmar", "Shag", "Puffin", "Eider", "Merlin")),
    "Gannet\tferry.calls_at\tStornoway",
    "Gannet\tferry.calls_at\tUllapool",
    "Fulmar\tferry.calls_at\tTarbert",
    "Skua\tferry.calls_at\tOban",
]


def test_the_kb_demonstration_is_written_as_the_react_loop_reads_it_and_replays_on_its_knowledge_base(
    tmp_path: Path,
) -> None:
    source = tmp_path / "ferries.tsv"
    source.write_text("\n".join(FERRIES) + "\n", encoding="utf-8")
    load_tsv(source, tmp_path / "ferries.kb")
    demonstration = preset_file("kb_react", "demonstration")
    question = re.search(r"^Question: (.+)$", demonstration, re.MULTILINE)
    entities = re.search(r"^Entities: \[(.+)\]$", demonstration, re.MULTILINE)
    assert question and entities
    scenario = Scenario(
        id="demo/ferries",
        family="middleware",
        task=question.group(1),
        tools=[spec.name for spec in KB_TOOLS],
        gold=Gold(),
        metadata={"environment": "kb", "kb": "ferries", "entities": entities.group(1).split(", ")},
    )
    env = Environment(scenario, KBToolBox(KB_TOOLS, {"ferries": tmp_path / "ferries.kb"}), seed=0)
    env.reset()
    steps = demonstration.split("\n\nThought: ")[1:]  # each step: its thought, its action, its observation
    assert len(steps) == 8
    called = []
    for step in steps[:-1]:
        reply, _, observed = step.partition("\nObservation: ")
        kind, call = parse_react(f"Thought: {reply}")  # what the model would write
        assert kind == "action" and isinstance(call, ToolCall) and call.unparsed_arguments is None, step
        observation = env.step(Action(kind="tool_call", tool_call=call))
        assert observation is not None and observation.ok, step
        assert observation.content() == observed, step  # the demonstration shows what the tools return
        called.append(call.name)
    assert called == ["get_relations", "get_neighbors"] * 2 + ["intersection", "get_relations", "get_neighbors"]
    assert parse_react(f"Thought: {steps[-1]}") == ("final", "#3")
    harbours = env.step(
        Action(kind="tool_call", tool_call=ToolCall(id="c", name="count", arguments={"variable": "#3"}))
    )
    assert harbours is not None and harbours.content() == "3"  # Gannet and Fulmar call at three harbours
    env.close()


# ---------------------------------------------------------------------------------------------------------------
# Options that would run tasks under the wrong prompt


def test_a_sweep_of_both_environments_in_one_suite_is_refused_naming_the_field(tmp_path: Path) -> None:
    config = tmp_path / "both.yaml"
    config.write_text(
        f"name: both\nmodels: [oracle]\nsuites:\n  - {{family: middleware, spider: {SPIDER}, mode: react}}\n"
        "settings: [clean]\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as refused:
        plan_sweep(load_config(config))
    assert refused.value.field == "environment"
    assert refused.value.message == (
        "environment: all mixes database and knowledge-base tasks, which need different prompts; run one suite with "
        "environment: database and one with environment: kb"
    )


def test_decoupled_generation_on_database_tasks_is_refused() -> None:
    with pytest.raises(ValueError, match=r"mode: decoupled picks each action among those a knowledge base lists.*"
                       r"use it with environment: kb"):  # fmt: skip
        suite_ref({"family": "middleware", "spider": str(SPIDER), "environment": "database", "mode": "decoupled"})


def test_the_baseline_takes_no_mode() -> None:
    with pytest.raises(ValueError, match="mode: decoupled chooses actions, and tools: false offers none"):
        suite_ref(
            {
                "family": "middleware",
                "spider": str(SPIDER),
                "environment": "database",
                "tools": False,
                "mode": "decoupled",
            }
        )


# ---------------------------------------------------------------------------------------------------------------
# The oracle under the shipped prompts


@pytest.mark.parametrize("shipped", shipped_suites(), ids=mode_of)
def test_the_oracle_solves_every_task_of_each_shipped_suite(shipped: MiddlewareSuite) -> None:
    suite = loaded(shipped)
    shard = ShardSpec(
        shard_id=f"oracle-{mode_of(shipped)}",
        model=PolicyModel(name="oracle"),
        suite=shipped,
        setting=PRESET_SETTINGS["clean"],
        agent=AgentConfig.model_validate(SHIPPED.agent.model_dump()),
        episodes=[EpisodePlan(episode_id=f"{s.id}-0", scenario_id=s.id, seed=0) for s in suite.scenarios],
    )
    results = run_shard(shard).results
    assert len(results) == len(suite.scenarios) > 100
    assert {r.details["environment"] for r in results} == {shipped.environment}
    assert all(r.outcome == Outcome.scored and r.correct and r.details["valid"] for r in results)
    if not shipped.tools:
        assert all(r.n_tool_calls == 0 for r in results)
