"""The agent prompts of Live API-Bench's modes, in our own words and with our own examples.

Direct invocation (appendix E): SLOT and SEL follow the NESTful-style prompt — compose labelled calls, point out
when no function fits, reply with the JSON list only, three worked examples over an invented airline database,
and the note that the data is in ``starting_table_var``; REST follows the BFCL-style prompt, without examples.
Native tool calling (the "(Tools)" rows of Table 3): the same instructions without the JSON form, the tools going
in the request's ``tools`` parameter. ReAct (appendix F): the Thought / Action / Action Input / Observation loop
with a final answer. SQL (appendix B.3, Table 6): one SQL query written from the database's schema. The texts are
in ``data/prompts/<mode>/``; the suite sets them as the agent's ``direct_prompt`` or ``react_prompt`` (its mode's
agent overrides), and ``workers.agent`` appends the tools' JSON schemas where the tools go in the prompt.
"""

from __future__ import annotations

from undertow.env_core.content import data_dir
from undertow.env_core.prompts import PROMPTS, load_preset

_FOLDER = data_dir(__file__) / PROMPTS
DIRECT = load_preset(_FOLDER / "direct", protocol="direct")
NATIVE = load_preset(_FOLDER / "native", protocol="direct")
REACT = load_preset(_FOLDER / "react", protocol="react")
SQL = load_preset(_FOLDER / "sql", protocol="direct")

CHAINED = ("slot", "sel", "all")  # formulations whose calls pass data on through labels


def _examples(formulation: str) -> str:
    shown = DIRECT.series(f"example_{formulation}")
    return f"{DIRECT.part('examples_intro')}\n" + "\n\n".join(shown) + "\n\n" if shown else ""


def agent_prompt(mode: str, formulation: str) -> str:
    """The system prompt for one mode (``direct``, ``tools``, ``react`` or ``sql``) and formulation (``slot``,
    ``sel``, ``rest`` or ``all``: a suite mixing them gets the prompt without examples, which fits every
    formulation). Where the tools go in the prompt (direct, react) it ends with a line break, after which their
    schemas follow."""
    chained = formulation in CHAINED
    if mode == "react":
        return REACT.part("instructions", chaining=REACT.part("chaining") + "\n" if chained else "") + "\n"
    if mode == "sql":
        return SQL.part("instructions")
    if mode == "tools":
        chaining = NATIVE.part("chaining") + "\n\n" if chained else ""
        return NATIVE.part("instructions", chaining=chaining, examples=_examples(formulation)).rstrip()
    chaining = DIRECT.part("chaining") + "\n\n" if chained else "\n"
    return DIRECT.part("instructions", chaining=chaining, examples=_examples(formulation)) + "\n"


def sql_task(question: str, schema: str) -> str:
    """The question as the SQL mode poses it: the database's schema, then the question."""
    return SQL.part("task", schema=schema, question=question)
