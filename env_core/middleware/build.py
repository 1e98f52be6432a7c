"""Build the ``middleware`` suite (FUXI): text-to-SQL tasks over a Spider-format folder's databases, and multi-hop
questions over knowledge bases converted from the same databases, in one suite folder.

**Database tasks.** Every question whose gold SQL runs becomes a task: the question with the database's schema in
the API-docs style the paper prompts with (a line per table with its columns), and the twelve database tools. Its
gold plan walks the clause tools (``from`` … ``order_by``) with the gold query's clauses, or, for a query that is
not one plain SELECT (a set operation), runs it through ``search_by_SQL``; either way the answer is the gold SQL,
and its rows are the gold result the agent's final query is compared with (execution accuracy).

**Knowledge-base tasks.** Each database becomes a triple store (``convert.database_to_kb``) kept in the folder as
a database named ``kb__<db>``; questions derived from its relation paths (``convert.derive_questions``) become
tasks naming their start entity, with the gold tool calls as the plan and the gold entity set (or count) as answer.

Options of a built folder (``{path: OUT, environment: kb, mode: decoupled, tools: false}``): which environment's
tasks run, the agent protocol (react with error feedback, or decoupled generation), and the paper's baseline of the
schema in the prompt without tools (database tasks only).
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from undertow.env_core.errors import ConfigError, DataError
from undertow.env_core.families import FolderSuite, ReportTable, SuiteConfig, missing_path
from undertow.env_core.middleware.convert import Question, database_to_kb, derive_questions
from undertow.env_core.middleware.database import (
    DATABASE_TOOLS,
    QUERY_TIMEOUT_S,
    DatabaseState,
    DatabaseToolBox,
    clauses_of,
    compose,
    execute_sql,
)
from undertow.env_core.middleware.kb import KB_TOOLS, KBState, KBToolBox, TripleStore, answer_entities
from undertow.env_core.middleware.kb import valid_actions as kb_valid_actions
from undertow.env_core.model import Gold, PlannedCall, Scenario, Strict, ToolSpec
from undertow.env_core.spider import Schema, SpiderData, SpiderSuite, read_spider
from undertow.env_core.suites import Suite, write_suite
from undertow.env_core.text import strip_fence
from undertow.env_core.tools import ToolBox, ToolExecutionError, model_query

FAMILY = "middleware"
SUITE_VERSION = "1"
KB_PREFIX = "kb__"  # a knowledge base's name among the folder's databases
DATABASE, KB = "database", "kb"
ARGUMENT_OF = {  # the clause tools' argument names
    "from": "from_statement",
    "where": "where_statement",
    "select": "select_statement",
    "group_by": "group_by_statement",
    "having": "having_statement",
    "order_by": "order_by_statement",
}
FINAL = "Final Answer:"
ACTION_BUDGET = 15  # "You can take at most 15 actions" (FUXI, Figure C.2)


# ---------------------------------------------------------------------------------------------------------------
# Configs


class MiddlewareOptions(Strict):
    """How a built middleware suite is run (not what is built)."""

    OPTION_FIELDS: ClassVar[frozenset[str]] = frozenset({"environment", "mode", "tools"})

    environment: Literal["all", "database", "kb"] = Field(
        default="all", description="the tasks to run: database (text-to-SQL), kb (multi-hop questions) or all"
    )
    mode: Literal["react", "decoupled"] = Field(
        default="react",
        description="react: ReAct with error feedback (a failed action comes back with its error and a prompt to "
        "retry); decoupled: a thought first, then the action chosen from the currently valid ones in a separate "
        "request (knowledge-base steps; database steps read the action from the thought's reply)",
    )
    tools: bool = Field(
        default=True,
        description="false: the paper's API-docs baseline — database tasks with the schema in the prompt and no "
        "tools (the model writes the SQL at once)",
    )

    @model_validator(mode="after")
    def _baseline_is_for_databases(self) -> MiddlewareOptions:
        if not self.tools and self.environment != DATABASE:
            raise ValueError("tools: false (the schema-in-the-prompt baseline) needs environment: database")
        return self

    def options_label(self) -> str:
        parts = [self.environment, self.mode] if self.tools else [self.environment, "no-tools"]
        return "-".join(parts)

    def agent_overrides(self) -> dict[str, Any]:
        """The mode is the agent protocol, with FUXI's error feedback on (a failed action comes back with a prompt
        to retry) and its budget of 15 actions (appendix C)."""
        return {"protocol": self.mode, "error_feedback": True, "max_turns": ACTION_BUDGET}


class MiddlewareSuite(MiddlewareOptions, SpiderSuite):
    """A middleware suite built from a Spider-format folder (cached by content)."""

    USE_FIELDS: ClassVar[frozenset[str]] = SuiteConfig.USE_FIELDS | MiddlewareOptions.OPTION_FIELDS

    family: Literal["middleware"] = FAMILY  # type: ignore[assignment]
    seed: int = Field(default=0, ge=0, le=2**31, description="seed of the knowledge-base question derivation")
    per_pattern: int = Field(
        default=10, ge=1, le=1000, description="knowledge-base questions per relation path (at most)"
    )

    def source_name(self) -> str:
        return f"{Path(self.spider).name}:{self.options_label()}"


class MiddlewareFolder(MiddlewareOptions, FolderSuite):
    """A built middleware folder (``undertow build middleware --spider DIR --out OUT``) with its options."""

    def source_name(self) -> str:
        return f"{Path(self.path).name}:{self.options_label()}"


# ---------------------------------------------------------------------------------------------------------------
# Task texts


def api_docs(schema: Schema) -> str:
    """The database's schema as the API-docs prompt shows it: one line per table, its columns in order."""
    lines = [f"# {table}({', '.join(columns)})" for table, columns in schema.tables.items()]
    return "### SQLite tables of database '" + schema.db_id + "', with their columns:\n" + "\n".join(lines)


