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
from undertow.env_core.middleware.convert import Question, database_to_kb, derive_questions, select_questions
from undertow.env_core.middleware.database import (
    DATABASE_TOOLS,
    QUERY_TIMEOUT_S,
    SQL_ERRORS,
    DatabaseState,
    DatabaseToolBox,
    clauses_of,
    compose,
)
from undertow.env_core.middleware.kb import KB_TOOLS, KBState, KBToolBox, TripleStore, answer_entities
from undertow.env_core.middleware.kb import valid_actions as kb_valid_actions
from undertow.env_core.middleware.prompts import agent_prompt
from undertow.env_core.model import Gold, PlannedCall, Scenario, Strict, ToolSpec
from undertow.env_core.spider import Schema, SpiderData, SpiderSuite, read_spider
from undertow.env_core.sqlgold import gold_answer, left_out_table
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

    OPTION_FIELDS: ClassVar[frozenset[str]] = frozenset({"environment", "mode", "tools", "sql_errors", "sample_rows"})

    environment: Literal["all", "database", "kb"] = Field(
        default="all",
        description="the tasks to run: database (text-to-SQL) or kb (multi-hop questions), one suite each, as each "
        "has its own prompt; all (both) loads and builds, and a sweep refuses it",
    )
    mode: Literal["react", "decoupled"] = Field(
        default="react",
        description="react: ReAct with error feedback (a failed action comes back with its error and a prompt to "
        "retry); decoupled (knowledge bases only, as in the paper): a thought first, then the action chosen from the "
        "currently valid ones in a separate request",
    )
    tools: bool = Field(
        default=True,
        description="false: the paper's API-docs baseline — database tasks with the schema in the prompt and no "
        "tools: the model writes the SQL in one reply",
    )

    sql_errors: Literal["sqlite", "helpful"] = Field(
        default="sqlite",
        description="database tasks: how a failed query reads — sqlite (SQLite's own message, the paper's error "
        "feedback) or helpful (undertow's: a did-you-mean for a mistyped table or column, and advice); rows run "
        "with helpful are marked in Table 1",
    )
    sample_rows: Literal[0, 1, 5, 10] = Field(
        default=0,
        description="database tasks: the first rows of each table shown in the task under its schema line (FUXI "
        "Figure 4's ablation: 1, 5 or 10 rows per table, with or without tools); 0: the schema alone",
    )

    @model_validator(mode="after")
    def _options_fit_the_environment(self) -> MiddlewareOptions:
        if self.environment == KB and (self.sql_errors != "sqlite" or self.sample_rows):
            raise ValueError(
                "sql_errors and sample_rows are options of database tasks; use them with environment: database"
            )
        if not self.tools and self.environment != DATABASE:
            raise ValueError("tools: false (the schema-in-the-prompt baseline) needs environment: database")
        if not self.tools and self.mode != "react":
            raise ValueError(f"mode: {self.mode} chooses actions, and tools: false offers none; leave mode out")
        if self.mode == "decoupled" and self.environment == DATABASE:
            raise ValueError(
                "mode: decoupled picks each action among those a knowledge base lists, and database actions cannot "
                "be listed; use it with environment: kb (database tasks run with mode: react)"
            )
        return self

    def options_label(self) -> str:
        parts: list[str] = [self.environment, self.mode] if self.tools else [self.environment, "no-tools"]
        if self.sql_errors != "sqlite":
            parts.append(f"{self.sql_errors}-errors")
        if self.sample_rows:
            parts.append(f"{self.sample_rows}-rows")
        return "-".join(parts)

    def agent_overrides(self) -> dict[str, Any]:
        """The agent protocol and prompt of the environment and mode, as FUXI runs them (appendix C): ReAct with
        the family's prompt (the database's or the knowledge base's, the tools' schemas after it), decoupled
        generation with the family's decoupled texts, or the baseline's one reply with the schema in the task and
        no tools; error feedback on (a failed action comes back with a prompt to retry), a budget of 15 steps, and
        nothing of the generic prompts (no advice about failures, no give-up marker). A suite of both environments
        is refused: the agent config is one per suite, and the two kinds of task need different prompts."""
        if self.environment not in (DATABASE, KB):
            raise ConfigError(
                f"environment: {self.environment} mixes database and knowledge-base tasks, which need different "
                "prompts; run one suite with environment: database and one with environment: kb",
                field="environment",
            )
        overrides: dict[str, Any] = {"failure_advice": False, "give_up_marker": False}
        if not self.tools:  # one reply, read as the answer (the SQL); an unreadable one is the model's failure
            prompt = agent_prompt(self.environment, tools=False, budget=ACTION_BUDGET)
            overrides.update(protocol="direct", direct_prompt=prompt, direct_tools="prompt", direct_parser="strict")
            return overrides | {"max_parse_errors": 1}
        overrides.update(protocol=self.mode, error_feedback=True, max_turns=ACTION_BUDGET)
        if self.mode == "react":
            overrides["react_prompt"] = agent_prompt(self.environment, tools=True, budget=ACTION_BUDGET)
        return overrides


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
        f"Question: {question.text}\nEntities: [{', '.join(question.entities)}]\n\n"
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
            "entities": question.entities,
            "question": question.text,
            "kind": question.kind,
            "hops": question.hops,
            "relations": question.relations,
            "attribute": question.attribute,
            "count": question.answer_variable is None,
            "conjunction": question.conjunction,
            "attribute_kind": question.attribute_kind,
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


