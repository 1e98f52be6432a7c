"""Model-written function documentation: unit checks, corrections with up to 3 retries, template fallback."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.endpoint import answer, scripted_server
from helpers.spider import make_spider
from typer.testing import CliRunner

from undertow.cluster.cli import app
from undertow.env_core.model import ToolSpec
from undertow.env_core.sqlfuncs.build import BuiltSuite, build_suite
from undertow.env_core.sqlfuncs.docs import DOCUMENTER, apply_doc, doc_problems
from undertow.workers.clients import EndpointModel, OpenAIChatClient
from undertow.workers.docgen import write_docs


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> BuiltSuite:
    return build_suite(make_spider(tmp_path_factory.mktemp("spider")))


def good_doc(tool: ToolSpec) -> dict[str, Any]:
    properties = {
        name: {"type": schema["type"], "description": f"the {name} to look for"}
        for name, schema in tool.parameters["properties"].items()
    }
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": f"Model-written description of {tool.name}.",
            "parameters": {"type": "object", "properties": properties, "required": list(properties)},
        },
    }


def with_args(built: BuiltSuite) -> ToolSpec:
    return next(t for t in built.tools if t.parameters["properties"])


def test_a_valid_doc_passes_and_is_applied_without_touching_types(built: BuiltSuite) -> None:
    tool = with_args(built)
    doc = good_doc(tool)
    assert doc_problems(doc, tool) == []
    documented = apply_doc(tool, doc)
    assert documented.description == f"Model-written description of {tool.name}."
    assert documented.binding == tool.binding and documented.name == tool.name
    for name, schema in documented.parameters["properties"].items():
        assert schema["type"] == tool.parameters["properties"][name]["type"]
        assert schema["description"] == f"the {name} to look for"


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d, a: d["function"].update(name="function_0"), "name must be"),
        (lambda d, a: d["function"].update(description=" "), "description must be a non-empty string"),
        (lambda d, a: d["function"]["parameters"]["properties"].update(extra={"type": "string"}), "arguments must be"),
        (lambda d, a: d["function"]["parameters"]["properties"][a].update(type="object"), "must have type"),
        (lambda d, a: d["function"]["parameters"]["properties"][a].pop("description"), "needs a description"),
        (lambda d, a: d["function"]["parameters"].update(required=[]), "required must list every argument"),
        (lambda d, a: d.update(function=[]), "'function' must be an object"),
    ],
)
def test_unit_checks_name_what_is_wrong(built: BuiltSuite, damage: Callable, message: str) -> None:
    tool = with_args(built)
    doc = good_doc(tool)
    damage(doc, next(iter(tool.parameters["properties"])))
    assert any(message in p for p in doc_problems(doc, tool))
    assert doc_problems("not json", tool) == ["the reply must be a JSON object"]


def test_the_model_corrects_itself_or_the_template_stays(built: BuiltSuite) -> None:
    tools = built.tools[:3]
    stubborn, corrected, fine = tools
    seen: dict[str, int] = {}

    def reply(request: dict[str, Any]) -> Any:
        asked = json.loads(request["messages"][3]["content"].split("\n", 1)[1])["name"]
        seen[asked] = seen.get(asked, 0) + 1
        tool = next(t for t in tools if t.name == asked)
        if asked == stubborn.name or (asked == corrected.name and seen[asked] == 1):
            return answer(json.dumps({"function": {"name": "wrong"}}))
        return answer("```json\n" + json.dumps(good_doc(tool)) + "\n```")

    async def go() -> tuple:
        with scripted_server(reply) as server:
            client = OpenAIChatClient(EndpointModel(name="m", base_url=server.base_url, max_retries=0))
            try:
                return await write_docs(tools, built.tables, client, DOCUMENTER)
            finally:
                await client.aclose()

    documented, report = asyncio.run(go())
    assert seen == {stubborn.name: 4, corrected.name: 2, fine.name: 1}  # 1 try + at most 3 retries
    assert (report.written, report.corrected, len(report.kept_template)) == (2, 1, 1)
    assert report.kept_template[0].startswith(f"{stubborn.name}: name must be")
    assert documented[0] == stubborn  # the template doc stays
    assert documented[1].description == f"Model-written description of {corrected.name}."


def test_cli_model_docs_need_an_endpoint(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["build", "smoke", "--out", str(tmp_path / "o"), "--docs-model-url", "http://127.0.0.2:9/v1"]
    )
    assert result.exit_code == 2
    assert "--docs-model-url: family 'smoke' has no model-written documentation" in " ".join(result.output.split())
