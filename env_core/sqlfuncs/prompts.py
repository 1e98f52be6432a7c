"""The sqlfuncs family's prompt preset ``hohw``: the Hell-or-High-Water paper's CodeAct protocol (appendix E's
structure, in our own words, with worked examples on an invented ferry timetable rather than a Spider database):
thought / execute / solution turns, the task as "Task: ...", two worked examples (calling listed functions, or
finding them with ``search_tools`` and ``get_info``), and the functions' full JSON definitions. It neither
advises about failures nor offers the give-up marker unless the agent config turns them on. The text is in
``data/prompts/hohw/``."""

from __future__ import annotations

from undertow.env_core.content import data_dir
from undertow.env_core.prompts import PROMPTS, load_preset, presets

HOHW = load_preset(
    data_dir(__file__) / PROMPTS / "hohw",
    protocol="codeact",
    description="the HoHW paper's CodeAct protocol: worked examples, full JSON definitions, no advice or give-up "
    "marker by default",
)
PRESETS = presets(HOHW)
