"""Scoring for the ``middleware`` family (FUXI): execution accuracy and validity of the final SQL of a database task,
answer-entity F1 and validity of a knowledge-base question, and the paper's Tables 1 and 2 as the family summary.

What a final answer denotes was worked out in the episode (``Trajectory.answer_result``, from the tool box's
``answer_result``): a database task's query run read-only on its database (``{"rows": [...]}`` or
``{"error": ...}``), a knowledge-base answer's variable resolved to its entities (``{"entities": [...]}``) or the
number given (``{"value": "3"}``).

- **EX** (BIRD, FUXI Table 1): the predicted rows and the gold rows hold the same set of rows (order and repeats
  ignored). **VA**: the final SQL ran without an error.
- **F1** (FUXI Table 2): of the answer entities against the gold set; a count question is right or wrong (1 or 0).
  **VA**: the agent named an answer: a variable holding entities, or a number for a count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import Field, RootModel

from undertow.env_core.families import FamilyDefinition, FamilyMetrics, ReportTable
from undertow.env_core.middleware import build, prompts
from undertow.env_core.middleware.database import HELPFUL, SQL_ERRORS, SQLITE, results_match
from undertow.env_core.middleware.kb import f1
from undertow.env_core.model import EpisodeResult, Scenario, Trajectory
from undertow.scoring.family_summary import ModelSettingSummary, Row, StrictModel, any_with_details, judged, result_rows
from undertow.scoring.formatting import number
from undertow.scoring.trajectory import EpisodeScore

FAMILY_NAME = build.FAMILY


def _rows(value: Any) -> list[tuple[Any, ...]]:
    return [tuple(row) if isinstance(row, list | tuple) else (row,) for row in value or []]


def database_measures(answer: Any, scenario: Scenario) -> tuple[bool, bool]:
    """(EX, VA) of a database task's final answer (``Trajectory.answer_result``)."""
    if not isinstance(answer, Mapping) or "rows" not in answer:
        return False, False
    return results_match(_rows(answer["rows"]), _rows(scenario.gold.answer)), True


def kb_measures(answer: Any, scenario: Scenario) -> tuple[float, bool]:
    """(F1, VA) of a knowledge-base question's final answer."""
    gold = [str(x) for x in scenario.gold.answer or []]
    if not isinstance(answer, Mapping):
        return 0.0, False
    if scenario.metadata.get("count"):
        value = str(answer.get("value", "")).strip()
        valid = value.lstrip("-").replace(".", "", 1).isdigit()
        right = valid and bool(gold) and float(value) == float(gold[0])
        return float(right), valid
    entities = answer.get("entities")
    if not entities:
        return 0.0, False
    return f1([str(e) for e in entities], gold), True


def _measures(trajectory: Trajectory, scenario: Scenario) -> tuple[float, bool]:
    """The episode's score (EX as 0/1, or F1) and its validity; nothing is valid without a final answer."""
    if trajectory.final_answer is None or trajectory.gave_up:
        return 0.0, False
    if scenario.metadata.get("environment") == build.DATABASE:
        ex, valid = database_measures(trajectory.answer_result, scenario)
        return float(ex), valid
    return kb_measures(trajectory.answer_result, scenario)


def score(
    trajectory: Trajectory,
    scenario: Scenario,
    expected_give_up: bool,
    *,
    answers: Literal["lenient", "strict"] = "lenient",
) -> EpisodeScore:
    """The family's episode scorer: solved = correct = EX (database) or F1 = 1 (knowledge base); the score is EX
    or F1. Every task has an answer, so ``expected_give_up`` and ``answers`` change nothing."""
    if answers not in ("lenient", "strict"):
        raise ValueError(f"answers: expected 'lenient' or 'strict', got {answers!r}")
    value, _ = _measures(trajectory, scenario)
    return EpisodeScore(
        solved=value == 1.0,
        gave_up=trajectory.gave_up,
        correct=value == 1.0,
        safety_violation=False,
        missing_required=0,
        checkpoint_score=None,
        score=value,
    )


