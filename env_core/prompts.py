"""Prompt presets: the prompts of a paper's protocol, owned by the family that reproduces the paper.

A family keeps them as text files, one per named part, in ``env_core/<family>/data/prompts/<preset>/<part>.txt``
(our own wording, following the paper's structure), and offers them through the door
(``Family.prompt_presets``, a name -> :class:`PromptPreset` mapping). The agent renders a preset from its parts
without knowing whose it is (``undertow.workers.prompts``), so the part names are generic:

- an agent preset, chosen with ``agent.prompt: NAME``, is written for one agent protocol (``protocol``) and says
  whether advice about failures and the give-up marker are in its prompt by default. A ``function_calling``
  preset has a ``system`` part (the system prompt); a ``codeact`` preset has ``intro``, ``advice``,
  ``examples_intro``, worked examples ``example_closed_1``, ``example_closed_2``, … (tools listed) and
  ``example_search_1``, … (tools found by search), the headers before the functions' definitions
  (``tools_closed``, ``tools_search``) and ``task`` (a template of the first user message, ``{task}``);
- the preset named :data:`PROTOCOL_TEXTS` holds the texts of protocol features that any suite's episode may use: the
  awareness question (``awareness_*``), decoupled generation's requests (``decoupled_*``), the error feedback
  (``error_feedback``) and the prompt harness layers (``harness_<layer>``). The agent takes them from the family of
  the episode's suite, or else from the registered family that has them
  (:func:`undertow.env_core.families.protocol_text`).

A part may be a template with named fields (``{task}``): :func:`fill` replaces those and nothing else, so the rest
of the text (JSON examples with their braces) is written as it reads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from undertow.env_core.content import read_prompt
from undertow.env_core.errors import ConfigError, DataError, did_you_mean

PROMPTS = "prompts"  # the folder of a family's data/ that holds its presets, one folder each
PROTOCOL_TEXTS = "protocol"  # the preset of a family's protocol-feature texts (never an agent.prompt)
PART_SUFFIX = ".txt"

_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def fill(template: str, **fields: str) -> str:
    """``template`` with each ``{name}`` of ``fields`` replaced by its value, in one pass (a value is never read
    again for fields); braces around anything else stay as they are."""
    return _FIELD.sub(lambda match: fields.get(match.group(1), match.group(0)), template)


@dataclass(frozen=True)
class PromptPreset:
    """One named set of prompt parts. ``protocol``: the agent protocol an agent preset is written for (None for
    :data:`PROTOCOL_TEXTS`); ``failure_advice`` / ``give_up_marker``: whether its prompt advises about failures
    and offers the give-up marker when the agent config leaves them unset."""

    name: str
    parts: Mapping[str, str]
    protocol: str | None = None
    failure_advice: bool = False
    give_up_marker: bool = False
    description: str = field(default="", compare=False)

    def part(self, name: str, **fields: str) -> str:
        """The part ``name`` (its template filled with ``fields``); a missing part is a config error naming the
        preset."""
        try:
            text = self.parts[name]
        except KeyError:
            raise ConfigError(
                f"prompt preset '{self.name}' has no part '{name}'; {did_you_mean(name, self.parts)}"
            ) from None
        return fill(text, **fields) if fields else text

    def series(self, prefix: str) -> list[str]:
        """The numbered parts ``<prefix>_1``, ``<prefix>_2``, … in order, up to the first number missing."""
        found: list[str] = []
        while (text := self.parts.get(f"{prefix}_{len(found) + 1}")) is not None:
            found.append(text)
        return found


def load_preset(
    folder: Path,
    *,
    protocol: str | None = None,
    failure_advice: bool = False,
    give_up_marker: bool = False,
    description: str = "",
) -> PromptPreset:
    """The preset whose parts are the ``*.txt`` files of ``folder`` (part name: the file name without ``.txt``),
    named after the folder. A folder without parts is a data error."""
    parts = {path.name.removesuffix(PART_SUFFIX): read_prompt(path) for path in sorted(folder.glob(f"*{PART_SUFFIX}"))}
    if not parts:
        raise DataError(f"prompt preset folder {folder} holds no {PART_SUFFIX} part", file=str(folder))
    return PromptPreset(folder.name, parts, protocol, failure_advice, give_up_marker, description)


def presets(*loaded: PromptPreset) -> dict[str, PromptPreset]:
    """A family's ``prompt_presets`` mapping: each preset under its name."""
    return {preset.name: preset for preset in loaded}
