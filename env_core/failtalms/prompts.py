"""The failtalms family's prompts, in our own wording of the paper's structure (the texts are in ``data/prompts/``):

- ``protocol``: FAIL-TaLMs' awareness questions (appendix C.2), asked before the agent acts under a setting with
  ``awareness``: weigh your own knowledge, the tools, or both; answer Yes, IDK or No first, then a short reason; No
  means the task is skipped. The system message opens with ``awareness_opening``, which is how the built-in policies
  recognize the question.
- ``failtalms`` (``agent.prompt: failtalms``, function calling): the agent protocol the authors ran. The model answers
  by calling ``Finish`` (``finish_tool``), is reminded to (``finish_reminder``) after a reply without a call, and under
  Ask-and-Help reaches the person through ``interact_with_human(requires_input, input_text)`` (``human_tool``, whose
  description warns that it is a last resort); a call whose ``requires_input`` is not set asks no one
  (``human_not_asked``). No advice about failures and no give-up marker: the paper's agent had neither.
"""

from __future__ import annotations

import json
from typing import Any

from undertow.env_core.content import data_dir
from undertow.env_core.prompts import PROMPTS, PROTOCOL_TEXTS, load_preset, presets

_FOLDER = data_dir(__file__) / PROMPTS

AGENT = load_preset(
    _FOLDER / "failtalms",
    protocol="function_calling",
    description="FAIL-TaLMs: function calling that answers through Finish, with the paper's interact_with_human",
)
PRESETS = presets(AGENT, load_preset(_FOLDER / PROTOCOL_TEXTS))

HUMAN_TOOL: str = json.loads(AGENT.part("human_tool"))["name"]  # the paper's Ask-and-Help tool
REQUIRES_INPUT = "requires_input"  # its argument that says whether the person is asked at all
_SET = {"1", "true"}


def requires_input(arguments: dict[str, Any]) -> bool:
    """Whether a call of the paper's Ask-and-Help tool asks the person, as the authors counted interactions:
    ``requires_input`` true, 1, "1" or "true" (any case); anything else asks no one."""
    value = arguments.get(REQUIRES_INPUT)
    if isinstance(value, bool):
        return value
    if isinstance(value, int | str):
        return str(value).strip().casefold() in _SET
    return False