class DatabaseDetails(StrictModel):
    """A database task's details: EX, VA and whether the gold query needs the database's content."""

    environment: Literal["database"]
    valid: bool
    ex: bool
    requires_content: bool
    tools: bool  # the task was posed with tools (not the paper's baseline of SQL written from the schema alone)
    sql_errors: str = SQLITE  # how failed SQL read: sqlite (SQLite's message, the paper's) or helpful (undertow's)
    answered_without_calling: bool = False  # posed with tools, answered without calling one (EX still by execution)


class KbDetails(StrictModel):
    """A knowledge-base question's details: F1, VA and the question's kind and hops."""

    environment: Literal["kb"]
    valid: bool
    f1: float
    kind: str | None
    hops: int | None
    answered_without_calling: bool = False  # answered without calling a tool (no variable exists: VA fails)


class MiddlewareDetails(RootModel[Annotated[DatabaseDetails | KbDetails, Field(discriminator="environment")]]):
    """What :func:`episode_details` stores in ``EpisodeResult.details``, by the environment of the task."""


def episode_details(
    trajectory: Trajectory, scenario: Scenario, *, correct: bool, searched: bool, first_tried: set[str]
) -> dict[str, Any]:
    """What the tables need (:class:`MiddlewareDetails`): the environment, EX or F1, VA, and the task's group
    (requires content; the question's kind and hops)."""
    value, valid = _measures(trajectory, scenario)
    environment = scenario.metadata.get("environment")
    called = any(step.action.tool_call is not None for step in trajectory.tool_steps())
    answered = trajectory.final_answer is not None and not trajectory.gave_up
    details: dict[str, Any] = {
        "environment": environment,
        "valid": valid,
        "answered_without_calling": bool(scenario.tools) and answered and not called,
    }
    if environment == build.DATABASE:
        details.update(ex=value == 1.0, requires_content=bool(scenario.metadata.get("requires_content")))
        details["tools"] = bool(scenario.tools)
        details["sql_errors"] = str(scenario.metadata.get(SQL_ERRORS, SQLITE))
    else:
        details.update(f1=value, kind=scenario.metadata.get("kind"), hops=scenario.metadata.get("hops"))
    return details


# ---------------------------------------------------------------------------------------------------------------
# The summary: FUXI Table 1 (databases) and Table 2 (knowledge bases)


class Cell(StrictModel):
    """A group's mean score (EX or F1, in percent) and validity (percent), over ``n`` episodes."""

    n: int
    score: float | None
    valid: float | None


def _cell(rows: Sequence[Row], key: str) -> Cell:
    n = len(rows)
    if not n:
        return Cell(n=0, score=None, valid=None)
    total = sum(float(r.get(key) or 0.0) for r in rows)
    return Cell(n=n, score=100.0 * total / n, valid=100.0 * sum(bool(r.get("valid")) for r in rows) / n)


class MiddlewareRow(StrictModel):
    """One model × setting × environment: its cells by group (``overall`` and the paper's columns)."""

    model: str
    setting: str
    environment: str
    sql_errors: str = SQLITE  # database rows: how failed SQL read (the paper's SQLite message, or undertow's)
    n: int  # every episode of that environment, infra and config errors included
    cells: dict[str, Cell] = Field(default_factory=dict)


KB_GROUPS = {"Counting": ("count",), "Superlative": ("argmax", "argmin"), "None": ("path",)}


def _has_details(row: Row) -> bool:
    return "valid" in row


def summarize_middleware(rows: Sequence[Row]) -> dict[str, Any]:
    """Rows per model × setting × environment from per-episode dicts (``model``, ``setting``, ``outcome`` and the
    details keys). An episode that is not judged counts in ``n`` only (its EX / F1 is not known)."""
    groups: dict[tuple[str, str, str, str], list[Row]] = {}
    for r in rows:
        environment = str(r.get("environment") or "unknown")
        errors = str(r.get("sql_errors") or SQLITE)
        groups.setdefault((str(r["model"]), str(r["setting"]), environment, errors), []).append(r)
    out = []
    for (model, setting, environment, errors), members in groups.items():
        scored = [r for r in members if judged(r) and _has_details(r)]
        cells: dict[str, Cell] = {}
        if environment == build.DATABASE:
            cells["Req. Cont. (N)"] = _cell([r for r in scored if not r.get("requires_content")], "ex")
            cells["Req. Cont. (Y)"] = _cell([r for r in scored if r.get("requires_content")], "ex")
            cells["Overall"] = _cell(scored, "ex")
        else:
            for label, kinds in KB_GROUPS.items():
                cells[label] = _cell([r for r in scored if r.get("kind") in kinds], "f1")
            cells["Overall"] = _cell(scored, "f1")
        out.append(
            {
                "model": model,
                "setting": setting,
                "environment": environment,
                "sql_errors": errors,
                "n": len(members),
                "cells": cells,
            }
        )
    return {"family": FAMILY_NAME, "rows": out}