def database_task(question: str, schema: Schema) -> str:
    return (
        f"{api_docs(schema)}\n\n### Question: {question}\n\n"
        f"Write one SQLite query that answers the question. When you have it, reply with '{FINAL}' and the query "
        "on one line."
    )


def kb_task(question: Question) -> str:
    return (
        f"Question: {question.text}\nEntities: [{question.entity}]\n\n"
        "Variables hold sets of entities: #0 is the first one a tool call makes, #1 the second, and so on. When you "
        f"have the answer, reply with '{FINAL} #id' naming the variable that holds it (for a question that asks how "
        f"many, '{FINAL}' and the number)."
    )


_LITERAL = re.compile(r"'((?:[^']|'')*)'|\"((?:[^\"]|\"\")*)\"")


def requires_content(question: str, sql: str) -> bool:
    """Whether the task needs the database's content (FUXI's label of BIRD, Table 1): some text value of the gold
    query is not written in the question exactly as it is stored (case included), so the agent has to look it up."""
    for match in _LITERAL.finditer(sql):
        value = (match.group(1) or match.group(2) or "").strip("%")
        if value and value not in question:
            return True
    return False


# ---------------------------------------------------------------------------------------------------------------
# Building


def _database_scenario(index: int, question: str, sql: str, schema: Schema, rows: list[tuple[Any, ...]]) -> Scenario:
    clauses = clauses_of(sql)
    if clauses is not None:
        plan = [PlannedCall(tool=c, arguments={ARGUMENT_OF[c]: clauses[c]}) for c in ARGUMENT_OF if c in clauses]
        answer_sql = compose(clauses)
    else:  # a set operation: no clause chain builds it, the navigational query tool runs it
        plan, answer_sql = [PlannedCall(tool="search_by_SQL", arguments={"query": sql})], sql
    return Scenario(
        id=f"{FAMILY}/{DATABASE}/{schema.db_id}/{index:04d}",
        family=FAMILY,
        task=database_task(question, schema),
        tools=[spec.name for spec in DATABASE_TOOLS],
        # the second plan is the paper's baseline: the query written from the schema in the prompt, no tool called
        gold=Gold(
            answer=[list(row) for row in rows],
            plans=[plan, []],
            reports=[answer_sql, sql],
        ),
        metadata={
            "environment": DATABASE,
            "database": schema.db_id,
            "question": question,
            "gold_sql": sql,
            "requires_content": requires_content(question, sql),
            "clause_chain": clauses is not None,
        },
    )