def _gold_rows(path: Path, question: str, sql: str) -> list[tuple[Any, ...]] | str:
    """The gold query's rows where they are the one answer the question has (``env_core.sqlgold``), else why the
    task is left out: its gold fails, ties at a LIMIT cut, or returns nothing for a question that asks for
    something (then ``WHERE 1=0`` would score EX 1 and the right query 0)."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        found = gold_answer(conn, sql, question)
    if isinstance(found, tuple):
        return found[0]
    return [tuple(row) for row in found.rows]


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
            row: dict[str, Any] = {"sql": 0, "skipped": 0, "gold": Counter()}
            for question in (q for q in spider.questions if q.db_id == db):
                row["gold"]["questions"] += 1
                rows = _gold_rows(path, question.text, question.query)
                if isinstance(rows, str):
                    skipped[db] += 1
                    row["skipped"] += 1
                    row["gold"][rows] += 1
                    continue
                scenarios.append(_database_scenario(question.index, question.text, question.query, schema, rows))
                row["sql"] += 1
                row["gold"]["kept"] += 1
            kb_path = Path(scratch) / f"{db}.kb"
            stats = database_to_kb(path, schema, kb_path)
            store = TripleStore.open(kb_path)
            try:
                questions = derive_questions(store, config.seed, per_pattern=config.per_pattern)
            finally:
                store.close()
            databases[KB_PREFIX + db] = kb_path
            row.update(stats=stats, derived=questions)
            per_db[db] = row
        # the paper's mix, no database over its share: chosen over all the databases at once
        for db, kept in select_questions({db: row["derived"] for db, row in per_db.items()}, config.seed).items():
            scenarios += [_kb_scenario(db, i, q) for i, q in enumerate(kept)]
            per_db[db]["kb"] = kept
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
        columns=["database", "SQL tasks", "skipped", "entities", "relations", "triples", "attributes", "KB questions"],
        right=[False, *[True] * 7],
    )
    totals: Counter[str] = Counter()
    for db, row in per_db.items():
        stats = row["stats"]
        cells = {
            "sql": row["sql"],
            "skipped": row["skipped"],
            "entities": stats.entities,
            "relations": stats.relations,
            "triples": stats.triples,
            "attributes": stats.attributes,
            "questions": len(row["kb"]),
        }
        totals.update(cells)
        table.rows.append([db, *(f"{v:,}" for v in cells.values())])
    table.rows.append(["all", *(f"{totals[k]:,}" for k in cells)])
    table.sections = [len(table.rows) - 1]
    table.note = (
        "SQL tasks: questions whose gold SQL is one answer (skipped: it fails on its database, ties at a LIMIT cut, "
        "or returns nothing for a question that asks for something; the table below counts each). A knowledge base "
        "per database: rows with a key as entities, foreign keys and junction tables as relations both ways, numeric "
        "columns as attributes (relations: distinct names; all: summed over databases). KB questions: see the "
        "knowledge-base table."
    )
    gold = {db: dict(row["gold"]) for db, row in per_db.items()}
    return [
        table,
        _kb_table(per_db),
        left_out_table(gold, "database tasks: gold answers by database", "the SQL tasks built"),
    ]


def _kb_table(per_db: Mapping[str, dict[str, Any]]) -> ReportTable:
    """The knowledge-base questions per database: derived, kept, share, mean hops, aggregations, conjunctions and
    superlatives by the kind of attribute they rank."""
    table = ReportTable(
        title=f"{FAMILY} build: knowledge-base questions by database",
        columns=[
            "database",
            "derived",
            "questions",
            "share",
            "mean hops",
            "aggregations",
            "conjunctions",
            "superlatives: measure / date",
        ],
        right=[False, *[True] * 7],
    )
    every: list[Question] = [q for row in per_db.values() for q in row["kb"]]

    def figures(derived: int, questions: list[Question]) -> list[str]:
        n = len(questions)
        kinds = Counter(q.attribute_kind for q in questions if q.attribute_kind)
        aggregations = sum(q.aggregation for q in questions)
        return [
            f"{derived:,}",
            f"{n:,}",
            f"{n / max(len(every), 1):.1%}",
            f"{sum(q.hops for q in questions) / n:.2f}" if n else "-",
            f"{aggregations:,} ({aggregations / n:.0%})" if n else "0",
            f"{sum(q.conjunction for q in questions):,}",
            f"{kinds['measure']:,} / {kinds['date']:,}",
        ]

    for db, row in per_db.items():
        table.rows.append([db, *figures(len(row["derived"]), row["kb"])])
    table.rows.append(["all", *figures(sum(len(row["derived"]) for row in per_db.values()), every)])
    table.sections = [len(table.rows) - 1]
    cap = max(0.2, 1 / len(per_db)) if per_db else 1.0
    table.note = (
        "Selected as FUXI selects its Freebase questions: three relations, or two and a count or a superlative "
        "(aggregations); conjunctions intersect what two named entities reach; superlatives rank measures and dates "
        "only, never identifiers, keys, codes, zip codes, phones, SSNs or yes/no flags. Of the questions derived, "
        f"those kept put no database above {cap:.0%} of them (max(20%, 1 / databases)) and make aggregations 30-45% "
        "(the paper's 38%). These are Spider databases turned into knowledge bases, not Freebase: the KB results "
        "are not comparable with the paper's Table 2."
    )
    return table


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


def _database_options(scenario: Scenario, options: MiddlewareOptions, databases: Mapping[str, Path]) -> Scenario:
    """A database task under the suite's database options: its errors' reading in its metadata (the tool box reads
    it), its tables' first rows in its task."""
    if scenario.metadata.get("environment") != DATABASE:
        return scenario
    task = scenario.task
    if options.sample_rows:
        task = with_sample_rows(task, databases[str(scenario.metadata["database"])], options.sample_rows)
    metadata = {**scenario.metadata, SQL_ERRORS: options.sql_errors, "sample_rows": options.sample_rows}
    return scenario.model_copy(update={"task": task, "metadata": metadata})


