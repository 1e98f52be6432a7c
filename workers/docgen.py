"""Have a model document a suite's tools, check each doc, and let it correct itself (HoHW: up to 3 retries).

The family supplies the pure parts (a :class:`undertow.env_core.families.ToolDocumenter`); this is the calling loop, and
:func:`document_suite`, the step that documents a freshly built suite folder (``docs: model``, from ``undertow
build`` or a sweep's suite entry) and records what it did in the folder's ``docs.json``.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from undertow.env_core.errors import ConfigError, InfraError, ModelError
from undertow.env_core.families import SuiteConfig, ToolDocumenter, get_family
from undertow.env_core.model import HelperModel, ToolSpec
from undertow.env_core.suites import DOCS_FILE, read_tools, write_tools
from undertow.scoring.answers import parse_structured
from undertow.workers.clients import EndpointModel, ModelClient, OpenAIChatClient

T = TypeVar("T")  # what the coroutine _run runs returns

RETRIES = 3
UNREACHABLE = "docs model unreachable"
FAILED_CHECKS = "failed the checks"
MODEL_ERROR = "model error"


@dataclass
class KeptTool:
    """A tool left with its template doc: its place in the suite's tool list, its name, and why."""

    index: int
    name: str
    why: str
    cause: str = FAILED_CHECKS  # UNREACHABLE, FAILED_CHECKS or MODEL_ERROR: what the summary counts

    def __str__(self) -> str:
        return f"#{self.index} {self.name}: {self.why}"


@dataclass
class DocReport:
    tools: int = 0  # tools offered to the model
    written: int = 0  # tools whose doc passed the checks (first try or after corrections)
    corrected: int = 0  # of those, how many needed at least one retry
    kept: list[KeptTool] = field(default_factory=list)  # tools left with the template doc, in tool order
    unreachable: str | None = None  # why the endpoint stopped being asked, when it did
    model: dict[str, str] = field(default_factory=dict)  # the endpoint (url, name) that wrote them

    @property
    def kept_template(self) -> list[str]:
        """``name: why`` of each tool left with its template doc."""
        return [f"{k.name}: {k.why}" for k in self.kept]

    def summary(self) -> str:
        """One line: how many were written, and how many kept the template doc and why."""
        line = f"model docs: {self.written} of {self.tools} written ({self.corrected} after corrections)"
        if not self.kept:
            return line
        causes = Counter(k.cause for k in self.kept)
        why = next(iter(causes)) if len(causes) == 1 else ", ".join(f"{n} {c}" for c, n in causes.most_common())
        return f"{line}; {len(self.kept)} of {self.tools} tools kept the template doc: {why}"

    def lines(self) -> list[str]:
        """The summary, then one line per tool that kept its template doc."""
        return [self.summary(), *(f"  {k}" for k in self.kept)]

    def as_dict(self) -> dict[str, Any]:
        """What ``docs.json`` holds."""
        return {
            "model": self.model,
            "tools": self.tools,
            "written": self.written,
            "corrected": self.corrected,
            "unreachable": self.unreachable,
            "kept_template": [asdict(k) for k in self.kept],
            "summary": self.summary(),
        }


async def _document(
    tool: ToolSpec, context: Any, client: ModelClient, documenter: ToolDocumenter, retries: int
) -> tuple[ToolSpec, int | None, str, str]:
    """(tool, retries used or None if it never passed, last problem, its cause)."""
    messages = documenter.messages(tool, context)
    problem = ""
    for attempt in range(retries + 1):
        try:
            reply = await client.complete(messages, [])
        except InfraError as exc:  # it survived the client's own retries: the endpoint is down or broken
            return tool, None, f"{UNREACHABLE}: {exc}", UNREACHABLE
        except ModelError as exc:
            return tool, None, f"model call failed: {exc}", MODEL_ERROR
        text = reply.content or ""
        doc = parse_structured(text)
        problems = documenter.problems(doc, tool)
        if not problems and isinstance(doc, dict):  # a documenter passes only an object
            return documenter.apply(tool, doc), attempt, "", ""
        problem = "; ".join(problems) or "the reply must be a JSON object"
        messages = [
            *messages,
            {"role": "assistant", "content": text},
            {"role": "user", "content": f"The documentation fails these checks: {problem}. Reply with corrected JSON."},
        ]
    return tool, None, problem, FAILED_CHECKS


