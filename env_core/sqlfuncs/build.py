"""Build the ``sqlfuncs`` suite from a Spider-format folder: functions, backup-plan scenarios, and a build summary.

``build_suite`` compiles every question (see ``compile.py``), applies the paper's quality filters in order
(empty result, more than 100 rows, no nested SELECT, no chain equal to gold), names and documents the functions,
makes one scenario per kept question plus seeded augmentations, and counts what each stage kept and why items were
skipped. ``write_build`` writes a suite folder that ``env_core.suites.load_suite`` reads; building twice
with the same inputs and seed gives byte-identical files.
"""

from __future__ import annotations

import random
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import sqlglot
from pydantic import Field, field_validator
from sqlglot import exp

from env_core.families import ReportTable, SuiteConfig, resolve_path
from env_core.model import SCHEMA_VERSION, ArgRef, Gold, PlannedCall, Scenario, ToolSpec
from env_core.sqlfuncs.compile import (
    ARGUMENT_WORDS,
    FAMILY,
    JSON_TYPES,
    MAX_ROWS,
    Compiled,
    FunctionDraft,
    Problem,
    SpiderData,
    compile_question,
    read_spider,
    run_chain,
    run_direct,
    same_rows,
)
from env_core.sqlfuncs.tools import SqlFunctionToolBox
from env_core.suites import write_suite
from env_core.tools import fetch_rows

SUITE_VERSION = "1"
_PLACEHOLDER = re.compile(r":a(\d+)\b")


@dataclass
class BuiltSuite:
    name: str
    tools: list[ToolSpec]
    scenarios: list[Scenario]
    databases: dict[str, Path]
    stats: dict[str, Any]
    problems: list[Problem] = field(default_factory=list)
    tables: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # database -> table -> columns


def _function_names(drafts: list[FunctionDraft], digest: str, seed: int) -> dict[str, tuple[str, list[str]]]:
    """function key -> (``function_<n>``, argument names), deterministic per (dataset, seed)."""
    keys = sorted({d.key: d for d in drafts})
    by_key = {d.key: d for d in drafts}
    random.Random(f"{digest}:{seed}:functions").shuffle(keys)
    names = {}
    for number, key in enumerate(keys, start=1):
        rng = random.Random(f"{digest}:{seed}:{key}")
        names[key] = (f"function_{number}", rng.sample(ARGUMENT_WORDS, len(by_key[key].params)))
    return names


def _document(draft: FunctionDraft, arguments: list[str]) -> tuple[str, dict[str, Any]]:
    """Template documentation: what the query returns, from which tables, under which conditions."""
    tree = sqlglot.parse_one(draft.sql, read="sqlite")
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    tables = sorted({t.name for t in tree.find_all(exp.Table) if t.name and t.name.lower() != "json_each"})
    columns = ", ".join(e.sql("sqlite") for e in select.expressions) if select is not None else "rows"

    def named(sql: str) -> str:
        return _PLACEHOLDER.sub(lambda m: arguments[int(m.group(1))], sql)

    text = f"Returns {named(columns)} from the {', '.join(f'`{t}`' for t in tables)} table(s) of the `{draft.db_id}`"
    text += " database"
    clauses = []
    if select is not None:
        for key, label in (("where", "where"), ("group", "grouped by"), ("having", "having"), ("order", "ordered by")):
            node = select.args.get(key)
            if node is not None:
                clauses.append(f"{label} {named(node.sql('sqlite')).removeprefix(key.upper()).strip()}")
    if not isinstance(tree, exp.Select):
        clauses.append(f"combined with {type(tree).__name__.upper()} of a second query")
    text += (", " + "; ".join(clauses) if clauses else "") + "."
    properties = {}
    for name, param in zip(arguments, draft.params, strict=True):
        if param.type == "list":
            description = f"list of `{param.source}` values (one per row), e.g. a column of another function's output"
            schema: dict[str, Any] = {"type": "array", "description": description}
        else:
            target = f"`{param.column[0]}.{param.column[1]}`" if param.column else "the query's condition"
            schema = {"type": JSON_TYPES[param.type], "description": f"a {param.type} value for {target}"}
        properties[name] = schema
    parameters = {
        "type": "object",
        "properties": properties,
        "required": list(arguments),
        "additionalProperties": False,
    }
    return text, parameters


