"""The middleware family's prompts, in our own words, following the structure of FUXI's (appendix C), with our own
examples on an invented knowledge base about ferries.

Agent prompts, one per way a suite runs (the suite's agent overrides set them, see :func:`agent_prompt`):

- ``database_react`` (Figure A.1's structure): an agent that writes the SQL answering a question step by step; the
  six navigational functions, then the six clause functions it MUST build the query with; one action at a time in
  the Thought / Action / Action Input form the ReAct loop reads; the final SQL on one line after ``Final Answer:``;
- ``kb_react`` (Figure C.2's structure): an agent that answers from a knowledge base with the seven tools;
  variables ``#0``, ``#1``, …; ``Final Answer: #id`` (a count: the number); the step budget; and a one-shot
  demonstration, with an intersection step, in the same action form (``demonstration``);
- ``no_tools``: the paper's baseline, the schema in the task and no tools: one SQLite query after ``Final
  Answer:``, on one line. It names no tool.

Where the tools go in the prompt (the two ReAct prompts) it ends with a line break, after which ``workers.agent``
appends the tools' JSON schemas. Nothing of the generic agent's prompts is in them (no give-up marker, no advice
about failures).

Protocol texts (the ``protocol`` preset, the family's ``prompt_presets``): decoupled generation's main context
(``decoupled_prompt``: ``{tools}``, one line per tool, and ``{max_turns}``), its separate choice request (opening
with ``decoupled_choice_opening``, how the built-in policies recognize it), what the main context reads when a
step took no action, and the error feedback that follows a failed action (Figures 2, C.3).

The texts are in ``data/prompts/<preset>/``."""

from __future__ import annotations

from collections.abc import Sequence

from undertow.env_core.content import data_dir
from undertow.env_core.middleware.database import CLAUSES, DATABASE_TOOLS, NAVIGATIONAL
from undertow.env_core.middleware.kb import KB_TOOLS
from undertow.env_core.model import ToolSpec
from undertow.env_core.prompts import PROMPTS, PROTOCOL_TEXTS, load_preset, presets

_FOLDER = data_dir(__file__) / PROMPTS
PRESETS = presets(load_preset(_FOLDER / PROTOCOL_TEXTS))
DATABASE_REACT = load_preset(_FOLDER / "database_react", protocol="react")
KB_REACT = load_preset(_FOLDER / "kb_react", protocol="react")
NO_TOOLS = load_preset(_FOLDER / "no_tools", protocol="direct")

DATABASE, KB = "database", "kb"  # the environments (as the suite's option names them)


def signature(spec: ToolSpec) -> str:
    """A tool as the prompts list it: ``get_distinct_values(table, column)``."""
    return f"{spec.name}({', '.join(spec.parameters.get('properties', {}))})"


def _numbered(specs: Sequence[ToolSpec], start: int = 1) -> str:
    return "\n".join(f"{start + i}. {signature(spec)}" for i, spec in enumerate(specs))


def database_react_prompt(budget: int) -> str:
    """The database ReAct prompt with its functions listed and the step budget; the tools' schemas follow it."""
    by_name = {spec.name: spec for spec in DATABASE_TOOLS}
    navigational = _numbered([by_name[name] for name in NAVIGATIONAL])
    clauses = _numbered([by_name[name] for name in CLAUSES], start=len(NAVIGATIONAL) + 1)
    text = DATABASE_REACT.part("instructions", navigational=navigational, clauses=clauses, budget=str(budget))
    return text + "\n"


def kb_react_prompt(budget: int) -> str:
    """The knowledge-base ReAct prompt with its tools, the step budget and the one-shot demonstration; the tools'
    schemas follow it."""
    demonstration = KB_REACT.part("demonstration")
    text = KB_REACT.part("instructions", tools=_numbered(KB_TOOLS), budget=str(budget), demonstration=demonstration)
    return text + "\n"


def no_tools_prompt() -> str:
    """The baseline's system prompt: one SQLite query after ``Final Answer:``, on one line; no tool named."""
    return NO_TOOLS.part("instructions")


def agent_prompt(environment: str, *, tools: bool, budget: int) -> str:
    """The system prompt (before any tool schema) of a suite that runs ``environment``'s tasks (``database`` or
    ``kb``) with tools or, for the database, without them; ``budget``: the steps an episode may take."""
    if not tools:
        if environment != DATABASE:
            raise ValueError(f"the no-tools baseline is for database tasks, not {environment!r}")
        return no_tools_prompt()
    if environment == DATABASE:
        return database_react_prompt(budget)
    if environment == KB:
        return kb_react_prompt(budget)
    raise ValueError(f"environment: expected {DATABASE} or {KB}, got {environment!r}")
