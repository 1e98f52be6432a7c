"""Model-written docs from a sweep's suite entry (``docs: model``, cached with the build), ``undertow build --docs
model``, an endpoint that is down, and the suite ``split`` filter. Real HTTP servers, real builds, no mocks."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.endpoint import Reply, answer, scripted_server
from helpers.ports import free_port
from helpers.spider import make_spider
from typer.testing import CliRunner

from undertow.cluster import api
from undertow.cluster.cli import app
from undertow.cluster.config import ConfigError
from undertow.env_core import suites
from undertow.env_core.errors import InfraError
from undertow.env_core.scenarios import write_scenarios
from undertow.env_core.sqlfuncs.compile import JSON_TYPES
from undertow.env_core.suites import SuiteError, load_ref, read_tools, suite_folder, suite_ref
from undertow.workers.docgen import document_suite, read_doc_report


@pytest.fixture(scope="module")
def spider(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_spider(tmp_path_factory.mktemp("spider"))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("UNDERTOW_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "suites"


def refused_url() -> str:
    """An endpoint on 127.0.0.2 where nothing listens: every connection is refused."""
    return f"http://127.0.0.2:{free_port()}/v1"


def documenting(request: dict[str, Any]) -> Reply:
    """A model that documents every function it is asked about, correctly, on the first try."""
    asked = json.loads(request["messages"][3]["content"].split("\n", 1)[1])
    properties = {
        name: {"type": JSON_TYPES[kind], "description": f"the {name} to look for"}
        for name, kind in asked["arguments"].items()
    }
    doc = {
        "type": "function",
        "function": {
            "name": asked["name"],
            "description": f"Written by the model for {asked['name']}.",
            "parameters": {"type": "object", "properties": properties, "required": list(properties)},
        },
    }
    return answer(json.dumps(doc))


def sweep_file(tmp_path: Path, suite: dict[str, Any]) -> Path:
    path = tmp_path / "sweep.yaml"
    config = {
        "name": "docs",
        "models": ["oracle"],
        "suites": [suite],
        "settings": ["clean"],
        "seeds": [0],
        "run": {"store": str(tmp_path / "runs")},
    }
    path.write_text(yaml.safe_dump(config))
    return path


# ---------------------------------------------------------------------------------------------------------------
# docs: model is checked where the suite reference is, before anything is built


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"docs": "model"}, "docs_model: family 'sqlfuncs' with docs: model needs docs_model {url, name}"),
        ({"family": "smoke", "docs": "model", "docs_model": {"url": "http://127.0.0.2:9/v1"}}, "docs: model: family"),
    ],
)
def test_docs_model_without_an_endpoint_or_a_documenter_stops_the_plan(
    spider: Path, tmp_path: Path, cache: Path, entry: dict[str, Any], message: str
) -> None:
    suite = {"family": "sqlfuncs", "spider": str(spider), **entry}
    if suite["family"] == "smoke":
        suite.pop("spider")
    with pytest.raises(ConfigError) as excinfo:
        api.plan(sweep_file(tmp_path, suite))
    text = str(excinfo.value)
    assert message in text and "suites[0]" in text and "\n" not in text
    assert not cache.exists()  # refused before any build


def test_a_docs_model_suite_is_not_built_without_a_documenting_step(spider: Path, cache: Path) -> None:
    ref = suite_ref({"family": "sqlfuncs", "spider": str(spider), "docs": "model", "docs_model": {"url": "u"}})
    with pytest.raises(SuiteError, match="docs: model needs a documenting step"):
        suite_folder(ref)
    assert not cache.exists() or not any(cache.iterdir())


# ---------------------------------------------------------------------------------------------------------------
# A sweep's suite entry with docs: model: documented once, cached with the build


def test_a_sweep_entry_with_model_docs_builds_documented_tools_once(spider: Path, tmp_path: Path, cache: Path) -> None:
    with scripted_server(documenting) as server:
        writer = {"url": server.base_url, "name": "writer"}
        entry: dict[str, Any] = {"family": "sqlfuncs", "spider": str(spider), "docs": "model", "docs_model": writer}
        planned = api.plan(sweep_file(tmp_path, entry))
        asked = server.hits()
        (folder,) = cache.iterdir()
        tools = read_tools(folder)
        assert asked == len(tools) > 0
        assert all(t.description == f"Written by the model for {t.name}." for t in tools)
        assert {r["model"] for r in server.chat_requests} == {"writer"}
        report = read_doc_report(folder)
        assert report is not None
        assert (report["written"], report["tools"], report["kept_template"]) == (len(tools), len(tools), [])
        assert report["model"] == {"url": server.base_url, "name": "writer"}

        # a later process (no in-memory suites) finds the documented build in the cache: no request
        suites._load_cached.cache_clear()
        again = api.plan(sweep_file(tmp_path, entry))
        assert server.hits() == asked
        assert again.suites[0].content_hash == planned.suites[0].content_hash
        loaded = load_ref(suite_ref(entry), document_suite)
        assert loaded.toolbox.specs[tools[0].name].description == tools[0].description

        # another docs model is another build
        other = {**entry, "docs_model": {"url": server.base_url, "name": "other"}}
        assert suite_folder(suite_ref(other), document_suite) != folder
        assert server.hits() == 2 * asked
        # template docs of the same source: a third build, no request
        template = suite_folder(suite_ref({"family": "sqlfuncs", "spider": str(spider)}), document_suite)
        assert read_doc_report(template) is None and server.hits() == 2 * asked


def test_a_worker_builds_model_docs_from_inside_its_event_loop(spider: Path, cache: Path) -> None:
    with scripted_server(documenting) as server:
        ref = suite_ref(
            {"family": "sqlfuncs", "spider": str(spider), "docs": "model", "docs_model": {"url": server.base_url}}
        )

        async def in_a_shard() -> Path:  # what workers.runner does: load the suite inside the shard's loop
            return suite_folder(ref, document_suite)

        folder = asyncio.run(in_a_shard())
        assert server.hits() == len(read_tools(folder))
        assert read_tools(folder)[0].description.startswith("Written by the model")


def test_a_sweep_whose_docs_model_is_down_stops_at_plan_time_and_caches_nothing(
    spider: Path, tmp_path: Path, cache: Path
) -> None:
    entry = {"family": "sqlfuncs", "spider": str(spider), "docs": "model", "docs_model": {"url": refused_url()}}
    with pytest.raises(InfraError, match=r"could not be reached .* nothing was cached: start it and plan again"):
        api.plan(sweep_file(tmp_path, entry))
    assert not cache.exists() or not any(cache.iterdir())  # no template-docs build under the docs: model key


# ---------------------------------------------------------------------------------------------------------------
# The endpoint is down (undertow build): every tool keeps its template doc, the build goes on, quickly


def test_cli_build_with_a_refused_endpoint_keeps_every_template_doc(spider: Path, tmp_path: Path) -> None:
    out = tmp_path / "suite"
    started = time.perf_counter()
    result = CliRunner().invoke(
        app,
        [
            "build",
            "sqlfuncs",
            f"spider={spider}",
            "--out",
            str(out),
            "--docs",
            "model",
            "--docs-model-url",
            refused_url(),
        ],
    )
    elapsed = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    tools = read_tools(out)
    text = " ".join(result.output.split())
    assert f"{len(tools)} of {len(tools)} tools kept the template doc: docs model unreachable" in text
    for index, tool in enumerate(tools):
        assert f"#{index} {tool.name}: docs model unreachable" in text
    assert elapsed < 20  # one request's retries, not one per tool
    report = read_doc_report(out)
    assert report is not None and report["written"] == 0 and report["unreachable"]
    assert [k["index"] for k in report["kept_template"]] == list(range(len(tools)))
    assert {k["name"] for k in report["kept_template"]} == {t.name for t in tools}
    assert not any(t.description.startswith("Written by") for t in tools)
    assert "wrote a sqlfuncs suite" in text


def test_cli_docs_options_are_checked(spider: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    base = ["build", "sqlfuncs", f"spider={spider}", "--out", str(tmp_path / "o")]
    missing = runner.invoke(app, [*base, "--docs", "model"])
    assert missing.exit_code == 2
    assert "--docs model needs --docs-model-url URL" in " ".join(missing.output.split())
    typo = runner.invoke(app, [*base, "--docs", "modle"])
    assert typo.exit_code == 2 and "did you mean 'model'" in " ".join(typo.output.split())
    assert not (tmp_path / "o").exists()


def test_cli_docs_model_url_alone_still_means_model_docs(spider: Path, tmp_path: Path) -> None:
    with scripted_server(documenting) as server:
        out = tmp_path / "o"
        result = CliRunner().invoke(
            app, ["build", "sqlfuncs", f"spider={spider}", "--out", str(out), "--docs-model-url", server.base_url]
        )
        assert result.exit_code == 0, result.output
        tools = read_tools(out)
        assert server.hits() == len(tools)
        assert f"model docs: {len(tools)} of {len(tools)} written (0 after corrections)" in result.output


# ---------------------------------------------------------------------------------------------------------------
# split: only the scenarios of one split


def test_split_keeps_one_split_after_skip_invalid_and_before_limit(spider: Path, tmp_path: Path, cache: Path) -> None:
    ref = {"family": "sqlfuncs", "spider": str(spider)}
    scenarios = load_ref(suite_ref(ref)).scenarios
    marked = [
        s.model_copy(update={"metadata": {**s.metadata, "split": ("validation", "test")[i % 2]}})
        for i, s in enumerate(scenarios)
    ]
    path = tmp_path / "split.jsonl"
    write_scenarios(path, marked)
    with path.open("a") as handle:
        handle.write("{broken\n")  # left out by skip_invalid before the split is taken
    validation = [s.id for s in marked if s.metadata["split"] == "validation"]
    chosen = load_ref(suite_ref({**ref, "scenarios": str(path), "split": "validation", "skip_invalid": True}))
    assert [s.id for s in chosen.scenarios] == validation and len(chosen.skipped) == 1
    limited = load_ref(suite_ref({**ref, "scenarios": str(path), "split": "test", "limit": 1, "skip_invalid": True}))
    assert [s.id for s in limited.scenarios] == [marked[1].id]

    only_test = tmp_path / "test-only.jsonl"
    write_scenarios(only_test, [s for s in marked if s.metadata["split"] == "test"])
    with pytest.raises(SuiteError) as excinfo:
        load_ref(suite_ref({**ref, "scenarios": str(only_test), "split": "validation"}))
    n_test = len(marked) - len(validation)
    assert str(excinfo.value).endswith(f"split 'validation' leaves no scenario; it has test: {n_test}")


def test_split_on_a_real_build_says_what_the_build_has(spider: Path, cache: Path) -> None:
    ref = {"family": "sqlfuncs", "spider": str(spider)}
    everything = load_ref(suite_ref(ref)).scenarios
    for split in ("validation", "test"):
        expected = [s.id for s in everything if s.metadata.get("split") == split]
        if expected:
            assert [s.id for s in load_ref(suite_ref({**ref, "split": split})).scenarios] == expected
            continue
        with pytest.raises(SuiteError) as excinfo:
            load_ref(suite_ref({**ref, "split": split}))
        if not any("split" in s.metadata for s in everything):
            assert "no scenario has split metadata (built by an older build: rebuild it)" in str(excinfo.value)
