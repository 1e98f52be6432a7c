"""Build the ``sqlfuncs`` suite from a Spider-format folder: functions, backup-plan scenarios, and a build summary.

``build_suite`` compiles every question (see ``compile.py``), applies the quality filters in order (an empty result
for a question that asks for something, a tie at the LIMIT cut, more than 100 rows, no nested SELECT, no chain equal
to gold: the paper's, except that an existence question keeps its empty answer and an arbitrary cut is left out),
names the functions and documents them in plain words (``docs.py``), makes one scenario per kept question plus
seeded augmentations, each with a hint and a validation / test split, and counts what each stage kept and why items
were skipped. ``write_build``
writes a suite folder that ``env_core.suites.load_suite`` reads; building twice with the same inputs and seed gives
byte-identical files, whether the databases were compiled in one process or several.

The work is per database (one connection each, a query asked twice compiled once), so a big folder (the whole of
Spider: 9,000+ questions over 160+ databases) is compiled by a pool of processes; naming, which needs every
function, and assembling the scenarios stay in this process.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from undertow.env_core.errors import close_match
from undertow.env_core.families import ReportTable, SuiteConfig
from undertow.env_core.model import SCHEMA_VERSION, ArgRef, Gold, PlannedCall, Scenario, ToolSpec
from undertow.env_core.spider import Problem, Question, Schema, SpiderData, SpiderSuite, read_spider
from undertow.env_core.sqlfuncs.compile import (
    ARGUMENT_WORDS,
    MAX_ROWS,
    Compiled,
    FunctionDraft,
    bind,
    call_args,
    compile_question,
    run_chain,
    same_rows,
)
from undertow.env_core.sqlfuncs.compile import FAMILY as FAMILY  # re-exported: the module is a SuiteBuilder
from undertow.env_core.sqlfuncs.docs import TYPE_WORDS, DocTemplate, describe, hint_text, parameters
from undertow.env_core.sqlfuncs.tools import SqlFunctionToolBox
from undertow.env_core.sqlgold import EMPTY, TIE, GoldAnswer, asks_existence, gold_answer, left_out_table
from undertow.env_core.suites import write_suite
from undertow.env_core.tools import fetch_rows

SUITE_VERSION = "3"  # 2: plain-language docs, hints, validation / test split; 3: unambiguous gold, tie runs
_PLACEHOLDER = re.compile(r":a(\d+)\b")

# HoHW §3.2 (full Spider), shown beside this build's counts: the one source of these figures.
PAPER = {
    "both paths match gold (kept)": 413,
    "scenarios": 922,
    "validation": 92,
    "test": 830,
    "functions": 4450,
    "0": 2160,
    "1": 1661,
    "2": 568,
    "3": 46,
    "4+": 15,
}
PAPER_COLUMN = "paper (HoHW §3.2)"
VALIDATION_FRACTION = PAPER["validation"] / PAPER["scenarios"]
SPLITS = ("validation", "test")
PARALLEL_FROM = 2000  # questions: below this, starting worker processes costs more than it saves


def split_of(question: Question) -> str:
    """``validation`` or ``test``, from the question's identity alone (database, text, gold query): the same in
    every build, whatever the seed, the rest of the folder or the order of the questions."""
    identity = json.dumps([question.db_id, question.text, question.query])
    draw = int.from_bytes(hashlib.sha256(identity.encode()).digest()[:8], "big") / 2**64
    return "validation" if draw < VALIDATION_FRACTION else "test"


@dataclass
class BuiltSuite:
    name: str
    tools: list[ToolSpec]
    scenarios: list[Scenario]
    databases: dict[str, Path]
    stats: dict[str, Any]
    problems: list[Problem] = field(default_factory=list)
    tables: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # database -> table -> columns


# ---------------------------------------------------------------------------------------------------------------
# Per database (in this process or a worker): compile, filter, augment, document


STAGES = [
    "questions in",
    "parsed and ran",
    "non-empty result, or an existence question",
    "no tie at the LIMIT cut",
    "at most 100 rows",
    "nested SELECT",
    "both paths match gold (kept)",
]

Variant = tuple[str, dict[int, Any], list[dict[str, Any]], list[int]]  # task, literal overrides, gold rows, tie runs


@dataclass
class _Job:
    db_id: str
    path: Path
    schema: Schema
    questions: list[Question]
    digest: str
    seed: int
    augment: int


@dataclass
class _Outcome:
    """One question's result: the stage it got to (an index into STAGES), and for a kept one its variants."""

    result: Compiled | Problem
    reached: int
    variants: list[Variant] = field(default_factory=list)
    hint: str | None = None


