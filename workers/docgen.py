"""Have a model document a suite's tools, check each doc, and let it correct itself (HoHW: up to 3 retries).

The family supplies the pure parts (a :class:`env_core.families.ToolDocumenter`); this is the calling loop."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from env_core.families import ToolDocumenter
from env_core.model import ToolSpec
from scoring.answers import parse_structured
from workers.clients import InfraError, ModelClient, ModelError

RETRIES = 3


@dataclass
class DocReport:
    written: int = 0  # tools whose doc passed the checks (first try or after corrections)
    corrected: int = 0  # of those, how many needed at least one retry
    kept_template: list[str] = field(default_factory=list)  # tools left with the template doc, with why


async def _document(
    tool: ToolSpec, context: Any, client: ModelClient, documenter: ToolDocumenter, retries: int
) -> tuple[ToolSpec, int | None, str]:
    """(tool, retries used or None if it never passed, last problem)."""
    messages = documenter.messages(tool, context)
    problem = ""
    for attempt in range(retries + 1):
        try:
            reply = await client.complete(messages, [])
        except (InfraError, ModelError) as exc:
            return tool, None, f"model call failed: {exc}"
        text = reply.content or ""
        doc = parse_structured(text)
        problems = documenter.problems(doc, tool)
        if not problems:
            return documenter.apply(tool, doc), attempt, ""  # type: ignore[arg-type]
        problem = "; ".join(problems)
        messages = [
            *messages,
            {"role": "assistant", "content": text},
            {"role": "user", "content": f"The documentation fails these checks: {problem}. Reply with corrected JSON."},
        ]
    return tool, None, problem


async def write_docs(
    tools: list[ToolSpec],
    context: Any,
    client: ModelClient,
    documenter: ToolDocumenter,
    retries: int = RETRIES,
    concurrency: int = 8,
) -> tuple[list[ToolSpec], DocReport]:
    """Documented tools (template docs kept where the model never passed the checks) and a report. ``context`` is
    what the documenter shows the model besides each tool (``documenter.context(folder)``)."""
    limit = asyncio.Semaphore(concurrency)
    report = DocReport()

    async def one(tool: ToolSpec) -> ToolSpec:
        async with limit:
            documented, used, problem = await _document(tool, context, client, documenter, retries)
        if used is None:
            report.kept_template.append(f"{tool.name}: {problem}")
        else:
            report.written += 1
            report.corrected += used > 0
        return documented

    documented = await asyncio.gather(*(one(tool) for tool in tools))
    return list(documented), report
