"""The failtalms family's protocol texts: FAIL-TaLMs' awareness questions (appendix C.2), asked before the agent
acts under a setting with ``awareness``, in our own wording of their structure: weigh your own knowledge, the
tools, or both; answer Yes, IDK or No first, then a short reason; No means the task is skipped. The system
message opens with ``awareness_opening``, which is how the built-in policies recognize the question. The texts
are in ``data/prompts/protocol/``."""

from __future__ import annotations

from undertow.env_core.content import data_dir
from undertow.env_core.prompts import PROMPTS, PROTOCOL_TEXTS, load_preset, presets

PRESETS = presets(load_preset(data_dir(__file__) / PROMPTS / PROTOCOL_TEXTS))
