"""The agent's prompts: the default ones, built from sentences so that ``failure_advice: false`` and
``give_up_marker: false`` can drop theirs, and how a family's prompts are rendered without naming the family.

A paper's prompts belong to the family that reproduces it (``undertow.env_core.prompts``): an agent preset
(``agent.prompt: NAME``) is rendered here from its generic parts (:func:`system_preset`, :func:`codeact_preset`,
:func:`preset_task`), and the texts of protocol features (the awareness question, decoupled generation's requests,
the error feedback, the prompt harness layers) are the ``protocol`` texts of the episode's family, or of the
registered family that has them (:func:`protocol_part`). ``undertow.workers.agent`` puts them together."""

from __future__ import annotations

import json

from undertow.env_core.families import protocol_text, protocol_texts
from undertow.env_core.model import ToolSpec

# one marker for models and the built-in policies alike
from undertow.env_core.plans import GIVE_UP_MARKER as GIVE_UP_MARKER
from undertow.env_core.prompts import PromptPreset, fill
from undertow.env_core.sandbox import python_name
from undertow.env_core.search import SEARCH_TOOLS

# The default prompts are built from sentences so that ``failure_advice: false`` and ``give_up_marker: false`` can
# drop theirs (``_trimmed``); with both unset each prompt is what it always was.
GIVE_UP_SENTENCE = (
    "If the task cannot be completed with the tools available, reply with a message that starts with "
    f"{GIVE_UP_MARKER}: and the reason."
)
ADVICE_SENTENCE = (
    "Tools can fail; read their errors and adapt: retry errors that say to retry, and look for another way when a "
    "tool is unavailable. "
)
SYSTEM_PROMPT = (
    f"You solve the user's task by calling the tools you are given. {ADVICE_SENTENCE}When you have the answer, reply "
    f"without a tool call and give the records the tools returned, as JSON. {GIVE_UP_SENTENCE}"
)

CODEACT_ADVICE_SENTENCE = (
    "Tools can fail: read the error and adapt, retry errors that say to retry, and look for another way when a "
    "function is unavailable. "
)
CODEACT_PROMPT = (
    "You solve the user's task with a Python environment in which tool functions are defined. Each turn, first "
    "think step by step inside <thought>...</thought>. Then either run code inside <execute>...</execute> and read "
    "its output in the next message, or, when you have the answer, assign it to a variable named `solution` inside "
    "<solution>...</solution> (for example <solution>solution = rows</solution>). Tools return lists of records "
    f"(JSON objects); print results to see them. {CODEACT_ADVICE_SENTENCE}Your solution should keep the values and "
    f"original keys the tools returned. {GIVE_UP_SENTENCE}\n\nAvailable functions:\n"
)

REACT_ADVICE_SENTENCE = "Tools can fail: read the errors and adapt. "
REACT_GIVE_UP_SENTENCE = (
    f"If the task cannot be completed with the tools available, write Final Answer: {GIVE_UP_MARKER}: and the reason."
)
REACT_PROMPT = (
    "Answer the user's question using the tools below. Use this format:\n"
    "Thought: what to do next\nAction: the tool's name\nAction Input: the arguments as a JSON object\n"
    "Then wait for the Observation. Repeat Thought/Action/Action Input as needed; when you know the answer, write\n"
    "Thought: I now know the final answer\nFinal Answer: the records the tools returned, as JSON.\n"
    f"{REACT_ADVICE_SENTENCE}{REACT_GIVE_UP_SENTENCE}\n\nTools (JSON schemas):\n"
)

DIRECT_GIVE_UP_SENTENCE = f"If the task cannot be done with these tools, reply {GIVE_UP_MARKER}: and the reason."
DIRECT_PROMPT = (
    "Answer the user's question with one sequence of tool calls. Reply with only a JSON list such as "
    '[{"name": "tool_a", "arguments": {"x": 1}, "label": "out1"}, {"name": "tool_b", "arguments": {"ids": '
    '"$out1.id$"}, "label": "out2"}]. Each call has a unique label; "$label.field$" passes the values of that field '
    "of an earlier call's result (one value if it returned one row, else a list). The result of the last call is "
    f"your answer. {DIRECT_GIVE_UP_SENTENCE}\n\n"
    "Tools (JSON schemas):\n"
)