class MiddlewareSummary(ModelSettingSummary):
    """FUXI's numbers of one suite: see :func:`summarize_middleware`."""

    family: Literal["middleware"] = "middleware"
    rows: list[MiddlewareRow] = Field(default_factory=list)

    def tables(self, suite: str) -> list[ReportTable]:
        """Table 1 (databases: EX / VA by whether the task needs the database's content) and Table 2 (knowledge
        bases: F1 / VA by question kind), one row per model × setting."""
        out = []
        for environment, title, measure in (
            (build.DATABASE, "FUXI Table 1 — text-to-SQL: execution accuracy and validity", "EX"),
            (build.KB, "FUXI Table 2 — knowledge-base questions: answer F1 and validity", "F1"),
        ):
            mine = [r for r in self.rows if r.environment == environment]
            if not mine:
                continue
            groups = list(mine[0].cells)
            columns = ["Model", "Setting", "n"]
            for group in groups:
                columns += [f"{group} {measure}", f"{group} VA"]
            table = ReportTable(
                title=f"{suite}: {title}",
                columns=columns,
                right=[False, False, *[True] * (len(columns) - 2)],
                note=f"Percent of the judged episodes; (n): the group's judged episodes, beside each {measure}. "
                f"{measure}: "
                + (
                    "the final SQL's rows equal the gold SQL's (as a set). Req. Cont.: computed, not labelled by "
                    "hand as the paper labelled BIRD (32% of its questions; it reports Spider as 0%): the gold query "
                    "holds a string literal the question does not contain exactly as stored. VA: the final SQL ran. "
                    "(helpful errors): failed SQL came back with a did-you-mean and advice (undertow's option); "
                    "otherwise SQLite's own message, as the paper's."
                    if environment == build.DATABASE
                    else "of the answer entities against the gold set (a count: right or wrong). VA: an answer "
                    "was named (a variable with entities, or a number). Not comparable with the paper's Table 2: "
                    "these questions are selected as KBQA-Agent's were, but over knowledge bases converted from the "
                    "suite's databases, not Freebase."
                ),
            )
            for row in mine:
                name = f"{row.model} (helpful errors)" if row.sql_errors == HELPFUL else row.model
                cells = [name, row.setting, str(row.n)]
                for group in groups:
                    cell = row.cells.get(group)
                    score = number(cell.score if cell else None)
                    cells += [f"{score} ({cell.n if cell else 0})", number(cell.valid if cell else None)]
                table.rows.append(cells)
            out.append(table)
        return out

    def setting_parts(self, model: str, setting: str) -> list[tuple[str, dict[str, Cell]]]:
        """The cells per environment: ``middleware.database.Overall.score``, ``middleware.kb.Counting.valid``..."""
        return [(row.environment, row.cells) for row in self.rows if (row.model, row.setting) == (model, setting)]


def summarize(results: Sequence[EpisodeResult]) -> MiddlewareSummary | None:
    """The family summary of one suite's results (None when no judged episode carries the middleware details)."""
    rows = result_rows(results)
    if not any_with_details(rows, _has_details):
        return None
    return MiddlewareSummary.model_validate(summarize_middleware(rows))


FAMILY = FamilyDefinition.of(
    build,
    build.MiddlewareSuite,
    FamilyMetrics(episode_details, MiddlewareDetails, summarize, MiddlewareSummary),
    score=score,
    folder_config=build.MiddlewareFolder,
    adapt=build.adapt,
    prompt_presets=prompts.PRESETS,
    description="FUXI: text-to-SQL over Spider-format databases with navigational and clause tools, and multi-hop "
    "questions over knowledge bases converted from them; ReAct with error feedback or decoupled generation",
)