@dataclass
class _DatabaseResult:
    db_id: str
    outcomes: dict[int, _Outcome]  # by question index
    docs: dict[str, DocTemplate]  # by function key
    fixed_rows: dict[str, list[dict[str, Any]]]  # argument-free function key -> its rows (databases with kept ones)


def _augmentations(compiled: Compiled, conn: sqlite3.Connection, rng: random.Random, wanted: int) -> list[Variant]:
    """Up to ``wanted`` variants that swap one literal quoted in the question for another value of its column,
    with the gold answer recomputed (unambiguous as the question's own must be, and checked through the chain)."""
    found: list[Variant] = []
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
            task = text.replace(param.value, value, 1)
            answer = gold_answer(conn, compiled.direct.sql, task, bind(call_args(compiled.direct, overrides)))
            if not isinstance(answer, GoldAnswer) or len(answer.rows) > MAX_ROWS:
                continue
            gold = [dict(zip(answer.columns, row, strict=True)) for row in answer.rows]
            try:
                if not same_rows(run_chain(conn, compiled, overrides), gold, compiled.ordered, answer.tie_groups):
                    continue
            except sqlite3.Error:
                continue
            found.append((task, overrides, gold, answer.tie_groups))
            if len(found) >= wanted:
                break
    return found


def _stage(result: Compiled | Problem) -> int:
    """How far a compiled question got through the filters (the index of the last stage it passed)."""
    if isinstance(result, Problem):
        return 0
    filters = (
        result.left_out != EMPTY,
        result.left_out != TIE,
        len(result.gold) <= MAX_ROWS,
        result.nested,
        result.chain,
    )
    for reached, passed in enumerate(filters):
        if not passed:
            return reached + 1
    return len(STAGES) - 1


def _document(draft: FunctionDraft, schema: Schema) -> DocTemplate:
    """Plain-language docs from the draft's tree; a tree the describer cannot read still gets honest, SQL-free docs
    rather than stopping the build."""
    arguments = [(mark, p.type, p.source) for mark, p in zip(draft.marks, draft.params, strict=True)]
    try:
        assert draft.tree is not None
        return describe(draft.tree, draft.db_id, schema.tables, arguments)
    except Exception:
        return DocTemplate(
            f"Returns records from the `{draft.db_id}` database.",
            tuple(f"{TYPE_WORDS[p.type].capitalize()} value the function uses." for p in draft.params),
        )


def _compile_database(job: _Job) -> _DatabaseResult:
    """Everything the build does that needs one database: compile each question (a query asked twice, once),
    augment and hint the kept ones, document their functions, run the argument-free ones."""
    outcomes: dict[int, _Outcome] = {}
    # the question's words matter to the result only through whether it asks about existence (an empty gold)
    by_query: dict[tuple[str, bool], _Outcome] = {}
    docs: dict[str, DocTemplate] = {}
    conn = sqlite3.connect(f"file:{job.path}?mode=ro", uri=True)
    try:
        for question in job.questions:
            query_key = (question.query, asks_existence(question.text))
            seen = by_query.get(query_key)
            if seen is None:
                try:
                    result = compile_question(question, job.schema, conn)
                except Exception as exc:
                    result = Problem(f"question {question.index}", "compile error", f"{type(exc).__name__}: {exc}")
                outcome = _Outcome(result, _stage(result))
                if isinstance(result, Compiled):
                    kept = outcome.reached == len(STAGES) - 1
                    for draft in [result.direct, *(result.chain if kept else [])]:
                        if draft.key not in docs:
                            docs[draft.key] = _document(draft, job.schema)
                    if kept:
                        outcome.hint = hint_text(result.direct.tree, job.db_id, job.schema.tables, result.gold)
                    else:
                        result.gold = []  # not needed past the filters: keep the result small to send back
                by_query[query_key] = outcome
            else:
                result = seen.result
                if isinstance(result, Problem):
                    result = dataclasses.replace(result, item=f"question {question.index}")
                else:
                    result = dataclasses.replace(result, question=question)
                outcome = dataclasses.replace(seen, result=result)
            if isinstance(outcome.result, Compiled) and outcome.reached == len(STAGES) - 1 and job.augment > 0:
                rng = random.Random(f"{job.digest}:{job.seed}:augment:{question.index}")
                outcome.variants = _augmentations(outcome.result, conn, rng, job.augment)
            outcomes[question.index] = outcome
        fixed_rows: dict[str, list[dict[str, Any]]] = {}
        compiled = [o.result for o in outcomes.values() if isinstance(o.result, Compiled)]
        if any(o.reached == len(STAGES) - 1 for o in outcomes.values()):
            # every argument-free function of this database, chains' inner ones included
            kept_chains = [c.chain for c in compiled if outcomes[c.question.index].reached == len(STAGES) - 1]
            drafts = [c.direct for c in compiled] + [d for chain in kept_chains for d in chain]
            for draft in drafts:
                if not draft.params and draft.key not in fixed_rows:
                    fixed_rows[draft.key] = fetch_rows(conn, draft.sql)
    finally:
        conn.close()
    for result in compiled:
        for draft in (result.direct, *result.chain):
            draft.tree = None  # trees stay here: documentation is done, and they are slow to send
    return _DatabaseResult(job.db_id, outcomes, docs, fixed_rows)


