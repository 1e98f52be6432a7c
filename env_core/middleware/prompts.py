"""The middleware family's protocol texts (FUXI §3.2, Figure 2; the prompt structure of its appendix C, Figures C.2
and C.3, in our own words, with our own examples on an invented knowledge base about ferries): decoupled
generation's main context (``decoupled_prompt``: ``{tools}``, one line per tool, and ``{max_turns}``), its
separate choice request (opening with ``decoupled_choice_opening``, how the built-in policies recognize it), what
the main context reads when a step took no action, and the error feedback that follows a failed action. The
texts are in ``data/prompts/protocol/``."""

from __future__ import annotations

from undertow.env_core.content import data_dir
from undertow.env_core.prompts import PROMPTS, PROTOCOL_TEXTS, load_preset, presets

PRESETS = presets(load_preset(data_dir(__file__) / PROMPTS / PROTOCOL_TEXTS))
