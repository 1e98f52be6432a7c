"""Tool discovery for open-world settings: the ``search_tools`` / ``get_info`` meta-tools and how a suite's tools
are shown to the agent (``ToolAccess``).

``closed``: the scenario's own tools plus ``distractors`` other tools of the universe (or as many as fill the list
to ``functions`` tools), drawn and shuffled from (scenario id, seed). ``open``: no function is listed; the agent
searches the whole universe and reads documentation, and every tool a search or ``get_info`` returned becomes
callable. The search backend is anything with ``search(query, k) -> [tool names]``; ``LexicalSearch`` is the
built-in one (the ``retrieval`` package provides embedding and BM25 indexes behind the same interface).
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections import Counter
from collections.abc import Collection, Iterable
from typing import Any, Literal, Protocol

from pydantic import Field, model_validator

from undertow.env_core.model import Scenario, Strict, ToolSpec

SEARCH_TOOLS = "search_tools"
GET_INFO = "get_info"
MAX_RESULTS = 9  # the paper's cap


class Searcher(Protocol):
    def search(self, query: str, k: int) -> list[str]:
        """Tool names, best first."""
        ...


_TOKEN = re.compile(r"[a-z0-9]+")


def tool_document(spec: ToolSpec) -> str:
    """What a search indexes for a tool: its name, description and argument descriptions."""
    arguments = " ".join(
        f"{name} {schema.get('description', '')}" for name, schema in spec.parameters.get("properties", {}).items()
    )
    return f"{spec.name} {spec.description} {arguments}"


class LexicalSearch:
    """TF-IDF cosine over word tokens: the model-free search (``search: lexical``); the ``retrieval`` package
    serves the BM25, dense and hybrid indexes."""

    def __init__(self, specs: Iterable[ToolSpec]):
        self.names: list[str] = []
        vectors: list[Counter[str]] = []
        for spec in specs:
            self.names.append(spec.name)
            vectors.append(Counter(_TOKEN.findall(tool_document(spec).lower())))
        documents = len(vectors) or 1
        frequency = Counter(token for vector in vectors for token in vector)
        self.idf = {token: math.log(1 + documents / count) for token, count in frequency.items()}
        self.vectors = [self._weigh(v) for v in vectors]

    def _weigh(self, counts: Counter[str]) -> dict[str, float]:
        weights = {t: c * self.idf.get(t, 0.0) for t, c in counts.items()}
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        return {t: w / norm for t, w in weights.items()}

    def search(self, query: str, k: int) -> list[str]:
        query_vector = self._weigh(Counter(_TOKEN.findall(query.lower())))
        scored = [(sum(w * doc.get(t, 0.0) for t, w in query_vector.items()), -i) for i, doc in enumerate(self.vectors)]
        ranked = sorted(range(len(scored)), key=lambda i: scored[i], reverse=True)
        return [self.names[i] for i in ranked[:k] if scored[i][0] > 0]


SEARCH_SPECS = [
    ToolSpec(
        name=SEARCH_TOOLS,
        description="Find tools relevant to a description of what you need. Returns tool names with a short "
        "description; use get_info for a tool's arguments.",
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what the tool should do"},
                "num_results": {"type": "integer", "description": f"how many tools to return (1 to {MAX_RESULTS})"},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    ),
    ToolSpec(
        name=GET_INFO,
        description="Read the full documentation of one tool: its description and its arguments.",
        parameters={
            "type": "object",
            "properties": {"tool_name": {"type": "string", "description": "name of the tool"}},
            "required": ["tool_name"],
            "additionalProperties": False,
        },
    ),
]


class ToolAccess(Strict):
    """How tools reach the agent: listed in context (``closed``, with distractors) or found by search (``open``).

    A closed list is always shuffled, deterministically from (scenario id, seed), so that the solution tools never
    sit in the order of the gold plan."""

    mode: Literal["closed", "open"] = "closed"
    distractors: int = Field(default=0, ge=0, le=100_000, description="closed: extra tools from the universe")
    functions: int | None = Field(
        default=None,
        ge=1,
        le=100_000,
        description="closed: list exactly this many tools in all, the scenario's own plus distractors to fill (HoHW "
        "Figure 3: 3, 9, 27, 81); a scenario with more own tools than this lists its own only; removed tools do not "
        "count; tools disclosed later come on top; instead of distractors",
    )
    max_results: int = Field(default=MAX_RESULTS, ge=1, le=1000, description="open: cap on search_tools num_results")
    search: Literal["dense", "hybrid", "bm25", "lexical"] = Field(
        default="dense",
        description="open: the retrieval index behind search_tools (lexical: built-in TF-IDF, no model)",
    )

    @model_validator(mode="after")
    def _one_size(self) -> ToolAccess:
        if self.functions is not None and self.mode == "open":
            raise ValueError("functions: only for closed access; open access lists no tools (the agent searches)")
        if self.functions is not None and self.distractors:
            raise ValueError(
                "give either functions (how many tools in all) or distractors (how many extra tools), not both"
            )
        return self

    @property
    def label(self) -> str:
        if self.mode == "closed":
            return f"closed+{self.distractors}" if self.functions is None else f"closed@{self.functions}"
        return "open" if self.search == "dense" else f"open-{self.search}"

    def apply(self, scenario: Scenario, universe: list[str], seed: int, removed: Collection[str] = ()) -> Scenario:
        """The scenario as the agent meets it: its tool list under this access mode. ``removed`` (the tools a
        ``removed`` fault takes away) are never listed, and ``functions`` counts only the tools that are: under
        ``distractors_only`` the list still holds k tools, all of them distractors."""
        if self.mode == "open":
            return scenario.model_copy(update={"tools": [SEARCH_TOOLS, GET_INFO]})
        gone = set(removed)
        tools = [name for name in scenario.tools if name not in gone]
        extra = self.distractors if self.functions is None else max(0, self.functions - len(tools))
        digest = hashlib.sha256(f"distractors|{scenario.id}|{seed}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        if extra:
            own = set(scenario.tools) | set(scenario.hidden_tools) | gone
            pool = [name for name in universe if name not in own]
            tools += rng.sample(pool, min(extra, len(pool)))
        rng.shuffle(tools)
        return scenario.model_copy(update={"tools": tools})


def search_error(arguments: dict[str, Any], cap: int) -> str | None:
    """Why a search request cannot be served, phrased for the agent; None if it can."""
    query = arguments.get("query")
    if not isinstance(query, str) or not query.strip():
        return "search_tools needs a non-empty query describing the tool you need."
    k = arguments.get("num_results", cap)
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= cap:
        return f"num_results must be an integer from 1 to {cap}, got {k!r}."
    return None