def _run_jobs(
    jobs: list[_Job], workers: int, progress: Callable[[int, int], None] | None, total: int
) -> dict[str, _DatabaseResult]:
    done = 0
    results: dict[str, _DatabaseResult] = {}
    if workers <= 1:
        for job in jobs:
            results[job.db_id] = _compile_database(job)
            done += len(job.questions)
            if progress is not None:
                progress(done, total)
        return results
    # spawn, not fork: the build may run in a process with threads (a Ray worker, the CLI's progress display)
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
            largest_first = sorted(jobs, key=lambda j: -len(j.questions))
            futures = {pool.submit(_compile_database, job): job for job in largest_first}
            for future in as_completed(futures):
                result = future.result()
                results[result.db_id] = result
                done += len(futures[future].questions)
                if progress is not None:
                    progress(done, total)
    except BrokenProcessPool:
        # workers could not start (e.g. a script without a __main__ guard) or died: finish here, same output
        rest = [job for job in jobs if job.db_id not in results]
        results.update(_run_jobs(rest, 1, None, total))
        if progress is not None:
            progress(total, total)
    return results


# ---------------------------------------------------------------------------------------------------------------
# The whole suite: naming, tools, scenarios, summary


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


def _tool(draft: FunctionDraft, name: str, arguments: list[str], doc: DocTemplate) -> ToolSpec:
    description, about = doc.render(arguments)
    sql = _PLACEHOLDER.sub(lambda m: ":" + arguments[int(m.group(1))], draft.sql)
    params = [
        {"name": a, "type": p.type, "column": list(p.column) if p.column else None}
        for a, p in zip(arguments, draft.params, strict=True)
    ]
    binding = {"sql": sql, "database": draft.db_id, "params": params, "role": draft.role}
    schema = parameters(about, arguments, [p.type for p in draft.params])
    return ToolSpec(name=name, description=description, parameters=schema, binding=binding)


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


def _missing_database(question: Question, data: SpiderData, folder: Path) -> Problem:
    """Why a question's database cannot be used, said for the one folder it was looked for in."""
    db_id = question.db_id
    where = f"question {question.index}"
    relative = f"database/{db_id}/{db_id}.sqlite"
    known = sorted(set(data.schemas) | set(data.databases))
    hint = close_match(db_id, known)
    suffix = f"; {hint}" if hint else ""
    file = folder / relative
    if db_id not in data.schemas and not file.is_file():
        reason = f"database '{db_id}' is not in this folder (not in tables.json, no {relative}){suffix}"
        return Problem(where, "unknown database", reason)
    if db_id not in data.schemas:
        return Problem(where, "no schema", f"database '{db_id}' is not in tables.json (though {relative} is there)")
    if not file.is_file():
        reason = f"database '{db_id}' is not in this folder (it is in tables.json, but there is no {relative})"
        return Problem(where, "unknown database", reason)
    return Problem(where, "database unusable", f"database '{db_id}' is not a usable SQLite file ({relative})")


