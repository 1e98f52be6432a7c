"""The paper's protocol settings on a real sqlfuncs suite (built from ../shared/data/spider-dev): the impossible
condition with only distractors, question hints, the closed-world tool list (always shuffled, or filled to a fixed
number of functions) and how answers are matched, through the episode runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.endpoint import answer, scripted_server
from helpers.paths import SPIDER_DEV
from helpers.runs import policy_results
from pydantic import ValidationError

from undertow.cluster.config import SweepConfig
from undertow.cluster.plan import plan_sweep
from undertow.env_core.errors import ConfigError
from undertow.env_core.faults import HINT_PREFIX, PRESET_SETTINGS, expects_give_up, posed, resolve_faults
from undertow.env_core.model import Action, Scenario, ToolCall
from undertow.env_core.search import GET_INFO, SEARCH_TOOLS, ToolAccess, tool_document
from undertow.env_core.sqlfuncs.build import build_suite, write_build
from undertow.env_core.suites import Suite, copy_suite, load_ref, load_suite, suite_ref
from undertow.workers.agent import AgentConfig
from undertow.workers.clients import EndpointModel
from undertow.workers.runner import EpisodePlan, ShardSpec, run_shard


@pytest.fixture(scope="module")
def dev_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not SPIDER_DEV.is_dir():
        pytest.fail(f"{SPIDER_DEV} is missing: the tests need ../shared beside the repository")
    return write_build(build_suite(SPIDER_DEV, seed=0, augment=1), tmp_path_factory.mktemp("dev") / "suite")


@pytest.fixture(scope="module")
def dev(dev_folder: Path) -> Suite:
    return load_suite(dev_folder)


def with_hints(suite: Suite, every: int, folder: Path) -> Path:
    """A copy of the suite where every ``every``-th scenario has a hint of our own and the others none (0: none
    has one)."""
    scenarios = [
        s.model_copy(update={"hint": f"Look in the tables behind question {i}." if every and i % every == 0 else None})
        for i, s in enumerate(suite.scenarios)
    ]
    return copy_suite(Suite(suite.name, suite.family, suite.version, suite.toolbox, scenarios), folder)


@pytest.fixture(scope="module")
def hinted_folder(dev: Suite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return with_hints(dev, 2, tmp_path_factory.mktemp("hinted") / "suite")


@pytest.fixture(scope="module")
def bare_folder(dev: Suite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return with_hints(dev, 0, tmp_path_factory.mktemp("bare") / "suite")


def listed(suite: Suite, scenario: Scenario, setting: str, access: ToolAccess) -> list[str]:
    env = suite.environment(scenario, 0, PRESET_SETTINGS[setting], access)
    return [spec.name for spec in env.reset().tools]


def call(name: str, arguments: dict, i: int = 0) -> Action:
    return Action(kind="tool_call", tool_call=ToolCall(id=f"c{i}", name=name, arguments=arguments))


# ---------------------------------------------------------------------------------------------------------------
# distractors_only: the solution tools are not there at all


def test_distractors_only_closed_world_lists_only_distractors_and_expects_give_up(dev: Suite) -> None:
    access = ToolAccess(distractors=24)
    for scenario in dev.scenarios:
        solution = set(scenario.gold.solution_tools())
        only = listed(dev, scenario, "distractors_only", access)
        assert not solution & set(only), scenario.id
        assert len(only) == 24 + len(set(scenario.tools) - solution)
        # the contrast: under impossible the same solution tools are listed, they only fail when called
        assert solution <= set(listed(dev, scenario, "impossible", access))
        for setting in ("distractors_only", "impossible"):
            assert expects_give_up(scenario, resolve_faults(scenario, PRESET_SETTINGS[setting])), (setting, scenario.id)
    # a removed tool called by name is unknown to the agent, and the call is recorded as the removal firing
    scenario = dev.scenarios[0]
    env = dev.environment(scenario, 0, PRESET_SETTINGS["distractors_only"], access)
    env.reset()
    planned = scenario.gold.plans[0][0]
    observation = env.step(call(planned.tool, dict(planned.arguments)))
    assert observation is not None and not observation.ok
    assert observation.error is not None and observation.error.type == "unknown_tool"
    assert observation.fault is not None and observation.fault.kind == "removed"


def test_distractors_only_with_a_function_count_lists_k_distractors(dev: Suite) -> None:
    universe = list(dev.toolbox.specs)
    setting = PRESET_SETTINGS["distractors_only"]
    for k in (3, 9):
        access = ToolAccess(functions=k)
        for scenario in dev.scenarios:
            removed = {t for f in resolve_faults(scenario, setting) if f.kind == "removed" for t in f.targets}
            assert removed == set(scenario.gold.solution_tools())
            shown = access.apply(scenario, universe, 0, removed).tools
            assert len(set(shown)) == k and not removed & set(shown), (k, scenario.id)
            assert access.apply(scenario, universe, 0, removed).tools == shown
            # what the episode lists: k tools, none of them a solution
            listed_now = [spec.name for spec in dev.environment(scenario, 0, setting, access).reset().tools]
            assert len(listed_now) == k and not removed & set(listed_now), (k, scenario.id)


def test_distractors_only_oracle_gives_up_and_is_scored_right(dev_folder: Path) -> None:
    ref = suite_ref({"path": str(dev_folder), "access": {"distractors": 8}, "limit": 6})
    results = policy_results(ref, "oracle", "distractors_only")
    assert results and all(r.expected_give_up and r.gave_up and r.correct and not r.solved for r in results)


def test_distractors_only_open_world_search_never_returns_a_solution_tool(dev: Suite) -> None:
    open_access = ToolAccess(mode="open", search="lexical")
    found_when_clean = 0
    for scenario in dev.scenarios:
        solution = scenario.gold.solution_tools()
        # the best queries there are: the task itself and each solution tool's own indexed text, name included
        queries = [scenario.task] + [tool_document(dev.toolbox.specs[t]) for t in solution]
        for setting in ("distractors_only", "clean"):
            env = dev.environment(scenario, 0, PRESET_SETTINGS[setting], open_access)
            start = env.reset()
            assert [t.name for t in start.tools] == [SEARCH_TOOLS, GET_INFO]
            returned: set[str] = set()
            for i, query in enumerate(queries):
                observation = env.step(call(SEARCH_TOOLS, {"query": query, "num_results": 9}, i))
                assert observation is not None and observation.ok, observation
                returned.update(hit["name"] for hit in observation.result)
            if setting == "distractors_only":
                assert not returned & set(solution), scenario.id
                info = env.step(call(GET_INFO, {"tool_name": solution[0]}, len(queries)))
                assert info is not None and info.error is not None and "No tool named" in info.error.message
                assert not set(solution) & {t.name for t in env.tools()}
            else:
                found_when_clean += set(solution) <= returned
    assert found_when_clean == len(dev.scenarios)  # the same queries do find them when they are there


# ---------------------------------------------------------------------------------------------------------------
# Hints (HoHW Table 4)


def test_hinted_settings_append_the_hint_and_leave_hintless_scenarios_alone(hinted_folder: Path) -> None:
    suite = load_suite(hinted_folder)
    with_hint = next(s for s in suite.scenarios if s.hint)
    without = next(s for s in suite.scenarios if not s.hint)
    for name in ("hinted", "hinted_first_tried"):
        setting = PRESET_SETTINGS[name]
        assert setting.hints
        assert posed(with_hint, setting).task == f"{with_hint.task}{HINT_PREFIX}{with_hint.hint}"
        assert posed(without, setting) is without
    assert posed(with_hint, PRESET_SETTINGS["first_tried"]).task == with_hint.task
    assert PRESET_SETTINGS["hinted"].faults == [] and not PRESET_SETTINGS["hinted"].scenario_faults
    assert PRESET_SETTINGS["hinted_first_tried"].faults == PRESET_SETTINGS["first_tried"].faults


def test_the_runner_asks_the_model_the_hinted_task(hinted_folder: Path) -> None:
    ref = suite_ref({"path": str(hinted_folder)})
    suite = load_ref(ref)
    with_hint = next(s for s in suite.scenarios if s.hint)
    without = next(s for s in suite.scenarios if not s.hint)
    asked = {}
    for scenario in (with_hint, without):
        for setting in ("hinted", "clean"):
            shard = ShardSpec(
                shard_id="h",
                model=EndpointModel(name="scripted", base_url="http://unused", max_retries=0),
                suite=ref,
                setting=PRESET_SETTINGS[setting],
                agent=AgentConfig(protocol="function_calling", max_turns=2),
                episodes=[EpisodePlan(episode_id="e", scenario_id=scenario.id, seed=0)],
            )
            with scripted_server([answer(json.dumps(scenario.gold.answer))]) as server:
                shard = shard.model_copy(update={"model": shard.model.model_copy(update={"base_url": server.base_url})})
                (result,) = run_shard(shard).results
            assert result.solved, result.error
            (user,) = [m for m in server.chat_requests[0]["messages"] if m["role"] == "user"]
            asked[scenario.id, setting] = user["content"]
    assert asked[with_hint.id, "hinted"] == f"{with_hint.task}{HINT_PREFIX}{with_hint.hint}"
    assert asked[with_hint.id, "clean"] == with_hint.task
    assert asked[without.id, "hinted"] == asked[without.id, "clean"] == without.task


def test_a_hinted_setting_on_a_suite_without_hints_is_a_plan_time_error(bare_folder: Path, hinted_folder: Path) -> None:
    config = SweepConfig.model_validate(
        {
            "models": ["oracle"],
            "suites": [
                {"path": str(hinted_folder), "alias": "with-hints"},
                {"path": str(bare_folder), "alias": "bare"},
            ],
            "settings": ["clean", "hinted_first_tried"],
        }
    )
    with pytest.raises(ConfigError) as caught:
        plan_sweep(config)
    assert caught.value.field == "settings[1].hints"
    assert "'hinted_first_tried'" in caught.value.message and "'bare'" in caught.value.message
    fine = config.model_copy(update={"suites": config.suites[:1]})
    assert {s.setting.name for s in plan_sweep(fine).shards} == {"clean", "hinted_first_tried"}


# ---------------------------------------------------------------------------------------------------------------
# The closed-world tool list


def test_closed_list_without_distractors_is_shuffled_deterministically(dev: Suite) -> None:
    access = ToolAccess()
    assert access.label == "closed+0"
    universe = list(dev.toolbox.specs)
    moved = reseeded = 0
    for scenario in dev.scenarios:
        shown = access.apply(scenario, universe, 0).tools
        assert sorted(shown) == sorted(scenario.tools)
        assert access.apply(scenario, universe, 0).tools == shown  # same (scenario, seed): same order
        moved += shown != scenario.tools
        reseeded += any(access.apply(scenario, universe, seed).tools != shown for seed in range(1, 6))
    assert moved > 0 and reseeded > 0


def test_functions_fills_the_list_to_exactly_k_with_every_own_tool(dev: Suite) -> None:
    universe = list(dev.toolbox.specs)
    access = ToolAccess(functions=9)
    assert access.label == "closed@9"
    for scenario in dev.scenarios:
        shown = listed(dev, scenario, "clean", access)
        assert len(shown) == len(set(shown)) == 9
        assert set(scenario.tools) <= set(shown)
        assert access.apply(scenario, universe, 0).tools == access.apply(scenario, universe, 0).tools
    # the same draw as that many distractors: closed@k is closed+(k - own) for each scenario
    scenario = next(s for s in dev.scenarios if len(s.tools) == 3)
    assert access.apply(scenario, universe, 3).tools == ToolAccess(distractors=6).apply(scenario, universe, 3).tools
    # fewer functions than the scenario has: its own tools only
    assert sorted(ToolAccess(functions=1).apply(scenario, universe, 0).tools) == sorted(scenario.tools)


def test_tool_access_refuses_functions_with_distractors_or_open_access() -> None:
    with pytest.raises(ValidationError, match=r"give either functions .* or distractors .*, not both"):
        ToolAccess(functions=9, distractors=3)
    with pytest.raises(ValidationError, match="functions: only for closed access"):
        ToolAccess(mode="open", functions=9)
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        ToolAccess(functions=0)
    assert ToolAccess(mode="open", search="bm25").label == "open-bm25"
    assert ToolAccess(distractors=24).label == "closed+24"


def test_suite_labels_and_sweep_config_carry_the_function_count(dev_folder: Path) -> None:
    ref = suite_ref({"path": str(dev_folder), "access": {"functions": 27}})
    assert ref.label == f"{ref.source_name()}:closed@27"
    with pytest.raises(ValidationError, match="functions: only for closed access"):
        suite_ref({"path": str(dev_folder), "access": {"mode": "open", "functions": 27}})


# ---------------------------------------------------------------------------------------------------------------
# Answer matching through the runner


@pytest.mark.parametrize("answers", ["lenient", "strict"])
def test_the_runner_records_how_answers_were_matched(dev_folder: Path, answers: str) -> None:
    ref = suite_ref({"path": str(dev_folder), "limit": 3, "answers": answers})
    results = policy_results(ref, "oracle", "clean")
    assert results and all(r.answers == answers and r.solved for r in results)