# ---------------------------------------------------------------------------------------------------------------
# Rendering a family's agent preset (``undertow.env_core.prompts`` names the parts each protocol reads)


def system_preset(preset: PromptPreset, *, advises: bool, offers_give_up: bool) -> str:
    """A function-calling preset's system prompt: its ``system`` part, then the default prompt's advice and give-up
    sentences where they are on."""
    prompt = preset.part("system")
    if advises:
        prompt += " " + ADVICE_SENTENCE.strip()
    if offers_give_up:
        prompt += " " + GIVE_UP_SENTENCE
    return prompt


def codeact_preset(preset: PromptPreset, tools: list[ToolSpec], *, advises: bool, offers_give_up: bool) -> str:
    """A CodeAct preset's system prompt for an episode whose agent starts with ``tools``: the intro (with the
    preset's advice and the give-up sentence where they are on), the worked examples for listed functions, or for
    functions found by search when the agent starts with ``search_tools``, then the header and each function's full
    JSON definition, one per line (without the indentation that would double a long list's tokens)."""
    world = "search" if any(spec.name == SEARCH_TOOLS for spec in tools) else "closed"
    opening = [preset.part("intro")]
    if advises:
        opening.append(preset.part("advice"))
    if offers_give_up:
        opening.append(GIVE_UP_SENTENCE)
    prompt = "\n".join(opening) + "\n"
    if "examples_intro" in preset.parts:
        prompt += f"\n{preset.part('examples_intro')}\n"
    examples = preset.series(f"example_{world}")
    if examples:
        prompt += "".join(f"\n---\n{example}\n" for example in examples) + "\n---\n"
    definitions = "\n".join(
        f"{python_name(spec.name)} = {json.dumps(spec.openai(), ensure_ascii=False)}" for spec in tools
    )
    return f"{prompt}\n{preset.part(f'tools_{world}')}\n{definitions}"


def preset_task(preset: PromptPreset, task: str) -> str:
    """The first user message under a preset: its ``task`` template filled, or the task as it is."""
    return preset.part("task", task=task) if "task" in preset.parts else task


# ---------------------------------------------------------------------------------------------------------------
# The texts of protocol features, from the episode's family (``env_core.families.protocol_text``)

# the harness layers that are text in the system prompt (schema_notes annotates the tools instead)
HARNESS_PROMPT_LAYERS = ("preamble", "few_shot")


def protocol_part(part: str, family: str | None, **fields: str) -> str:
    """The protocol text ``part`` of ``family`` (the episode's), its template filled with ``fields``."""
    text = protocol_text(part, family)
    return fill(text, **fields) if fields else text


def opened(opening: str, body: str, family: str | None, **fields: str) -> str:
    """A request that starts with its ``opening`` part (how the built-in policies recognize it), then ``body``."""
    return f"{protocol_part(opening, family)} {protocol_part(body, family, **fields)}"


def opens_with(text: str, opening: str) -> bool:
    """Whether ``text`` starts with the ``opening`` part of any registered family's protocol texts."""
    return any(text.startswith(start) for start in protocol_texts(opening))


def harness_layer(layer: str, family: str | None) -> str | None:
    """The text a setting's harness layer adds to the system prompt, or None for a layer that adds none."""
    return protocol_part(f"harness_{layer}", family) if layer in HARNESS_PROMPT_LAYERS else None


def awareness_messages(kind: str, family: str | None, query: str, functions: str) -> list[dict[str, str]]:
    """The awareness question (``info`` or ``tool``) as a chat: the system message, then the question with the
    request and the tools (``functions``, as JSON)."""
    what = protocol_part(f"awareness_what_{kind}", family)
    question = protocol_part(f"awareness_question_{kind}", family)
    return [
        {"role": "system", "content": opened("awareness_opening", "awareness_system", family, what=what)},
        {
            "role": "user",
            "content": protocol_part("awareness_request", family, question=question, query=query, functions=functions),
        },
    ]
