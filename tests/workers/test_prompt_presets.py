"""A paper's prompts belong to its family: ``agent.prompt`` names a preset a registered family offers, the agent
renders it without knowing whose it is, and the texts of protocol features (the awareness question here) come from
the episode's family, part by part, or else from the family that has them."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from undertow.cluster.cli import app
from undertow.env_core import families
from undertow.env_core.errors import ConfigError
from undertow.env_core.faults import PRESET_SETTINGS
from undertow.env_core.model import Trajectory
from undertow.env_core.prompts import PROTOCOL_TEXTS, PromptPreset, presets
from undertow.env_core.search import ToolAccess
from undertow.env_core.suites import Suite
from undertow.workers.agent import AgentConfig, ask_awareness, codeact_preset_prompt
from undertow.workers.clients import ChatReply, ModelClient
from undertow.workers.policies import awareness_question, make_policy
from undertow.workers.prompts import preset_task, protocol_part

MINE = PromptPreset(
    name="mine",
    protocol="codeact",
    give_up_marker=True,
    parts={"intro": "Write Python.", "tools_closed": "Functions:", "task": "Do this: {task}"},
)
OPENING = "First, a question about the request below."


def definition(name: str) -> families.FamilyDefinition:
    family = families.get_family(name)
    assert isinstance(family, families.FamilyDefinition)
    return family


@pytest.fixture
def mine(monkeypatch: pytest.MonkeyPatch) -> str:
    """A family of the tests' own, registered for one test, offering the preset ``mine`` and its own awareness
    opening (every other awareness text it leaves to the family that has them)."""
    families.family_names()  # the built-in families first, so that they stay registered beside it
    protocol = PromptPreset(name=PROTOCOL_TEXTS, parts={"awareness_opening": OPENING})
    family = dataclasses.replace(definition("smoke"), name="mine_family", prompt_presets=presets(MINE, protocol))
    monkeypatch.setitem(families._families, family.name, family)
    return family.name


def test_agent_prompt_names_a_preset_some_family_offers() -> None:
    assert AgentConfig(prompt="hohw", protocol="codeact").preset is families.prompt_preset("hohw")
    assert AgentConfig(prompt="assistant").preset is families.prompt_preset("assistant")
    assert AgentConfig().preset is None and AgentConfig().advises and AgentConfig().offers_give_up
    with pytest.raises(ValueError, match=r"unknown prompt preset 'hohx'; did you mean 'hohw'\? \(known: .*default"):
        AgentConfig(prompt="hohx", protocol="codeact")
    # a family's protocol texts are no agent prompt
    with pytest.raises(ValueError, match=r"unknown prompt preset 'protocol'"):
        AgentConfig(prompt=PROTOCOL_TEXTS)


def test_a_bad_preset_name_in_a_sweep_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "sweep.yaml"
    sweep = {"name": "t", "models": ["oracle"], "suites": ["smoke"], "agent": {"prompt": "asistant"}}
    path.write_text(yaml.safe_dump({**sweep, "run": {"store": str(tmp_path / "runs")}}))
    result = CliRunner().invoke(app, ["validate", str(path)])
    output = " ".join(result.output.split())
    assert result.exit_code == 2 and "agent.prompt" in output and "did you mean 'assistant'?" in output


def test_a_third_party_preset_is_rendered_from_its_parts(mine: str, smoke: Suite) -> None:
    config = AgentConfig(prompt="mine", protocol="codeact")
    assert config.offers_give_up and not config.advises  # the preset's defaults
    env = smoke.environment(smoke.scenarios[0], 0, PRESET_SETTINGS["clean"], ToolAccess())
    tools = env.reset().tools
    prompt = codeact_preset_prompt(config, tools)
    head = "Write Python.\nIf the task cannot be completed with the tools available, reply with a message"
    assert prompt.startswith(head) and "\n\nFunctions:\n" in prompt and "---" not in prompt  # no worked examples
    assert prompt.endswith(json.dumps(tools[-1].openai(), ensure_ascii=False))
    assert preset_task(MINE, "sum {x}") == "Do this: sum {x}"
    with pytest.raises(ValueError, match=r"agent\.prompt mine is a CodeAct prompt, but agent\.protocol is 'react'"):
        AgentConfig(prompt="mine", protocol="react")


def test_a_preset_for_a_protocol_without_presets_and_a_name_two_families_offer_are_refused(
    mine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reacting = dataclasses.replace(MINE, name="reacting", protocol="react")
    react = dataclasses.replace(definition(mine), name="react_family", prompt_presets=presets(reacting))
    monkeypatch.setitem(families._families, react.name, react)
    with pytest.raises(ValueError, match=r"agent\.prompt reacting is written for protocol 'react', which takes no"):
        AgentConfig(prompt="reacting", protocol="codeact")
    twice = dataclasses.replace(definition(mine), name="zz_family")
    monkeypatch.setitem(families._families, twice.name, twice)
    with pytest.raises(ConfigError, match=r"prompt preset 'mine' is offered by two families: mine_family, zz_family"):
        families.prompt_preset("mine")


class Recording(ModelClient):
    """The built-in oracle, keeping every request it was sent."""

    def __init__(self, inner: ModelClient):
        self.inner = inner
        self.requests: list[list[dict[str, Any]]] = []

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        self.requests.append(messages)
        return await self.inner.complete(messages, tools)


def asked(smoke: Suite, family: str) -> list[dict[str, Any]]:
    """The awareness question an oracle is asked before an episode of a smoke scenario that ``family`` owns."""
    scenario = smoke.scenarios[0].model_copy(update={"family": family})
    env = smoke.environment(scenario, 0, PRESET_SETTINGS["perfect"])
    client = Recording(make_policy("oracle", scenario, 0))
    trajectory = Trajectory(episode_id="e", scenario_id=scenario.id, model="oracle", setting="perfect", seed=0)
    assert asyncio.run(ask_awareness(env, client, "info", trajectory))
    assert trajectory.awareness is not None and trajectory.awareness.answer == "yes"  # the oracle recognized it
    return client.requests[0]


def test_protocol_texts_come_from_the_episodes_family_part_by_part(mine: str, smoke: Suite) -> None:
    system = asked(smoke, mine)[0]["content"]
    body = protocol_part("awareness_system", None, what=protocol_part("awareness_what_info", None))
    assert system == f"{OPENING} {body}"  # its own opening, the rest from the family that has the texts
    assert awareness_question([{"content": system}])
    default = asked(smoke, "smoke")[0]["content"]  # a family without its own: the registered family's
    assert default.startswith(protocol_part("awareness_opening", None)) and not default.startswith(OPENING)
    assert protocol_part("awareness_opening", mine) == OPENING != protocol_part("awareness_opening", "smoke")
