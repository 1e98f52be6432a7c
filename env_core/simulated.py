"""What stands in for the world outside the agent: the person of Ask-and-Help and tools that cannot be reached.

**The person** (FAIL-TaLMs §5.1, Ask-and-Help). Scripted (:func:`human_reply`): it gives the value the request left
out (``metadata["masked"]``, set when a setting masks it) to a question about it; asked by name to do the work of a
removed tool that a person can stand in for (``Scenario.replaceable``), it does it by hand (:data:`STAND_IN_REPLY`,
the result the tool gives for the request); anything else it declines. Played
by a model (:func:`person_messages`): the model is told what the person meant in full — the masked value, or the
request as first written (``metadata["intended"]``, where an imported dataset ships it) — and which removed tools a
person can stand in for (``metadata["removed"]`` with ``Scenario.replaceable``), and answers as that person.

**Emulated tools.** A tool whose binding says ``emulated`` (an imported tool whose real API is out of reach) is
answered by a model reading the tool's documentation (:func:`emulation_messages`), and the reply is read back as
the tool's result (:func:`read_emulated`). The observation says it was emulated.

env_core never calls a model: the environment is handed a :data:`Helper` (``undertow.workers.clients.HelperClient``), a
function from a chat to the reply's text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from undertow.env_core.model import Scenario, ToolSpec
from undertow.env_core.text import strip_fence

Message = dict[str, str]
# a helper model, as the environment sees it: a chat in, the reply's text out (raises InfraError when it fails)
Helper = Callable[[list[Message]], str]

EMULATED = "emulated"  # the ToolSpec.binding key that marks a tool answered by the emulator
# binding keys that describe the real API, shown to the emulator with the documentation when a tool has them
API_KEYS = ("tool_name", "api_name", "method", "url", "template_response")

# What the simulated person says to anything but the value the request left out (Ask-and-Help, scripted).
HUMAN_DECLINES = "Sorry, I can't help with that."

# words too common to show what a question asks about
_COMMON = {w[:5] for w in ("the", "what", "which", "please", "could", "would", "provide", "tell", "value", "want")}


def _stems(text: str) -> set[str]:
    return {w[:5] for w in re.findall(r"[a-z]{3,}", text.casefold())} - _COMMON


def human_reply(scenario: Scenario, question: str, argument_description: str = "") -> str:
    """The scripted person of Ask-and-Help: the value the request left out (``metadata["masked"]``) when the
    question asks about it — it names the argument or a word of the argument's description — else a polite no."""
    masked = scenario.metadata.get("masked")
    if not isinstance(masked, dict):
        return HUMAN_DECLINES
    about = _stems(f"{masked['argument'].replace('_', ' ')} {argument_description}")
    if about & _stems(question):
        return str(masked.get("phrase") or masked["value"])
    return HUMAN_DECLINES


# What the scripted person says when it did a removed, human-replaceable tool's work by hand (its result as JSON)
STAND_IN_REPLY = "I worked it out by hand: {}"


def names_tool(question: str, tool: str) -> bool:
    """Whether a question asks for a tool's work by naming it (``convert_units`` or "convert units")."""
    words = [w for w in tool.casefold().replace("-", "_").split("_") if w]
    asked = question.casefold()
    return tool.casefold() in asked or (bool(words) and " ".join(words) in asked)


PERSON_SYSTEM = (
    "You play a person who asked an AI assistant for help. The assistant is now asking you a question. Stay in "
    "character: answer in one or two plain sentences, as that person would, using only what you know (below). If "
    "the question asks for something you do not know, or for something you cannot do, say so briefly. Never "
    "mention these instructions."
)


def person_knows(scenario: Scenario, removed: list[ToolSpec]) -> str:
    """What the model playing the person is told it knows: its request as the assistant got it, what it meant in
    full, and the removed tools whose work it can do by hand."""
    lines = [f"Your request to the assistant: {scenario.task}"]
    masked = scenario.metadata.get("masked")
    if isinstance(masked, dict):
        said = masked.get("phrase") or masked.get("value")
        lines.append(f"You left out a detail: the {str(masked['argument']).replace('_', ' ')} you mean is {said}.")
    intended = scenario.metadata.get("intended")
    if isinstance(intended, str) and intended != scenario.task:
        lines.append(f"What you meant, in full: {intended}")
    for spec in removed:
        if scenario.replaceable.get(spec.name) is True:
            lines.append(
                f"The assistant lacks the tool {spec.name} ({spec.description}); you can do its work by hand for "
                "a simple case, and answer as well as a careful person could."
            )
    return "\n".join(lines)


def person_messages(scenario: Scenario, question: str, removed: list[ToolSpec]) -> list[Message]:
    """The chat asking a model to answer ``question`` as the person of Ask-and-Help."""
    knows = person_knows(scenario, removed)
    return [
        {"role": "system", "content": PERSON_SYSTEM},
        {"role": "user", "content": f"{knows}\n\nThe assistant asks you: {question}\n\nYour answer:"},
    ]


EMULATOR_SYSTEM = (
    "You stand in for a web API that cannot be reached. Given its documentation and one call, reply with the "
    "response body the API would most plausibly return: JSON only, no prose, no code fences. Keep it short and "
    "internally consistent. If the call's arguments are invalid for the API, return a JSON error object such as "
    '{"error": "..."}.'
)


def emulation_messages(spec: ToolSpec, arguments: dict[str, Any]) -> list[Message]:
    """The chat asking a model for one emulated call's response, from the tool's documentation only."""
    doc: dict[str, Any] = {"name": spec.name, "description": spec.description, "parameters": spec.parameters}
    api = {key: spec.binding[key] for key in API_KEYS if spec.binding.get(key)}
    if api:
        doc["api"] = api
    call = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    documentation = json.dumps(doc, ensure_ascii=False, sort_keys=True)
    return [
        {"role": "system", "content": EMULATOR_SYSTEM},
        {"role": "user", "content": f"API documentation:\n{documentation}\n\nCall arguments:\n{call}\n\nResponse:"},
    ]


def read_emulated(reply: str) -> Any:
    """An emulator's reply as the tool's result: its JSON (code fences removed) when it parses, else the text."""
    text = strip_fence(reply.strip())
    try:
        return json.loads(text)
    except ValueError:
        return text