_DOCS_TABLE = re.compile(r"^# (.+?)\(")


def with_sample_rows(task: str, database: Path, rows: int) -> str:
    """A database task whose API docs show each table's first ``rows`` rows under its line (FUXI §5.4, Figure 4:
    the schema prompt augmented with rows taken from the database; the first rows, so every run shows the same)."""
    lines: list[str] = []
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
        for line in task.splitlines():
            lines.append(line)
            table = _DOCS_TABLE.match(line)
            if table is None:
                continue
            quoted = '"' + table.group(1).replace('"', '""') + '"'
            try:
                sample = conn.execute(f"SELECT * FROM {quoted} LIMIT ?", (rows,)).fetchall()
            except sqlite3.Error:
                continue
            lines += [f"#   {tuple(row)!r}" for row in sample]
    return "\n".join(lines)


def adapt(suite: Suite, config: SuiteConfig) -> Suite:
    """A config's options on a loaded suite: the environment's tasks only; without tools, the database tasks with
    no tool (the schema is already in their prompt)."""
    options = config if isinstance(config, MiddlewareOptions) else MiddlewareOptions()
    scenarios = [s for s in suite.scenarios if options.environment in ("all", s.metadata.get("environment"))]
    if not options.tools:
        scenarios = [s.model_copy(update={"tools": [], "metadata": {**s.metadata, "tools": False}}) for s in scenarios]
    if options.sql_errors != "sqlite" or options.sample_rows:
        assert isinstance(suite.toolbox, MiddlewareToolBox)
        box = suite.toolbox.boxes[DATABASE]
        assert isinstance(box, DatabaseToolBox)
        scenarios = [_database_options(s, options, box.databases) for s in scenarios]
    if not scenarios:
        raise ConfigError(f"suite {suite.name}: no {options.environment} task in it", field="environment")
    return Suite(suite.name, suite.family, suite.version, suite.toolbox, scenarios, suite.skipped)
