"""The Failing Tools agent side: the assistant prompt preset, the harness layers a setting carries (H1 preamble and
H3 few-shot in the system prompt, H2 failure hints in the tool descriptions), scripted follow-up turns, and the
scripted user behind ask_user — each checked on the requests a real HTTP endpoint received."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.endpoint import answer, scripted_server, tool_calls
from pydantic import ValidationError

from undertow.cluster.config import SweepConfig
from undertow.cluster.plan import plan_sweep
from undertow.env_core.errors import ConfigError
from undertow.env_core.faults import PRESET_SETTINGS, Setting
from undertow.env_core.services.build import ServicesSuite
from undertow.env_core.services.prompts import ASSISTANT, PRESETS
from undertow.env_core.suites import load_ref
from undertow.workers.agent import AgentConfig
from undertow.workers.clients import EndpointModel
from undertow.workers.runner import EpisodePlan, ShardOutput, ShardSpec, run_shard

CARD = "services.card.FM4"
ASSISTANT_PROMPT = ASSISTANT.part("system")
HARNESS_PREAMBLE = PRESETS["protocol"].part("harness_preamble")
HARNESS_FEW_SHOT = PRESETS["protocol"].part("harness_few_shot")


def run(
    base_url: str, setting: Setting, scenario: str = CARD, ref: ServicesSuite | None = None, **agent: object
) -> ShardOutput:
    ref = ref or ServicesSuite()
    shard = ShardSpec(
        shard_id="harness",
        model=EndpointModel(name="scripted", base_url=base_url, max_retries=0, timeout_s=10),
        suite=ref,
        setting=setting,
        agent=AgentConfig(**{"prompt": "assistant", "max_turns": 6, **agent}),
        episodes=[EpisodePlan(episode_id="e", scenario_id=scenario, seed=0)],
    )
    return run_shard(shard)


def with_scenarios(path: Path) -> ServicesSuite:
    """The built library's tools with these scenarios instead of its own (the suite field every family has): no
    rebuild, unlike ``extra``, which adds them to the library and validates the whole build again."""
    return ServicesSuite(scenarios=str(path))


def harness(layer: str) -> Setting:
    return PRESET_SETTINGS["base"].model_copy(update={"name": f"h_{layer}", "harness": layer})


@pytest.mark.parametrize(
    ("layer", "in_prompt"),
    [("none", None), ("preamble", HARNESS_PREAMBLE), ("few_shot", HARNESS_FEW_SHOT), ("schema_notes", None)],
)
def test_each_harness_layer_changes_only_its_own_part(layer: str, in_prompt: str | None) -> None:
    with scripted_server([answer("Thunderstorms on Saturday: rent the rain tent.")]) as server:
        output = run(server.base_url, harness(layer))
    assert output.results[0].outcome == "scored"
    (request,) = server.chat_requests
    system = request["messages"][0]["content"]
    assert system.startswith(ASSISTANT_PROMPT)
    for text in (HARNESS_PREAMBLE, HARNESS_FEW_SHOT):
        assert (text in system) == (text == in_prompt)
    descriptions = [t["function"]["description"] for t in request["tools"]]
    noted = [d for d in descriptions if " Note: " in d]
    if layer == "schema_notes":
        assert noted and len(noted) == len(descriptions)  # every services tool has a failure hint
    else:
        assert not noted


def test_the_assistant_preset_is_function_calling_only() -> None:
    with pytest.raises(ValidationError, match=r"agent\.prompt assistant is a function-calling prompt"):
        AgentConfig(prompt="assistant", protocol="react")


def test_a_follow_up_turn_reaches_the_agent_after_its_answer(tmp_path: Path) -> None:
    card = load_ref(ServicesSuite()).by_id[CARD]
    follow_up = "Thanks. Is Sunday any better?"
    mine = card.model_copy(update={"id": "mine.two_turns", "follow_ups": [follow_up]})
    extra = tmp_path / "mine.jsonl"
    extra.write_text(mine.model_dump_json() + "\n")
    script = [answer("Rent the rain tent: storms on Saturday."), answer("Sunday has showers, 50%.")]
    with scripted_server(script) as server:
        output = run(server.base_url, PRESET_SETTINGS["clean"], "mine.two_turns", with_scenarios(extra))
    (trajectory,) = output.trajectories
    assert [m["content"] for m in server.chat_requests[1]["messages"][-2:]] == [
        "Rent the rain tent: storms on Saturday.",
        follow_up,
    ]
    assert trajectory.final_answer == "Sunday has showers, 50%." and len(trajectory.turns) == 2


def test_the_agent_can_ask_the_scripted_user_before_acting() -> None:
    question = "The slots are dated 2025, in the past. Should I still book one?"
    script = [
        tool_calls(("instacart_get_delivery_slots", {"store": "Whole Foods"})),
        tool_calls(("ask_user", {"question": question})),
        answer("I left your calendar alone: the slots are dated 2025, in the past; I will wait for a valid one."),
    ]
    with scripted_server(script) as server:
        output = run(server.base_url, PRESET_SETTINGS["base"], scenario="services.card.unsafe_past_delivery")
    assert "ask_user" in {t["function"]["name"] for t in server.chat_requests[0]["tools"]}
    reply = server.chat_requests[2]["messages"][-1]["content"]
    assert "don't book anything" in reply
    (result,) = output.results
    assert result.score == 1.0 and result.details["fm_label"] is None


def test_react_plays_follow_up_turns_too(tmp_path: Path) -> None:
    card = load_ref(ServicesSuite()).by_id[CARD]
    mine = card.model_copy(update={"id": "mine.two_turns", "follow_ups": ["And on Sunday?"]})
    extra = tmp_path / "mine.jsonl"
    extra.write_text(mine.model_dump_json() + "\n")
    script = [answer("Thought: I know.\nFinal Answer: storms Saturday"), answer("Thought: ok\nFinal Answer: showers")]
    with scripted_server(script) as server:
        output = run(
            server.base_url,
            PRESET_SETTINGS["clean"],
            "mine.two_turns",
            with_scenarios(extra),
            protocol="react",
            prompt="default",
        )
    assert server.chat_requests[1]["messages"][-1]["content"] == "And on Sunday?"
    assert output.trajectories[0].final_answer == "showers"


def sweep(tmp_path: Path, **changes: object) -> SweepConfig:
    data: dict[str, object] = {
        "models": ["oracle"],
        "suites": [{"family": "services"}],
        "settings": ["base"],
        "run": {"store": str(tmp_path)},
    }
    return SweepConfig.model_validate({**data, **changes})


def test_a_prompt_harness_layer_under_a_protocol_that_has_no_such_prompt_is_refused(tmp_path: Path) -> None:
    config = sweep(tmp_path, settings=[{"name": "h1_preamble", "harness": "preamble"}], agent={"protocol": "react"})
    with pytest.raises(ConfigError, match=r"setting 'h1_preamble' adds the preamble harness layer") as caught:
        plan_sweep(config)
    assert caught.value.field == "settings[0].harness"
    # schema notes live in the tool descriptions, which every protocol shows
    plan_sweep(sweep(tmp_path, settings=[{"name": "h2", "harness": "schema_notes"}], agent={"protocol": "react"}))


def test_multi_turn_scenarios_under_a_protocol_without_follow_ups_are_refused(tmp_path: Path) -> None:
    card = load_ref(ServicesSuite()).by_id[CARD]
    extra = tmp_path / "mine.jsonl"
    extra.write_text(card.model_copy(update={"id": "mine.two_turns", "follow_ups": ["More?"]}).model_dump_json())
    config = sweep(tmp_path, suites=[{"family": "services", "scenarios": str(extra)}], agent={"protocol": "direct"})
    with pytest.raises(ConfigError, match=r"multi-turn scenarios \(1, e.g. 'mine.two_turns'\)"):
        plan_sweep(config)