def _kb_scenario(db: str, index: int, question: Question) -> Scenario:
    plan = [PlannedCall(tool=tool, arguments=dict(arguments)) for tool, arguments in question.actions]
    report = question.answer_variable or question.answer[0]  # the variable holding the answer, or the count
    return Scenario(
        id=f"{FAMILY}/{KB}/{db}/{index:04d}",
        family=FAMILY,
        task=kb_task(question),
        tools=[spec.name for spec in KB_TOOLS],
        gold=Gold(answer=list(question.answer), plans=[plan], reports=[report]),
        metadata={
            "environment": KB,
            "kb": KB_PREFIX + db,
            "entities": [question.entity],
            "question": question.text,
            "kind": question.kind,
            "hops": question.hops,
            "relations": question.relations,
            "attribute": question.attribute,
            "count": question.answer_variable is None,
        },
    )


def source_digest(config: SuiteConfig) -> str:
    assert isinstance(config, MiddlewareSuite)
    folder = Path(config.spider)
    if not folder.is_dir():
        raise ConfigError(missing_path(folder, "Spider folder"), field="spider")
    source = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):  # the builder's own code joins the cache key
        source.update(path.read_bytes())
    digest = read_spider(folder, config.questions).digest
    return hashlib.sha256(f"{digest}:{source.hexdigest()}:{SUITE_VERSION}".encode()).hexdigest()


def _gold_rows(path: Path, sql: str) -> list[tuple[Any, ...]] | None:
    try:
        return execute_sql(path, sql)
    except sqlite3.Error:
        return None


def build(config: SuiteConfig, out: Path) -> list[ReportTable]:
    """Build the database tasks and the derived knowledge-base tasks of every database of the folder into ``out``;
    returns what was built (and skipped) per database and the knowledge bases' sizes."""
    assert isinstance(config, MiddlewareSuite)
    folder = Path(config.spider)
    if not folder.is_dir():
        raise ConfigError(missing_path(folder, "Spider folder"), field="spider")
    spider = read_spider(folder, config.questions)
    if not spider.schemas:
        reasons = "; ".join(f"{p.item}: {p.reason}" for p in spider.problems[:3])
        raise DataError(f"{folder}: no database schema could be read ({reasons})", field="spider")
    return _write(spider, config, out)


def _write(spider: SpiderData, config: MiddlewareSuite, out: Path) -> list[ReportTable]:
    scenarios: list[Scenario] = []
    skipped: Counter[str] = Counter()
    per_db: dict[str, dict[str, Any]] = {}
    databases: dict[str, Path] = {}
    with tempfile.TemporaryDirectory(prefix="undertow-kb-") as scratch:
        for db, schema in spider.schemas.items():
            path = spider.databases.get(db)
            if path is None:
                continue
            databases[db] = path
            row: dict[str, Any] = {"sql": 0, "skipped": 0}
            for question in (q for q in spider.questions if q.db_id == db):
                rows = _gold_rows(path, question.query)
                if rows is None:
                    skipped[db] += 1
                    row["skipped"] += 1
                    continue
                scenarios.append(_database_scenario(question.index, question.text, question.query, schema, rows))
                row["sql"] += 1
            kb_path = Path(scratch) / f"{db}.kb"
            stats = database_to_kb(path, schema, kb_path)
            store = TripleStore.open(kb_path)
            try:
                questions = derive_questions(store, config.seed, per_pattern=config.per_pattern)
            finally:
                store.close()
            hops = Counter(q.hops for q in questions)
            kinds = Counter(q.kind for q in questions)
            scenarios += [_kb_scenario(db, i, q) for i, q in enumerate(questions)]
            databases[KB_PREFIX + db] = kb_path
            row.update(stats=stats, questions=len(questions), hops=hops, kinds=kinds)
            per_db[db] = row
        write_suite(
            out,
            name=f"{FAMILY}:{Path(config.spider).name}",
            family=FAMILY,
            version=SUITE_VERSION,
            tools=[*DATABASE_TOOLS, *KB_TOOLS],
            scenarios=scenarios,
            databases=databases,
        )
    return _tables(per_db)