def default_workers(questions: int) -> int:
    """Processes to compile with: one per usable core (at most 8), for a folder big enough to repay starting them."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cores, 8)) if questions >= PARALLEL_FROM else 1


def build_suite(
    spider: str | Path,
    seed: int = 0,
    augment: int = 1,
    questions_file: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int | None = None,
) -> BuiltSuite:
    """Compile a Spider-format folder. ``augment`` is the number of augmented variants tried per kept question;
    ``workers`` the processes compiling databases (default: one per core for a big folder, else this one)."""
    folder = Path(spider)
    data: SpiderData = read_spider(folder, questions_file)
    problems = list(data.problems)
    usable = [q for q in data.questions if q.db_id in data.schemas and q.db_id in data.databases]
    jobs: dict[str, _Job] = {}
    for question in usable:
        job = jobs.get(question.db_id)
        if job is None:
            schema, path = data.schemas[question.db_id], data.databases[question.db_id]
            job = jobs[question.db_id] = _Job(question.db_id, path, schema, [], data.digest, seed, augment)
        job.questions.append(question)
    count = len(usable)
    results = _run_jobs(list(jobs.values()), workers or default_workers(count), progress, count)

    stages: Counter[str] = Counter()
    compiled_all: list[Compiled] = []
    kept: list[tuple[Compiled, _Outcome]] = []
    by_database: dict[str, Counter[str]] = {}
    for question in data.questions:
        stages["questions in"] += 1
        counts = by_database.setdefault(question.db_id, Counter({"questions": 0, "kept": 0, TIE: 0, EMPTY: 0}))
        counts["questions"] += 1
        if question.db_id not in results:
            problems.append(_missing_database(question, data, folder))
            continue
        outcome = results[question.db_id].outcomes[question.index]
        if isinstance(outcome.result, Problem):
            problems.append(outcome.result)
            continue
        compiled_all.append(outcome.result)
        if outcome.result.left_out is not None:
            counts[outcome.result.left_out] += 1
        for stage in STAGES[1 : outcome.reached + 1]:
            stages[stage] += 1
        if outcome.reached == len(STAGES) - 1:
            counts["kept"] += 1
            kept.append((outcome.result, outcome))

    drafts = [c.direct for c in compiled_all] + [d for c, _ in kept for d in c.chain]
    names = _function_names(drafts, data.digest, seed)
    unique = {d.key: d for d in drafts}
    docs = {key: doc for result in results.values() for key, doc in result.docs.items()}
    tools = sorted(
        (_tool(d, *names[key], docs[key]) for key, d in unique.items()),
        key=lambda t: int(t.name.removeprefix("function_")),
    )
    # Zero-argument functions answer one fixed question: when one returns a scenario's gold rows it is a solution
    # too (typically a paraphrase's query), so it joins the gold plans instead of becoming a distractor.
    fixed_outputs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for result in results.values():
        for key, rows in result.fixed_rows.items():
            if key in names:
                fixed_outputs.setdefault(result.db_id, {})[names[key][0]] = rows
    scenarios: list[Scenario] = []
    augmented = 0
    for compiled, outcome in kept:
        q = compiled.question
        base_id = f"{FAMILY}-{q.db_id}-{q.index:04d}"
        split = split_of(q)
        variants: list[Variant] = [(q.text, {}, compiled.gold, compiled.tie_groups), *outcome.variants]
        for k, (text, overrides, gold, tie_groups) in enumerate(variants):
            plans = _plans(compiled, names, overrides)
            own = {call.tool for plan in plans for call in plan}
            plans += [
                [PlannedCall(tool=name)]
                for name, rows in sorted(
                    fixed_outputs.get(q.db_id, {}).items(), key=lambda item: int(item[0].removeprefix("function_"))
                )
                if name not in own and same_rows(rows, gold, compiled.ordered, tie_groups)
            ]
            scenarios.append(
                Scenario(
                    id=base_id if k == 0 else f"{base_id}-aug{k}",
                    variant_of=None if k == 0 else base_id,
                    family=FAMILY,
                    task=text,
                    tools=[call.tool for plan in plans for call in plan],
                    gold=Gold(answer=gold, ordered=compiled.ordered, tie_groups=tie_groups, plans=plans),
                    hint=outcome.hint,
                    metadata={
                        "db_id": q.db_id,
                        "question_index": q.index,
                        "query": q.query,
                        "ordered": compiled.ordered,
                        "augmented": k > 0,
                        "chain_calls": len(plans[1]),
                        "equivalent_functions": len(plans) - 2,
                        "split": split,
                    },
                )
            )
            augmented += k > 0
    by_arity = Counter(min(len(t.binding["params"]), 4) for t in tools)
    by_split = Counter(s.metadata["split"] for s in scenarios)
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
        "scenarios_by_split": {split: by_split.get(split, 0) for split in SPLITS},
        "gold_by_database": {db: dict(counts) for db, counts in sorted(by_database.items())},
    }
    used = sorted({s.metadata["db_id"] for s in scenarios} | {t.binding["database"] for t in tools})
    return BuiltSuite(
        name=folder.name or "sqlfuncs",
        tools=tools,
        scenarios=scenarios,
        databases={db: data.databases[db] for db in used},
        stats=stats,
        problems=problems,
        tables={db: data.schemas[db].tables for db in used},
    )


def write_build(built: BuiltSuite, out: str | Path) -> Path:
    """Write the suite folder (see :func:`undertow.env_core.suites.write_suite`) with ``build.json``: the build summary,
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


