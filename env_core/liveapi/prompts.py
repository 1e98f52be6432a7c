"""The agent prompts of Live API-Bench's two modes, in our own words and with our own examples.

Direct invocation (appendix E): SLOT and SEL follow the NESTful-style prompt — compose labelled calls, point out
when no function fits, reply with the JSON list only, three worked examples over an invented airline database,
and the note that the data is in ``starting_table_var``; REST follows the BFCL-style prompt, without examples.
ReAct (appendix F): the Thought / Action / Action Input / Observation loop with a final answer. The texts are in
``data/prompts/direct/`` and ``data/prompts/react/``; the suite sets them as the agent's ``direct_prompt`` or
``react_prompt`` (its mode's agent overrides), and ``workers.agent`` appends the tools' JSON schemas.
"""

from __future__ import annotations

from undertow.env_core.content import data_dir
from undertow.env_core.prompts import PROMPTS, load_preset

_FOLDER = data_dir(__file__) / PROMPTS
DIRECT = load_preset(_FOLDER / "direct", protocol="direct")
REACT = load_preset(_FOLDER / "react", protocol="react")

CHAINED = ("slot", "sel", "all")  # formulations whose calls pass data on through labels


def _examples(formulation: str) -> str:
    shown = DIRECT.series(f"example_{formulation}")
    return f"{DIRECT.part('examples_intro')}\n" + "\n\n".join(shown) + "\n\n" if shown else ""


def agent_prompt(mode: str, formulation: str) -> str:
    """The system prompt for one mode (``direct`` or ``react``) and formulation (``slot``, ``sel``, ``rest`` or
    ``all``: a suite mixing them gets the prompt without examples, which fits every formulation). It ends with a
    line break, after which the tools' schemas follow."""
    chained = formulation in CHAINED
    if mode == "react":
        return REACT.part("instructions", chaining=REACT.part("chaining") + "\n" if chained else "") + "\n"
    chaining = DIRECT.part("chaining") + "\n\n" if chained else "\n"
    return DIRECT.part("instructions", chaining=chaining, examples=_examples(formulation)) + "\n"