def _tables(per_db: Mapping[str, dict[str, Any]]) -> list[ReportTable]:
    table = ReportTable(
        title=f"{FAMILY} build: database tasks and derived knowledge-base tasks",
        columns=[
            "database",
            "SQL tasks",
            "skipped",
            "entities",
            "relations",
            "triples",
            "attributes",
            "KB questions",
            "2 hops",
            "3 hops",
            "count",
            "argmax / argmin",
        ],
        right=[False, *[True] * 11],
    )
    totals: Counter[str] = Counter()
    for db, row in per_db.items():
        stats, hops, kinds = row["stats"], row["hops"], row["kinds"]
        cells = {
            "sql": row["sql"],
            "skipped": row["skipped"],
            "entities": stats.entities,
            "relations": stats.relations,
            "triples": stats.triples,
            "attributes": stats.attributes,
            "questions": row["questions"],
            "hop2": hops.get(2, 0),
            "hop3": hops.get(3, 0),
            "count": kinds.get("count", 0),
            "superlative": kinds.get("argmax", 0) + kinds.get("argmin", 0),
        }
        totals.update(cells)
        table.rows.append([db, *(f"{v:,}" for v in cells.values())])
    keys = ["sql", "skipped", "entities", "relations", "triples", "attributes", "questions", "hop2", "hop3"]
    table.rows.append(["all", *(f"{totals[k]:,}" for k in [*keys, "count", "superlative"])])
    table.sections = [len(table.rows) - 1]
    table.note = (
        "SQL tasks: questions whose gold SQL runs (skipped: it fails on its database). A knowledge base per database: "
        "rows with a key as entities, foreign keys and junction tables as relations both ways, numeric columns as "
        "attributes (relations: distinct names; all: summed over databases). KB questions follow relation paths of 2 "
        "or 3 hops, some ending in a count or a superlative."
    )
    return [table]


# ---------------------------------------------------------------------------------------------------------------
# The tool box: both environments, the scenario deciding which


class MiddlewareState:
    """One episode's state: the environment its scenario names, and that environment's own state."""

    def __init__(self, environment: str | None = None, inner: Any = None) -> None:
        self.environment = environment
        self.inner = inner