def _tool(draft: FunctionDraft, name: str, arguments: list[str]) -> ToolSpec:
    description, parameters = _document(draft, arguments)
    sql = _PLACEHOLDER.sub(lambda m: ":" + arguments[int(m.group(1))], draft.sql)
    params = [
        {"name": a, "type": p.type, "column": list(p.column) if p.column else None}
        for a, p in zip(arguments, draft.params, strict=True)
    ]
    binding = {"sql": sql, "database": draft.db_id, "params": params, "role": draft.role}
    return ToolSpec(name=name, description=description, parameters=parameters, binding=binding)


def _plans(
    compiled: Compiled, names: dict[str, tuple[str, list[str]]], overrides: dict[int, Any]
) -> list[list[PlannedCall]]:
    def literal_args(draft: FunctionDraft) -> dict[str, Any]:
        arg_names = names[draft.key][1]
        return {arg_names[i]: overrides.get(p.start, p.value) for i, p in enumerate(draft.params) if p.type != "list"}

    direct = [PlannedCall(tool=names[compiled.direct.key][0], arguments=literal_args(compiled.direct))]
    *inners, outer = compiled.chain
    chain = [PlannedCall(tool=names[d.key][0], arguments=literal_args(d)) for d in inners]
    outer_args: dict[str, Any] = literal_args(outer)
    lists = [(names[outer.key][1][i], p) for i, p in enumerate(outer.params) if p.type == "list"]
    position = 0
    for call_index, columns in enumerate(compiled.chain_inputs):
        for column in columns:
            outer_args[lists[position][0]] = ArgRef(from_call=call_index, field=column, many=True)
            position += 1
    chain.append(PlannedCall(tool=names[outer.key][0], arguments=outer_args))
    return [direct, chain]


def _augmentations(
    compiled: Compiled, conn: sqlite3.Connection, rng: random.Random, wanted: int
) -> list[tuple[str, dict[int, Any], list[dict[str, Any]]]]:
    """Up to ``wanted`` variants that swap one literal quoted in the question for another value of its column,
    with the gold answer recomputed (and checked through the chain)."""
    found: list[tuple[str, dict[int, Any], list[dict[str, Any]]]] = []
    text = compiled.question.text
    for param in compiled.direct.params:
        if len(found) >= wanted:
            break
        if param.type != "str" or not param.column or not param.value or param.value not in text:
            continue
        table, column = param.column
        values = [
            r["v"]
            for r in fetch_rows(conn, f'SELECT DISTINCT "{column}" AS v FROM "{table}" WHERE "{column}" IS NOT NULL')
            if isinstance(r["v"], str) and r["v"] != param.value and r["v"].strip()
        ]
        values.sort()
        rng.shuffle(values)
        for value in values[:20]:
            overrides = {param.start: value}
            try:
                gold = run_direct(conn, compiled, overrides)
                if (
                    not gold
                    or len(gold) > MAX_ROWS
                    or not same_rows(run_chain(conn, compiled, overrides), gold, compiled.ordered)
                ):
                    continue
            except sqlite3.Error:
                continue
            found.append((text.replace(param.value, value, 1), overrides, gold))
            if len(found) >= wanted:
                break
    return found


STAGES = [
    "questions in",
    "parsed and ran",
    "non-empty result",
    "at most 100 rows",
    "nested SELECT",
    "both paths match gold (kept)",
]


