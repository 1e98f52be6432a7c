"""The services family's prompts (Failing Tools): the ``assistant`` preset, a bare function-calling assistant that
acts for the user and reports to them, and the harness layers of the paper's Table 2 that a setting adds to the
system prompt (``harness_preamble``, H1; ``harness_few_shot``, H3: worked examples on other APIs), in our own words
with invented APIs. The texts are in ``data/prompts/``."""

from __future__ import annotations

from undertow.env_core.content import data_dir
from undertow.env_core.prompts import PROMPTS, PROTOCOL_TEXTS, load_preset, presets

_FOLDER = data_dir(__file__) / PROMPTS

ASSISTANT = load_preset(
    _FOLDER / "assistant",
    protocol="function_calling",
    description="Failing Tools: a bare function-calling assistant acting for the user",
)
PRESETS = presets(ASSISTANT, load_preset(_FOLDER / PROTOCOL_TEXTS))
