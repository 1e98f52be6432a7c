"""Build the ``liveapi`` suite from a Spider- or BIRD-format folder, and apply a suite's options when it is loaded.

Live API-Bench (§3, appendix D) turns each text-to-SQL question into three tool formulations:

- **SLOT**: the seven general data tools with slots (conditions, aggregations, column enums per query);
- **SEL**: the categorical slots expanded into separate functions, plus one getter per column;
- **REST**: one GET endpoint per question, served live over HTTP.

``build`` compiles every question (``plan.py`` and ``sequences.py`` for SLOT and SEL, ``endpoints.py`` for REST),
runs each gold sequence through the real tools (the REST endpoint's SQL with its gold values) and keeps only the
items whose result reproduces the gold SQL's, as the paper does. Everything skipped is counted by reason. One
suite folder holds all three formulations; the suite options (:class:`LiveApiOptions`) pick a formulation and a
mode (direct sequence or ReAct agent) and turn on the ablations (obfuscated names, a shortlisted tool set) when the
suite is loaded, without a rebuild.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import random
import sqlite3
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from undertow.env_core.errors import close_match
from undertow.env_core.families import FolderSuite, ReportTable, SuiteConfig
from undertow.env_core.liveapi.endpoints import Endpoint, dedupe, endpoint_key, rest_endpoint
from undertow.env_core.liveapi.operations import jsonable
from undertow.env_core.liveapi.plan import QueryPlan, plan_query, table_columns
from undertow.env_core.liveapi.prompts import agent_prompt, sql_task
from undertow.env_core.liveapi.rest import endpoint_rows
from undertow.env_core.liveapi.sequences import GoldCall, labels_of, sel_sequence, slot_sequence
from undertow.env_core.liveapi.specs import (
    aggregate_getter_spec,
    getter_spec,
    rest_spec,
    sel_general_specs,
    slot_specs,
)
from undertow.env_core.liveapi.toolbox import LiveApiToolBox
from undertow.env_core.liveapi.vocabulary import (
    AGGREGATIONS,
    FORMULATIONS,
    Column,
    aggregate_getter_name,
    getter_name,
    sel_general_tool_names,
)
from undertow.env_core.liveapi.vocabulary import (
    FAMILY as FAMILY,
)
from undertow.env_core.model import SCHEMA_VERSION, Gold, PlannedCall, Scenario, Strict, ToolSpec
from undertow.env_core.spider import Problem, Question, Schema, SpiderData, SpiderSuite, read_spider
from undertow.env_core.sqlgold import GoldAnswer, gold_answer, left_out_table, same_rows
from undertow.env_core.suites import Suite, write_suite
from undertow.env_core.tools import ToolBox, ToolExecutionError

SUITE_VERSION = "1"
REACT_BUDGET = 10  # the paper's think-act-observe budget (appendix F)
SHORTLISTS = (10, 25, 50, 75, 100)  # percent of the tool universe (appendix B.2)
DATA_SOURCE = "data_source"
STARTING_NOTE = "The data for this question is available as $starting_table_var$."

# Live API-Bench Table 2 (11 BIRD dev databases), shown beside this build's figures
PAPER_TABLE_2 = {
    "slot": {"queries": 665, "tools": 7, "available": 7, "calls": 2.7, "slots": 3.29},
    "sel": {"queries": 651, "tools": 1256, "available": 49, "calls": 2.9, "slots": 0.05},
    "rest": {"queries": 1257, "tools": 1250, "available": 125, "calls": 1.0, "slots": 1.38},
}


# ---------------------------------------------------------------------------------------------------------------
# Configs: the source-data suite and the built folder take the same options


MODES = ("direct", "tools", "react", "sql")


class LiveApiOptions(Strict):
    """How a built liveapi suite is run: which formulation, which mode, how replies are read, and the paper's two
    ablations."""

    OPTION_FIELDS: ClassVar[frozenset[str]] = frozenset({"formulation", "mode", "parsing", "obfuscate", "shortlist"})

    formulation: Literal["all", "slot", "sel", "rest"] = Field(
        default="all", description="the tool formulation to run: slot, sel, rest, or all three"
    )
    mode: Literal["direct", "tools", "react", "sql"] = Field(
        default="direct",
        description="direct: the model writes the whole call sequence at once, the tools in the prompt (appendix "
        "E); tools: the same with the tools in the request's tools parameter and the calls as native tool calls "
        f"(Table 3's '(Tools)' rows); react: a ReAct agent with a {REACT_BUDGET}-turn budget that reads each "
        "observation (appendix F); sql: the same questions answered by one SQL query written from the database's "
        "schema and run on it (appendix B.3, Table 6)",
    )
    parsing: Literal["strict", "lenient"] = Field(
        default="strict",
        description="direct mode: strict reads a reply as the calls alone (prose around them is an instruction-"
        "alignment failure, as the paper reads replies); lenient digs calls out of reasoning text too (an undertow "
        "option; its rows are marked in the tables)",
    )
    obfuscate: bool = Field(
        default=False, description="ablation: tool names FUNC_n and argument names ARG_n, descriptions kept"
    )
    shortlist: int = Field(
        default=100,
        description="ablation: the percent of the formulation's tools offered per query (10, 25, 50, 75 or 100), "
        "the gold tools always among them",
    )

    @field_validator("shortlist")
    @classmethod
    def _known_share(cls, value: int) -> int:
        if value not in SHORTLISTS:
            raise ValueError(f"expected one of {', '.join(map(str, SHORTLISTS))} (percent), got {value}")
        return value

    @model_validator(mode="after")
    def _options_fit_the_mode(self) -> LiveApiOptions:
        if self.parsing == "lenient" and self.mode != "direct":
            raise ValueError(f"parsing: lenient reads direct-mode replies only; mode {self.mode} reads its own way")
        if self.mode == "sql" and (self.obfuscate or self.shortlist != 100):
            raise ValueError("mode sql offers no tools: obfuscate and shortlist do not apply")
        return self

    def options_label(self) -> str:
        parts: list[str] = [self.formulation, self.mode]
        if self.parsing != "strict":
            parts.append(self.parsing)
        if self.obfuscate:
            parts.append("obfuscated")
        if self.shortlist != 100:
            parts.append(f"{self.shortlist}%")
        return "-".join(parts)

    def agent_overrides(self) -> dict[str, Any]:
        """The mode is the agent protocol, with the paper's prompt for it: one reply and no second try in the
        direct modes (an unreadable reply is the model's failure), the ReAct budget."""
        prompt = agent_prompt(self.mode, self.formulation)
        if self.mode == "react":
            return {"protocol": "react", "max_turns": REACT_BUDGET, "react_prompt": prompt}
        tools = "native" if self.mode == "tools" else "prompt"
        return {
            "protocol": "direct",
            "direct_prompt": prompt,
            "direct_tools": tools,
            "direct_parser": self.parsing,
            "max_parse_errors": 1,
        }


class LiveApiSuite(LiveApiOptions, SpiderSuite):
    """A liveapi suite built from a Spider- or BIRD-format folder (cached by content)."""

    USE_FIELDS: ClassVar[frozenset[str]] = SuiteConfig.USE_FIELDS | LiveApiOptions.OPTION_FIELDS

    family: Literal["liveapi"] = FAMILY  # type: ignore[assignment]

    def source_name(self) -> str:
        return f"{Path(self.spider).name}:{self.options_label()}"


class LiveApiFolder(LiveApiOptions, FolderSuite):
    """A built liveapi folder (``undertow build liveapi --spider DIR --out OUT``) with its options."""

    def source_name(self) -> str:
        return f"{Path(self.path).name}:{self.options_label()}"


# ---------------------------------------------------------------------------------------------------------------
# Reproduction: a gold sequence must return the gold SQL's rows


def _value(value: Any) -> Any:
    """A cell as the reproduction check compares it: numbers by value (1 == 1.0), floats to 9 digits."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        rounded = round(value, 9)
        return int(rounded) if rounded == int(rounded) else rounded
    return value


def output_rows(output: Any) -> list[tuple[Any, ...]]:
    """A sequence's output as rows: records -> their values in order, lists of values -> one-column rows."""
    if isinstance(output, dict):
        output = [output]
    if not isinstance(output, list):
        return [(_value(output),)]
    rows = []
    for item in output:
        if isinstance(item, dict):
            rows.append(tuple(_value(v) for v in item.values()))
        elif isinstance(item, list | tuple):
            rows.append(tuple(_value(v) for v in item))
        else:
            rows.append((_value(item),))
    return rows


def columns_output(columns: list[Any]) -> list[tuple[Any, ...]]:
    """Several getters' columns (SEL) zipped into rows."""
    lists = [c if isinstance(c, list) else [c] for c in columns]
    if len({len(c) for c in lists}) != 1:
        return [tuple(_value(v) for v in c) for c in lists]  # unequal lengths never match the gold rows
    return [tuple(_value(v) for v in row) for row in zip(*lists, strict=True)]


def _run_sequence(toolbox: LiveApiToolBox, scenario: Scenario, calls: list[GoldCall]) -> list[tuple[Any, ...]]:
    """Run a gold sequence through the real tools (arguments validated against the episode's specs, as an agent's
    are) and return its output rows: the results of the data-returning calls at its end."""
    state = toolbox.new_state()
    try:
        toolbox.start(state, scenario)
        data: list[Any] = []
        for call in calls:
            spec = toolbox.episode_spec(toolbox.specs[call.tool], scenario)
            problem = toolbox.argument_error(spec, call.arguments)
            if problem is not None:
                raise ToolExecutionError(problem)
            result = toolbox.execute(state, spec, dict(call.arguments))
            if spec.binding.get("returns") == "data":
                data.append(result)
            else:
                data = []
        if len(data) == 1:
            return output_rows(data[0])
        return columns_output(data)
    finally:
        toolbox.close_state(state)


# ---------------------------------------------------------------------------------------------------------------
# Building


def _slots(arguments: Mapping[str, Any]) -> int:
    """Slots a model fills in one call: its arguments but the data reference (which only chains the calls)."""
    return sum(1 for name in arguments if name != DATA_SOURCE)


def _scenario(
    formulation: str,
    question: Question,
    answer: GoldAnswer,
    calls: list[GoldCall],
    tools: list[str],
    data_tools: set[str],
    plan: QueryPlan | None,
) -> Scenario:
    task = question.text if formulation == "rest" else f"{question.text}\n{STARTING_NOTE}"
    setup = {"database": question.db_id, "sql": plan.setup_sql} if plan is not None and formulation != "rest" else None
    columns = (
        [{"key": c.key, "description": c.description, "dtype": c.dtype} for c in plan.columns]
        if plan is not None and formulation != "rest"
        else []
    )
    return Scenario(
        schema_version=SCHEMA_VERSION,
        id=f"{FAMILY}/{formulation}/{question.db_id}/{question.index:04d}",
        family=FAMILY,
        task=task,
        tools=tools,
        gold=Gold(
            answer=answer.rows,
            ordered=answer.ordered,
            tie_groups=answer.tie_groups,
            plans=[[PlannedCall(tool=c.tool, arguments=dict(c.arguments)) for c in calls]],
            # several getters end a SEL sequence: the answer is their columns as rows, not the last column alone
            reports=[json.dumps(jsonable(answer.rows))] if sum(c.label is None for c in calls) > 1 else [],
        ),
        metadata={
            "formulation": formulation,
            "database": question.db_id,
            "question": question.index,
            "sql": question.query,
            "liveapi": {
                "setup": setup,
                "columns": columns,
                "labels": labels_of(calls),
                "data_tools": [t for t in tools if t in data_tools],
                "slots": sum(_slots(c.arguments) for c in calls),
            },
        },
    )


def _missing_database(question: Question, data: SpiderData) -> Problem:
    hint = close_match(question.db_id, sorted(data.schemas))
    known = "no schema in tables.json" if question.db_id not in data.schemas else "no database file"
    return Problem(
        f"question {question.index}",
        "unknown database",
        f"database '{question.db_id}': {known}" + (f"; {hint}" if hint else ""),
    )


def build_suite(
    folder: Path, questions_file: str | None = None
) -> tuple[list[ToolSpec], list[Scenario], dict[str, Any]]:
    """Compile a Spider-format folder: the tool universe, the scenarios of every formulation, and the build stats
    (kept and skipped per formulation, by reason)."""
    data = read_spider(folder, questions_file)
    # per formulation, the questions skipped and why; problems of the folder itself (a missing database file) apart
    problems: dict[str, list[Problem]] = {f: [] for f in FORMULATIONS}
    left_out: list[tuple[str, str]] = []  # (database, kind) of the questions whose gold is no one answer
    usable: list[Question] = []
    for question in data.questions:
        if question.db_id in data.schemas and question.db_id in data.databases:
            usable.append(question)
        else:
            for formulation in FORMULATIONS:
                problems[formulation].append(_missing_database(question, data))

    # the universe: SLOT's seven tools, SEL's general tools and a getter per column of every database
    schemas: dict[str, Schema] = {db: data.schemas[db] for db in sorted(data.databases) if db in data.schemas}
    slot = slot_specs()
    sel = sel_general_specs()
    getters: dict[str, ToolSpec] = {}
    connections = {db: sqlite3.connect(f"file:{data.databases[db]}?mode=ro", uri=True) for db in schemas}
    try:
        planned: dict[int, QueryPlan] = {}
        endpoints: dict[int, Endpoint] = {}
        gold: dict[int, GoldAnswer] = {}
        for question in usable:
            found = gold_answer(connections[question.db_id], question.query, question.text)
            if isinstance(
                found, tuple
            ):  # no one answer: the gold fails, is empty for a question asking for rows, or ties
                kind, reason = found
                left_out.append((question.db_id, kind))
                for formulation in FORMULATIONS:
                    problems[formulation].append(Problem(f"question {question.index}", kind, reason))
                continue
            gold[question.index] = found
            plan = plan_query(question, schemas[question.db_id])
            if isinstance(plan, Problem):
                problems["slot"].append(plan)
                problems["sel"].append(plan)
            else:
                planned[question.index] = plan
            endpoint = rest_endpoint(question, schemas[question.db_id])
            if isinstance(endpoint, Problem):
                problems["rest"].append(endpoint)
            else:
                endpoints[question.index] = endpoint
    finally:
        for conn in connections.values():
            conn.close()

    for schema in schemas.values():
        for table in schema.tables:
            for column in table_columns(schema, table):
                getters.setdefault(getter_name(column.key), getter_spec(column))
    for aggregation in AGGREGATIONS:
        getters.setdefault(aggregate_getter_name(aggregation), aggregate_getter_spec(aggregation))
    unique = dedupe(list(endpoints.values()))
    rest = {key: rest_spec(endpoint) for key, endpoint in unique.items()}
    # SLOT and SEL share group_data_by and select_unique_values: one spec each
    universe = list(
        {s.name: s for s in [*slot, *sel, *sorted(getters.values(), key=lambda s: s.name), *rest.values()]}.values()
    )
    toolbox = LiveApiToolBox(universe, {db: data.databases[db] for db in schemas})

    by_question = {q.index: q for q in usable}
    scenarios: list[Scenario] = []
    kept: dict[str, list[Scenario]] = {f: [] for f in FORMULATIONS}
    data_tools = {s.name for s in universe if s.binding.get("returns") == "data"}
    rest_by_db: dict[str, list[str]] = {}
    for endpoint in unique.values():
        rest_by_db.setdefault(endpoint.database, []).append(endpoint.name)
    try:
        for index, plan in planned.items():
            question = by_question[index]
            answer = gold[index]
            readable = sel_getter_names(plan.columns)
            for formulation, calls in (("slot", slot_sequence(plan)), ("sel", sel_sequence(plan))):
                tools = [s.name for s in slot] if formulation == "slot" else [*sel_general_tool_names(), *readable]
                scenario = _scenario(formulation, question, answer, calls, tools, data_tools, plan)
                problem = _reproduction_problem(toolbox, data.databases, scenario, calls, answer)
                if problem is None:
                    kept[formulation].append(scenario)
                else:
                    problems[formulation].append(problem)
        for index, endpoint in endpoints.items():
            question = by_question[index]
            answer = gold[index]
            final = unique[endpoint_key(endpoint)]
            call = GoldCall(final.name, {p.name: p.value for p in endpoint.params}, None)
            tools = sorted(rest_by_db[endpoint.database])
            scenario = _scenario("rest", question, answer, [call], tools, data_tools, None)
            problem = _reproduction_problem(toolbox, data.databases, scenario, [call], answer)
            if problem is None:
                kept["rest"].append(scenario)
            else:
                problems["rest"].append(problem)
    finally:
        toolbox.close()
    for formulation in FORMULATIONS:
        scenarios.extend(sorted(kept[formulation], key=lambda s: s.id))
    used = {t for s in scenarios for t in s.tools}
    # SLOT's and SEL's tool sets whole (a getter no kept question reads is still an offered tool); used endpoints
    kept_tools = [spec for spec in universe if spec.name in used or spec.binding.get("kind") in ("slot", "sel")]
    stats = _stats(len(data.questions), kept, kept_tools, problems)
    stats["databases"] = _database_counts(data.questions, gold, by_question, left_out)
    return (
        kept_tools,
        scenarios,
        {
            "stats": stats,
            "problems": {f: [dataclasses.asdict(p) for p in ps] for f, ps in problems.items()},
            "folder_problems": [dataclasses.asdict(p) for p in data.problems],
        },
    )


def sel_getter_names(columns: list[Column]) -> list[str]:
    """The getters SEL offers for a starting table, as the paper does: one per column key, and one per aggregation
    (which reads the aggregate an aggregate_data_* call stored, whatever key it aggregated)."""
    return [*(getter_name(c.key) for c in columns), *(aggregate_getter_name(a) for a in AGGREGATIONS)]


def _reproduction_problem(
    toolbox: LiveApiToolBox,
    databases: Mapping[str, Path],
    scenario: Scenario,
    calls: list[GoldCall],
    answer: GoldAnswer,
) -> Problem | None:
    """None when the gold sequence returns the gold rows; else why not (the item is dropped, as in the paper)."""
    item = f"question {scenario.metadata['question']}"
    try:
        if scenario.metadata["formulation"] == "rest":
            # the endpoint's own SQL with the gold values: what its server runs (checked over HTTP by the tests)
            spec = toolbox.specs[calls[0].tool]
            with sqlite3.connect(f"file:{databases[spec.binding['database']]}?mode=ro", uri=True) as conn:
                output = output_rows(endpoint_rows(conn, spec, dict(calls[0].arguments)))
        else:
            output = _run_sequence(toolbox, scenario, calls)
    except (ToolExecutionError, sqlite3.Error, ValueError) as exc:  # ValueError: an argument the endpoint refuses
        return Problem(item, "sequence fails", str(exc))
    gold_rows = [tuple(_value(v) for v in row) for row in answer.rows]
    if not same_rows(output, gold_rows, answer.ordered, answer.tie_groups):
        return Problem(item, "result differs from SQL", f"{len(output)} rows, the gold SQL {len(gold_rows)}")
    return None


def _database_counts(
    questions: Sequence[Question],
    gold: Mapping[int, GoldAnswer],
    usable: Mapping[int, Question],
    left_out: Sequence[tuple[str, str]],
) -> dict[str, dict[str, int]]:
    """Per database: its questions, those whose gold answer is kept, and those left out for a tie at the LIMIT
    cut or an empty result (the gold answer's own checks, before any formulation is compiled)."""
    counts: dict[str, Counter[str]] = {}
    for question in questions:
        counts.setdefault(question.db_id, Counter())["questions"] += 1
    for index in gold:
        counts[usable[index].db_id]["kept"] += 1
    for database, kind in left_out:
        counts[database][kind] += 1
    return {db: dict(c) for db, c in sorted(counts.items())}


def _mean(values: list[int]) -> float:
    return round(sum(values) / len(values), 2) if values else 0.0


def _stats(
    questions: int, kept: dict[str, list[Scenario]], tools: list[ToolSpec], problems: dict[str, list[Problem]]
) -> dict[str, Any]:
    universe = {f: sum(1 for t in tools if f in t.binding.get("formulations", ())) for f in FORMULATIONS}
    out: dict[str, Any] = {"questions": questions, "formulations": {}}
    for formulation in FORMULATIONS:
        scenarios = kept[formulation]
        n = len(scenarios)
        out["formulations"][formulation] = {
            "queries": n,
            "tools": universe[formulation],
            "available": _mean([len(s.tools) for s in scenarios]),
            "calls": _mean([len(s.gold.plans[0]) for s in scenarios]),
            "slots": _mean([s.metadata["liveapi"]["slots"] for s in scenarios]),
            "no_slots": round(sum(1 for s in scenarios if not s.metadata["liveapi"]["slots"]) / n, 3) if n else 0.0,
            "skipped": len(problems[formulation]),
            "skipped_by_kind": dict(Counter(p.kind for p in problems[formulation]).most_common()),
        }
    return out


def build_tables(stats: dict[str, Any], folder_problems: Sequence[Mapping[str, str]] = ()) -> list[ReportTable]:
    """Table 2 of the paper for this build (beside the paper's figures), and what was skipped and why."""
    table = ReportTable(
        title=f"{FAMILY} build (Table 2): {stats['questions']} questions in",
        columns=[
            "dataset",
            "queries",
            "tools",
            "tools avail./query",
            "calls/query",
            "slots/query",
            "with no slot",
            "skipped",
        ],
        right=[False, True, True, True, True, True, True, True],
    )
    for formulation in FORMULATIONS:
        row = stats["formulations"][formulation]
        table.rows.append(
            [
                formulation.upper(),
                f"{row['queries']:,}",
                f"{row['tools']:,}",
                f"{row['available']:.1f}",
                f"{row['calls']:.2f}",
                f"{row['slots']:.2f}",
                f"{100 * row.get('no_slots', 0.0):.0f}%",
                f"{row['skipped']:,}",
            ]
        )
    for formulation in FORMULATIONS:
        paper = PAPER_TABLE_2[formulation]
        table.rows.append(
            [
                f"{formulation.upper()}-BIRD (paper)",
                f"{paper['queries']:,}",
                f"{paper['tools']:,}",
                f"{paper['available']:.0f}",
                f"{paper['calls']:.2f}",
                f"{paper['slots']:.2f}",
                "",
                "",
            ]
        )
    table.sections = [len(FORMULATIONS)]
    table.note = (
        "slots/query counts the arguments a model fills, the data_source reference excepted (REST: the endpoint's "
        "parameters, all of which the gold call sets); with no slot: the share of queries whose gold calls fill "
        "none; tools avail./query: the candidates offered per query (REST: every endpoint of its database); the "
        "paper's rows are its 11 BIRD dev databases"
    )
    kinds = sorted({k for f in FORMULATIONS for k in stats["formulations"][f]["skipped_by_kind"]})
    skipped = ReportTable(
        title="skipped items, by reason",
        columns=["reason", *[f.upper() for f in FORMULATIONS]],
        right=[False, True, True, True],
    )
    skipped.rows = [
        [kind, *[f"{stats['formulations'][f]['skipped_by_kind'].get(kind, 0):,}" for f in FORMULATIONS]]
        for kind in kinds
    ]
    tables = [table, skipped] if kinds else [table]
    if stats.get("databases"):
        kept = "the questions whose gold is one answer, before a formulation compiles them (Table 2 counts those)"
        tables.append(left_out_table(stats["databases"], "gold answers by database", kept))
    if folder_problems:
        folder = ReportTable(title="problems with the folder itself", columns=["item", "kind", "reason"])
        folder.rows = [[p["item"], p["kind"], p["reason"]] for p in folder_problems]
        tables.append(folder)
    return tables


def source_digest(config: SuiteConfig) -> str:
    assert isinstance(config, LiveApiSuite)
    folder = Path(config.spider)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: Spider folder not found")
    # the package's own source joins the digest: a build made by older compiler code is not reused from the cache
    source = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        source.update(path.read_bytes())
    digest = read_spider(folder, config.questions).digest
    return hashlib.sha256(f"{digest}:{source.hexdigest()}:{SUITE_VERSION}".encode()).hexdigest()


def build(config: SuiteConfig, out: Path) -> list[ReportTable]:
    """Compile the config's Spider folder into a suite folder; returns Table 2 and the skipped items."""
    assert isinstance(config, LiveApiSuite)
    folder = Path(config.spider)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: Spider folder not found")
    tools, scenarios, report = build_suite(folder, config.questions)
    databases = sorted({s.metadata["database"] for s in scenarios})
    spider = read_spider(folder, config.questions)
    write_suite(
        out,
        name=f"{FAMILY}:{folder.name}",
        family=FAMILY,
        version=SUITE_VERSION,
        tools=tools,
        scenarios=scenarios,
        databases={db: spider.databases[db] for db in databases},
        extra={"build.json": report},
    )
    return build_tables(report["stats"], report["folder_problems"])


def toolbox(specs: list[ToolSpec], databases: Mapping[str, Path]) -> LiveApiToolBox:
    return LiveApiToolBox(specs, databases)


# ---------------------------------------------------------------------------------------------------------------
# Options, applied when a suite is loaded


class ObfuscatedToolBox(ToolBox):
    """The tools under obfuscated names (``FUNC_n``, arguments ``ARG_n``; descriptions kept, appendix B.1): each
    call is translated back and run by the real tool box."""

    def __init__(self, inner: LiveApiToolBox, names: dict[str, str], arguments: dict[str, dict[str, str]]):
        self.inner = inner
        self.names = names  # tool -> FUNC_n
        self.original = {new: old for old, new in names.items()}  # FUNC_n -> tool
        self.arguments = arguments  # tool -> argument -> ARG_n
        super().__init__(self._renamed(spec) for spec in inner.specs.values() if spec.name in names)

    def _renamed(self, spec: ToolSpec) -> ToolSpec:
        parameters = _rename_parameters(spec.parameters, self.arguments[spec.name])
        return spec.model_copy(update={"name": self.names[spec.name], "parameters": parameters})

    def _back(self, spec: ToolSpec, arguments: dict[str, Any]) -> tuple[ToolSpec, dict[str, Any]]:
        tool = self.original[spec.name]
        back = {v: k for k, v in self.arguments[tool].items()}
        return self.inner.specs[tool], {back.get(k, k): v for k, v in arguments.items()}

    def new_state(self) -> Any:
        return self.inner.new_state()

    def start(self, state: Any, scenario: Scenario) -> None:
        self.inner.start(state, scenario)

    def close_state(self, state: Any) -> None:
        self.inner.close_state(state)

    def fork_state(self, state: Any) -> Any:
        return self.inner.fork_state(state)

    def episode_spec(self, spec: ToolSpec, scenario: Scenario) -> ToolSpec:
        original, _ = self._back(spec, {})
        return self._renamed(self.inner.episode_spec(original, scenario))

    def argument_error(self, spec: ToolSpec, arguments: dict[str, Any]) -> str | None:
        if spec.binding.get("kind") == "rest":  # the live server validates REST calls (see LiveApiToolBox)
            original, back = self._back(spec, arguments)
            return self.inner.argument_error(original, back)
        return super().argument_error(spec, arguments)

    def execute(self, state: Any, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        original, back = self._back(spec, arguments)
        back_names = {v: k for k, v in self.arguments[original.name].items()}
        narrowed = original.model_copy(update={"parameters": _rename_parameters(spec.parameters, back_names)})
        return self.inner.execute(state, narrowed, back)


def _rename_parameters(parameters: dict[str, Any], mapping: dict[str, str]) -> dict[str, Any]:
    """A JSON schema with its properties (and the required list) renamed by ``mapping``; a name not in it is kept."""
    out = dict(parameters)
    out["properties"] = {mapping.get(k, k): v for k, v in parameters.get("properties", {}).items()}
    if "required" in out:
        out["required"] = [mapping.get(k, k) for k in out["required"]]
    return out


def _obfuscation(tools: list[ToolSpec]) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """FUNC_n per tool (in universe order) and ARG_n per argument (numbered across the universe, as the paper's
    listing 6 shows ARG_1 for a tool's first argument)."""
    names = {spec.name: f"FUNC_{n}" for n, spec in enumerate(tools)}
    arguments = {
        spec.name: {arg: f"ARG_{i}" for i, arg in enumerate(spec.parameters.get("properties", {}), start=1)}
        for spec in tools
    }
    return names, arguments


def _rename_scenario(scenario: Scenario, names: dict[str, str], arguments: dict[str, dict[str, str]]) -> Scenario:
    plans = [
        [
            call.model_copy(
                update={
                    "tool": names[call.tool],
                    "arguments": {arguments[call.tool].get(k, k): v for k, v in call.arguments.items()},
                }
            )
            for call in plan
        ]
        for plan in scenario.gold.plans
    ]
    metadata = json.loads(json.dumps(scenario.metadata))
    metadata["liveapi"]["data_tools"] = [names[t] for t in metadata["liveapi"]["data_tools"]]
    metadata["liveapi"]["obfuscated"] = {names[t]: t for t in scenario.tools}
    return scenario.model_copy(
        update={
            "tools": [names[t] for t in scenario.tools],
            "gold": scenario.gold.model_copy(update={"plans": plans}),
            "metadata": metadata,
        }
    )


def shortlist(scenario: Scenario, universe: list[str], percent: int) -> list[str]:
    """The tools offered for one query at ``percent`` of the formulation's universe: the gold tools, then tools
    drawn at random (seeded by the scenario id) up to ceil(percent% of the universe) (appendix B.2)."""
    gold = list(dict.fromkeys(call.tool for plan in scenario.gold.plans for call in plan))
    size = max(len(gold), math.ceil(len(universe) * percent / 100))
    others = sorted(t for t in universe if t not in gold)
    rng = random.Random(int.from_bytes(hashlib.sha256(scenario.id.encode()).digest()[:8], "big"))
    rng.shuffle(others)
    chosen = set(gold) | set(others[: size - len(gold)])
    return [t for t in universe if t in chosen]


def adapt(suite: Suite, config: SuiteConfig) -> Suite:
    """Apply a config's options to a loaded liveapi suite: one formulation (or all), the mode and parsing recorded
    on each scenario (its metrics differ), the SQL mode's questions, a shortlisted tool set, obfuscated names."""
    options = config if isinstance(config, LiveApiOptions) else LiveApiOptions()
    scenarios = [s for s in suite.scenarios if options.formulation in ("all", s.metadata.get("formulation"))]
    out: list[Scenario] = []
    schemas: dict[str, str] = {}
    for scenario in scenarios:
        metadata = {**scenario.metadata, "mode": options.mode, "parsing": options.parsing}
        if options.mode == "sql":
            assert isinstance(suite.toolbox, LiveApiToolBox)
            scenario = _as_sql_question(scenario, suite.toolbox, schemas)
        elif options.shortlist != 100:
            universe = _formulation_universe(suite, scenario)
            scenario = scenario.model_copy(update={"tools": shortlist(scenario, universe, options.shortlist)})
        out.append(scenario.model_copy(update={"metadata": metadata}))
    toolbox = suite.toolbox
    if options.obfuscate:
        assert isinstance(toolbox, LiveApiToolBox)
        names, arguments = _obfuscation(list(toolbox.specs.values()))
        toolbox = ObfuscatedToolBox(toolbox, names, arguments)
        out = [_rename_scenario(s, names, arguments) for s in out]
    return Suite(suite.name, suite.family, suite.version, toolbox, out, suite.skipped)


def database_schema(path: Path) -> str:
    """A database's schema as its CREATE TABLE statements (what the SQL mode shows the model)."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
            "ORDER BY rowid"
        ).fetchall()
    return "\n".join(f"{' '.join(str(sql).split())};" for (sql,) in rows)


def _as_sql_question(scenario: Scenario, toolbox: LiveApiToolBox, schemas: dict[str, str]) -> Scenario:
    """A scenario of the SQL mode (Table 6): no tools; the task is the question after its database's schema; the
    gold answer is the same rows, and the built-in policies' plan is to answer with the gold SQL at once."""
    database = str(scenario.metadata["database"])
    if database not in schemas:
        schemas[database] = database_schema(toolbox.databases[database])
    question = scenario.task.removesuffix(f"\n{STARTING_NOTE}")
    gold = scenario.gold.model_copy(update={"plans": [[]], "reports": [str(scenario.metadata["sql"])]})
    return scenario.model_copy(update={"tools": [], "task": sql_task(question, schemas[database]), "gold": gold})


def _formulation_universe(suite: Suite, scenario: Scenario) -> list[str]:
    """The tools a query could be offered: SLOT's and SEL's own tools, or every endpoint of its database (REST, as
    the paper's Table 5 counts them)."""
    formulation = scenario.metadata.get("formulation")
    if formulation == "rest":
        database = scenario.metadata.get("database")
        return [n for n, s in suite.toolbox.specs.items() if s.binding.get("database") == database]
    return [n for n, s in suite.toolbox.specs.items() if formulation in s.binding.get("formulations", ())]