class MiddlewareToolBox(ToolBox):
    """The database tools over the folder's databases and the KB tools over its knowledge bases (``kb__<db>``);
    each episode runs in the environment its scenario names (``metadata["environment"]``)."""

    def __init__(self, specs: list[ToolSpec], databases: Mapping[str, Path]) -> None:
        super().__init__(specs)
        kbs_by_name = {name: p for name, p in databases.items() if name.startswith(KB_PREFIX)}
        relational = {name: p for name, p in databases.items() if not name.startswith(KB_PREFIX)}
        self.boxes: dict[str, ToolBox] = {
            DATABASE: DatabaseToolBox([s for s in specs if s.binding.get("environment") == DATABASE], relational),
            KB: KBToolBox([s for s in specs if s.binding.get("environment") == KB], kbs_by_name),
        }

    def new_state(self) -> MiddlewareState:
        return MiddlewareState()

    def start(self, state: MiddlewareState, scenario: Scenario) -> None:
        environment = scenario.metadata.get("environment")
        if environment not in self.boxes:
            raise DataError(
                f"scenario {scenario.id}: metadata.environment is {environment!r}; expected database or kb",
                field="metadata.environment",
            )
        box = self.boxes[environment]
        state.environment, state.inner = environment, box.new_state()
        box.start(state.inner, scenario)

    def _box(self, state: MiddlewareState, spec: ToolSpec) -> ToolBox:
        wanted = spec.binding.get("environment")
        if state.environment is None:
            raise ToolExecutionError("the episode has not started")
        if wanted != state.environment:
            where = "a knowledge base" if wanted == KB else "a database"
            raise ToolExecutionError(
                f"{spec.name} works on {where}; this task's tools are the {state.environment} tools"
            )
        return self.boxes[state.environment]

    def execute(self, state: MiddlewareState, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        return self._box(state, spec).execute(state.inner, spec, arguments)

    def close_state(self, state: MiddlewareState) -> None:
        if state.environment is not None and state.inner is not None:
            self.boxes[state.environment].close_state(state.inner)

    def fork_state(self, state: MiddlewareState) -> MiddlewareState:
        if state.environment is None:
            return MiddlewareState()
        return MiddlewareState(state.environment, self.boxes[state.environment].fork_state(state.inner))

    def answer_result(self, state: MiddlewareState, answer: str) -> Any:
        """What a final answer denotes in the episode: a database task's query rows (``{"rows": [...]}`` or
        ``{"error": ...}`` when it does not run), a knowledge-base variable's entities (or the number given)."""
        answer = final_answer(answer)
        if state.environment == DATABASE:
            assert isinstance(state.inner, DatabaseState)
            return run_answer_sql(state.inner, answer)
        if state.environment == KB:
            assert isinstance(state.inner, KBState)
            if VARIABLE_ANSWER.fullmatch(answer):
                return {"entities": sorted(answer_entities(state.inner, answer))}
            return {"value": answer}
        return None

    def valid_actions(self, state: MiddlewareState) -> list[tuple[str, dict[str, Any]]] | None:
        """The actions the knowledge base's rules allow now (None for a database task: they cannot be listed)."""
        if state.environment == KB:
            assert isinstance(state.inner, KBState)
            return list(kb_valid_actions(state.inner))
        return None


VARIABLE_ANSWER = re.compile(r"#\d+")


def final_answer(text: str) -> str:
    """The answer part of a final reply: after the last ``Final Answer:``, without code fences or a trailing ``;``."""
    answer = text.rpartition(FINAL)[2]  # the whole text when there is no marker
    answer = strip_fence(answer.strip())
    return answer.strip().rstrip(";").strip().strip("*").strip()


ANSWER_ROWS = 100_000  # a final query returning more rows than this is not compared (a runaway join)


def run_answer_sql(state: DatabaseState, sql: str) -> dict[str, Any]:
    """Run a final SQL answer on the episode's read-only connection, under the tools' time limit: its rows, or the
    error SQLite gave. Model-written SQL: it cannot write, name a file, or run or grow without bound."""
    if state.connection is None:
        return {"error": "no database is open"}
    if not sql:
        return {"error": "no SQL query in the final answer"}
    return model_query(state.connection, sql, QUERY_TIMEOUT_S, ANSWER_ROWS)


def toolbox(specs: list[ToolSpec], databases: Mapping[str, Path]) -> MiddlewareToolBox:
    return MiddlewareToolBox(specs, databases)


# ---------------------------------------------------------------------------------------------------------------
# Options applied to a loaded suite


def adapt(suite: Suite, config: SuiteConfig) -> Suite:
    """A config's options on a loaded suite: the environment's tasks only; without tools, the database tasks with
    no tool (the schema is already in their prompt)."""
    options = config if isinstance(config, MiddlewareOptions) else MiddlewareOptions()
    scenarios = [s for s in suite.scenarios if options.environment in ("all", s.metadata.get("environment"))]
    if not options.tools:
        scenarios = [s.model_copy(update={"tools": [], "metadata": {**s.metadata, "tools": False}}) for s in scenarios]
    if not scenarios:
        raise ConfigError(f"suite {suite.name}: no {options.environment} task in it", field="environment")
    return Suite(suite.name, suite.family, suite.version, suite.toolbox, scenarios, suite.skipped)