def build_suite(
    spider: str | Path,
    seed: int = 0,
    augment: int = 1,
    questions_file: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> BuiltSuite:
    """Compile a Spider-format folder. ``augment`` is the number of augmented variants tried per kept question."""
    data: SpiderData = read_spider(spider, questions_file)
    problems = list(data.problems)
    connections = {
        db_id: sqlite3.connect(f"file:{path}?mode=ro", uri=True) for db_id, path in sorted(data.databases.items())
    }
    stages: Counter[str] = Counter()
    compiled_all: list[Compiled] = []
    kept: list[Compiled] = []
    for done, question in enumerate(data.questions, start=1):
        if progress is not None:
            progress(done, len(data.questions))
        stages["questions in"] += 1
        where = f"question {question.index}"
        if question.db_id not in data.schemas:
            problems.append(Problem(where, "no schema", f"database '{question.db_id}' is not in tables.json"))
            continue
        if question.db_id not in connections:
            problems.append(
                Problem(where, "database unusable", f"database '{question.db_id}' is missing or not SQLite")
            )
            continue
        result = compile_question(question, data.schemas[question.db_id], connections[question.db_id])
        if isinstance(result, Problem):
            problems.append(result)
            continue
        compiled_all.append(result)
        stages["parsed and ran"] += 1
        if not result.gold:
            continue
        stages["non-empty result"] += 1
        if len(result.gold) > MAX_ROWS:
            continue
        stages["at most 100 rows"] += 1
        if not result.nested:
            continue
        stages["nested SELECT"] += 1
        if result.chain:
            stages["both paths match gold (kept)"] += 1
            kept.append(result)

    drafts = [c.direct for c in compiled_all] + [d for c in kept for d in c.chain]
    names = _function_names(drafts, data.digest, seed)
    unique = {d.key: d for d in drafts}
    tools = sorted(
        (_tool(d, *names[key]) for key, d in unique.items()), key=lambda t: int(t.name.removeprefix("function_"))
    )
    # Zero-argument functions answer one fixed question: when one returns a scenario's gold rows it is a solution
    # too (typically a paraphrase's query), so it joins the gold plans instead of becoming a distractor.
    fixed_outputs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for tool in tools:
        if not tool.binding["params"] and tool.binding["database"] in {c.question.db_id for c in kept}:
            db = tool.binding["database"]
            fixed_outputs.setdefault(db, {})[tool.name] = fetch_rows(connections[db], tool.binding["sql"])
    scenarios: list[Scenario] = []
    augmented = 0
    for compiled in kept:
        q = compiled.question
        base_id = f"{FAMILY}-{q.db_id}-{q.index:04d}"
        variants: list[tuple[str, dict[int, Any], list[dict[str, Any]]]] = [(q.text, {}, compiled.gold)]
        rng = random.Random(f"{data.digest}:{seed}:augment:{q.index}")
        variants += _augmentations(compiled, connections[q.db_id], rng, augment) if augment > 0 else []
        for k, (text, overrides, gold) in enumerate(variants):
            plans = _plans(compiled, names, overrides)
            own = {call.tool for plan in plans for call in plan}
            plans += [
                [PlannedCall(tool=name)]
                for name, rows in fixed_outputs.get(q.db_id, {}).items()
                if name not in own and same_rows(rows, gold, compiled.ordered)
            ]
            scenarios.append(
                Scenario(
                    id=base_id if k == 0 else f"{base_id}-aug{k}",
                    variant_of=None if k == 0 else base_id,
                    family=FAMILY,
                    task=text,
                    tools=[call.tool for plan in plans for call in plan],
                    gold=Gold(answer=gold, ordered=compiled.ordered, plans=plans),
                    metadata={
                        "db_id": q.db_id,
                        "question_index": q.index,
                        "query": q.query,
                        "ordered": compiled.ordered,
                        "augmented": k > 0,
                        "chain_calls": len(plans[1]),
                        "equivalent_functions": len(plans) - 2,
                    },
                )
            )
            augmented += k > 0
    for conn in connections.values():
        conn.close()
    by_arity = Counter(min(len(t.binding["params"]), 4) for t in tools)
    stats = {
        "schema_version": SCHEMA_VERSION,
        "seed": seed,
        "dataset_sha256": data.digest,
        "stages": {stage: stages[stage] for stage in STAGES},
        "skipped": len(problems),
        "skipped_by_kind": dict(Counter(p.kind for p in problems).most_common()),
        "functions": len(tools),
        "functions_by_arguments": {("4+" if n == 4 else str(n)): by_arity.get(n, 0) for n in range(5)},
        "scenarios": len(scenarios),
        "scenarios_augmented": augmented,
    }
    used = sorted({s.metadata["db_id"] for s in scenarios} | {t.binding["database"] for t in tools})
    return BuiltSuite(
        name=Path(spider).name or "sqlfuncs",
        tools=tools,
        scenarios=scenarios,
        databases={db: data.databases[db] for db in used},
        stats=stats,
        problems=problems,
        tables={db: data.schemas[db].tables for db in used},
    )


def write_build(built: BuiltSuite, out: str | Path) -> Path:
    """Write the suite folder (see :func:`env_core.suites.write_suite`) with ``build.json``: the build summary,
    every skipped item, and the tables of each database (what a model documenting the functions is shown)."""
    summary = {
        **built.stats,
        "problems": [{"item": p.item, "kind": p.kind, "reason": p.reason} for p in built.problems],
        "tables": built.tables,
    }
    return write_suite(
        out,
        name=built.name,
        family=FAMILY,
        version=SUITE_VERSION,
        tools=built.tools,
        scenarios=built.scenarios,
        databases=built.databases,
        extra={"build.json": summary},
    )


class SqlfuncsSuite(SuiteConfig):
    """A Spider-format folder compiled into obfuscated SQL functions (the Hell-or-High-Water construction)."""

    family: Literal["sqlfuncs"] = "sqlfuncs"
    spider: str = Field(description="Spider-format folder: tables.json, questions, database/<db_id>/<db_id>.sqlite")
    seed: int = Field(default=0, ge=0, lt=2**31, description="naming and augmentation seed")
    augment: int = Field(default=1, ge=0, le=100, description="augmented variants per kept question")
    questions: str | None = Field(default=None, description="questions file name in the folder (default: dev.json)")

    _resolve_spider = field_validator("spider")(resolve_path)

    def source_name(self) -> str:
        return Path(self.spider).name


def source_digest(config: SuiteConfig) -> str:
    assert isinstance(config, SqlfuncsSuite)
    folder = Path(config.spider)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: Spider folder not found")
    return read_spider(folder, config.questions).digest


def build(config: SuiteConfig, out: Path, progress: Callable[[int, int], None] | None = None) -> list[ReportTable]:
    """Compile the config's Spider folder into a suite folder; returns the build summary as tables."""
    assert isinstance(config, SqlfuncsSuite)
    folder = Path(config.spider)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: Spider folder not found")
    built = build_suite(
        folder, seed=config.seed, augment=config.augment, questions_file=config.questions, progress=progress
    )
    write_build(built, out)
    return build_tables(built.stats, built.problems)


def build_tables(stats: dict[str, Any], problems: list[Problem], shown: int = 10) -> list[ReportTable]:
    """What each filter kept, functions by argument count, and the first skipped items."""
    counts = ReportTable(title=f"{FAMILY} build", columns=["stage", "count"], right=[False, True])
    counts.rows = [[stage, str(count)] for stage, count in stats["stages"].items()]
    counts.rows += [
        ["scenarios (with augmentation)", str(stats["scenarios"])],
        ["  of which augmented", str(stats["scenarios_augmented"])],
        ["functions", str(stats["functions"])],
        *[[f"  with {arity} argument(s)", str(n)] for arity, n in stats["functions_by_arguments"].items()],
        ["skipped items", str(stats["skipped"])],
        *[[f"  {kind}", str(n)] for kind, n in stats["skipped_by_kind"].items()],
    ]
    skipped = ReportTable(title="skipped items", columns=["item", "kind", "reason"])
    skipped.rows = [[p.item, p.kind, p.reason] for p in problems[:shown]]
    if len(problems) > shown:
        skipped.note = f"... and {len(problems) - shown} more (all listed in build.json)"
    return [counts, skipped] if problems else [counts]


def toolbox(specs: list[ToolSpec], databases: Mapping[str, Path]) -> SqlFunctionToolBox:
    return SqlFunctionToolBox(specs, databases)
