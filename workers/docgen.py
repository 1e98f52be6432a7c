"""Have a model document compiled functions, check each doc, and let it correct itself (HoHW: up to 3 retries)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from env_core.model import ToolSpec
from env_core.sqlfuncs.docs import apply_doc, doc_messages, doc_problems
from scoring.answers import parse_structured
from workers.clients import InfraError, ModelClient, ModelError

RETRIES = 3


@dataclass
class DocReport:
    written: int = 0  # tools whose doc passed the checks (first try or after corrections)
    corrected: int = 0  # of those, how many needed at least one retry
    kept_template: list[str] = field(default_factory=list)  # tools left with the template doc, with why


async def _document(
    tool: ToolSpec, tables: dict[str, list[str]], client: ModelClient, retries: int
) -> tuple[ToolSpec, int | None, str]:
    """(tool, retries used or None if it never passed, last problem)."""
    messages = doc_messages(tool, tables)
    problem = ""
    for attempt in range(retries + 1):
        try:
            reply = await client.complete(messages, [])
        except (InfraError, ModelError) as exc:
            return tool, None, f"model call failed: {exc}"
        text = reply.content or ""
        doc = parse_structured(text)
        problems = doc_problems(doc, tool)
        if not problems:
            return apply_doc(tool, doc), attempt, ""  # type: ignore[arg-type]
        problem = "; ".join(problems)
        messages = [
            *messages,
            {"role": "assistant", "content": text},
            {"role": "user", "content": f"The documentation fails these checks: {problem}. Reply with corrected JSON."},
        ]
    return tool, None, problem


async def write_docs(
    tools: list[ToolSpec],
    tables: dict[str, dict[str, list[str]]],
    client: ModelClient,
    retries: int = RETRIES,
    concurrency: int = 8,
) -> tuple[list[ToolSpec], DocReport]:
    """Documented tools (template docs kept where the model never passed the checks) and a report.
    ``tables`` maps each database to its tables and columns (the model's "description of the database")."""
    limit = asyncio.Semaphore(concurrency)
    report = DocReport()

    async def one(tool: ToolSpec) -> ToolSpec:
        async with limit:
            documented, used, problem = await _document(tool, tables[tool.binding["database"]], client, retries)
        if used is None:
            report.kept_template.append(f"{tool.name}: {problem}")
        else:
            report.written += 1
            report.corrected += used > 0
        return documented

    documented = await asyncio.gather(*(one(tool) for tool in tools))
    return list(documented), report