async def write_docs(
    tools: list[ToolSpec],
    context: Any,
    client: ModelClient,
    documenter: ToolDocumenter,
    retries: int = RETRIES,
    concurrency: int = 8,
) -> tuple[list[ToolSpec], DocReport]:
    """Documented tools (template docs kept where the model never passed the checks) and a report. ``context`` is
    what the documenter shows the model besides each tool (``documenter.context(folder)``).

    Once a call fails for the endpoint's sake (after the client's retries), no further tool is sent: each keeps
    its template doc at once, so a dead endpoint costs one request's retries, not one per tool."""
    limit = asyncio.Semaphore(concurrency)
    report = DocReport(tools=len(tools))

    async def one(index: int, tool: ToolSpec) -> ToolSpec:
        async with limit:
            if report.unreachable is not None:
                documented, used, problem, cause = tool, None, f"{UNREACHABLE} (not asked)", UNREACHABLE
            else:
                documented, used, problem, cause = await _document(tool, context, client, documenter, retries)
                if cause == UNREACHABLE and report.unreachable is None:
                    report.unreachable = problem.removeprefix(f"{UNREACHABLE}: ")
        if used is None:
            report.kept.append(KeptTool(index, tool.name, problem, cause))
        else:
            report.written += 1
            report.corrected += used > 0
        return documented

    documented = await asyncio.gather(*(one(i, tool) for i, tool in enumerate(tools)))
    report.kept.sort(key=lambda k: k.index)
    return list(documented), report


def _run(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to the end from synchronous code, also where an event loop is already running (a worker
    loading a suite inside its shard's loop): then on a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def documenter_of(config: SuiteConfig) -> ToolDocumenter:
    """The family's documenter; a ``ConfigError`` naming ``docs`` and the family where it has none."""
    family = get_family(config.family, config.family_ref)
    documenter: ToolDocumenter | None = family.documenter
    if documenter is None:
        raise ConfigError(f"family '{family.name}' has no model-written documentation", field="docs")
    return documenter


def document_folder(
    folder: Path,
    documenter: ToolDocumenter,
    docs_model: HelperModel,
    stage: Callable[[str], None] | None = None,
) -> DocReport:
    """Have ``docs_model`` document the tools of a built suite folder in place; the report goes to ``docs.json``."""
    tools = read_tools(folder)
    context = documenter.context(folder)

    async def document() -> tuple[list[ToolSpec], DocReport]:
        client = OpenAIChatClient(EndpointModel(name=docs_model.name, base_url=docs_model.url))
        try:
            return await write_docs(tools, context, client, documenter)
        finally:
            await client.aclose()

    if stage is not None:
        stage(f"documenting {len(tools)} tools with {docs_model.name}")
    documented, report = _run(document)
    report.model = {"url": docs_model.url, "name": docs_model.name}
    write_tools(folder, documented)
    (folder / DOCS_FILE).write_text(json.dumps(report.as_dict(), indent=2) + "\n")
    return report


def document_suite(config: SuiteConfig, folder: Path) -> DocReport:
    """The documenting step :func:`env_core.suites.suite_folder` calls for a ``docs: model`` suite it builds. An
    endpoint that could not be reached stops the sweep before anything runs, and nothing is cached: a suite named
    ``docs: model`` must not run, then or later, on template docs (``undertow build`` goes on instead, and says
    which tools kept theirs)."""
    if config.docs_model is None:
        raise ConfigError(
            f"family '{config.family}' with docs: model needs docs_model {{url, name}}", field="docs_model"
        )
    report = document_folder(folder, documenter_of(config), config.docs_model)
    if report.unreachable is not None:
        raise InfraError(
            f"docs model {config.docs_model.name} at {config.docs_model.url} could not be reached "
            f"({report.unreachable}); the build was discarded and nothing was cached: start it and plan again"
        )
    return report


def read_doc_report(folder: Path) -> dict[str, Any] | None:
    """The ``docs.json`` of a built suite folder (what its documenting step did); None for template docs."""
    path = Path(folder) / DOCS_FILE
    return json.loads(path.read_text()) if path.is_file() else None