class SqlfuncsSuite(SpiderSuite):
    """A Spider-format folder compiled into obfuscated SQL functions (the Hell-or-High-Water construction)."""

    family: Literal["sqlfuncs"] = "sqlfuncs"
    seed: int = Field(default=0, ge=0, lt=2**31, description="naming and augmentation seed")
    augment: int = Field(default=1, ge=0, le=100, description="augmented variants per kept question")

    def source_name(self) -> str:
        return Path(self.spider).name


def source_digest(config: SuiteConfig) -> str:
    assert isinstance(config, SqlfuncsSuite)
    folder = Path(config.spider)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: Spider folder not found")
    # the suite version joins the data's digest: a build made by older code is not reused from the cache
    return hashlib.sha256(f"{read_spider(folder, config.questions).digest}:{SUITE_VERSION}".encode()).hexdigest()


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
    """What each filter kept, scenarios by split, functions by argument count, each beside the paper's figure where
    it reports one (its counts are for the whole of Spider); per database, the questions kept and those left out
    for an ambiguous gold; and the first skipped items."""

    def row(label: str, count: int, paper: str | None = None) -> list[str]:
        figure = PAPER.get(paper) if paper is not None else None
        return [label, f"{count:,}", f"{figure:,}" if figure is not None else ""]

    counts = ReportTable(title=f"{FAMILY} build", columns=["stage", "count", PAPER_COLUMN], right=[False, True, True])
    counts.rows = [row(stage, count, stage) for stage, count in stats["stages"].items()]
    by_split = stats.get("scenarios_by_split", {})
    counts.rows += [
        row("scenarios (with augmentation)", stats["scenarios"], "scenarios"),
        row("  of which augmented", stats["scenarios_augmented"]),
        *[row(f"  {split}", by_split.get(split, 0), split) for split in SPLITS],
        row("functions", stats["functions"], "functions"),
        *[row(f"  with {arity} argument(s)", n, arity) for arity, n in stats["functions_by_arguments"].items()],
        row("skipped items", stats["skipped"]),
        *[row(f"  {kind}", n) for kind, n in stats["skipped_by_kind"].items()],
    ]
    skipped = ReportTable(title="skipped items", columns=["item", "kind", "reason"])
    skipped.rows = [[p.item, p.kind, p.reason] for p in problems[:shown]]
    if len(problems) > shown:
        skipped.note = f"... and {len(problems) - shown} more (all listed in build.json)"
    tables = [counts]
    if stats.get("gold_by_database"):  # a summary written before the gold checks has none
        tables.append(left_out_table(stats["gold_by_database"], title=f"{FAMILY} gold answers by database"))
    return [*tables, skipped] if problems else tables


def toolbox(specs: list[ToolSpec], databases: Mapping[str, Path]) -> SqlFunctionToolBox:
    return SqlFunctionToolBox(specs, databases)
