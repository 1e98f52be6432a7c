"""retrieval/: offline embeddings, the embedding cache, dense / BM25 / hybrid indexes, and the Ray index actor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import ray
from helpers.builders import call
from helpers.spider import make_spider
from typer.testing import CliRunner

from undertow.cluster.cli import app
from undertow.cluster.scheduler import start_index_actors
from undertow.env_core.faults import PRESET_SETTINGS, Setting
from undertow.env_core.model import DisclosureRule, FaultKind, FaultSpec, ToolSpec
from undertow.env_core.search import GET_INFO, SEARCH_TOOLS, ToolAccess
from undertow.env_core.sqlfuncs.build import build_suite, write_build
from undertow.env_core.suites import Suite, load_suite, suite_ref
from undertow.retrieval.cache import EmbeddingCache
from undertow.retrieval.embedder import Embedder
from undertow.retrieval.evaluate import recall_at_k
from undertow.retrieval.index import RetrievalConfig, ToolIndex, universe_key
from undertow.retrieval.service import LocalSearcher, index_actor, release_index_actors, searcher_for
from undertow.workers.runner import ShardSpec

PLANTED = ToolSpec(
    name="function_planted",
    description="Count the lighthouses that a keeper named in the argument painted red during winter storms.",
    parameters={"type": "object", "properties": {"keeper": {"type": "string", "description": "keeper's name"}}},
    binding={"sql": "SELECT 1", "database": "library", "params": []},
)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()  # one model load for the module


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    folder = tmp_path_factory.mktemp("retrieval")
    return load_suite(write_build(build_suite(make_spider(folder / "spider")), folder / "suite"))


@pytest.fixture(scope="module")
def universe(suite: Suite) -> list[ToolSpec]:
    return [*suite.toolbox.specs.values(), PLANTED]


@pytest.mark.slow
def test_the_packaged_model_loads_offline_with_the_hub_unreachable(tmp_path: Path) -> None:
    closed = "http://127.0.0.1:9"  # nothing listens there: any hub access would fail
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(HF_ENDPOINT=closed, HTTPS_PROXY=closed, HTTP_PROXY=closed, HF_HOME=str(tmp_path / "hf"))
    code = (
        "import os; from undertow.retrieval.embedder import Embedder; e = Embedder(); v = e.encode(['hello', 'tools']);"
        "print(v.shape, round(float((v * v).sum(axis=1)[0]), 4), os.environ['HF_HUB_OFFLINE'], e.model_id)"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:4] == ["(2,", "384)", "1.0", "1"]
    assert "all-MiniLM-L6-v2@gt-" in done.stdout
    assert not (tmp_path / "hf" / "hub").exists()  # nothing was downloaded into the hub cache


def test_embeddings_are_normalized_and_meaningful(embedder: Embedder) -> None:
    a, b, c = embedder.encode(["salary of each employee", "how much every employee earns", "orbit of a comet"])
    assert np.allclose([np.linalg.norm(v) for v in (a, b, c)], 1.0, atol=1e-5)
    assert float(a @ b) > float(a @ c) + 0.2
    assert embedder.encode([]).shape == (0, 384)


def test_rebuilding_over_an_unchanged_universe_encodes_nothing(
    tmp_path: Path, universe: list[ToolSpec], embedder: Embedder
) -> None:
    config = RetrievalConfig(cache=str(tmp_path / "cache"))
    cold = ToolIndex(universe, "dense", config, embedder)
    assert cold.encoded == len(universe)
    fresh = Embedder()  # a new process would have a new embedder: it must not be asked to encode
    warm = ToolIndex(universe, "dense", config, fresh)
    assert warm.encoded == 0 and fresh.encoded == 0 and fresh._model is None  # the model is not even loaded
    changed = [*universe[:-1], PLANTED.model_copy(update={"description": "Something else entirely."})]
    assert ToolIndex(changed, "dense", config, embedder).encoded == 1
    assert len(list((tmp_path / "cache").rglob("*.npz"))) == 2  # one chunk per build that encoded something


def test_the_cache_returns_vectors_in_document_order(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    calls: list[list[str]] = []

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(texts)
        return np.array([[float(len(t)), 1.0] for t in texts], dtype=np.float32)

    vectors, encoded = cache.embed("m", ["aa", "b", "aa"], encode)
    assert encoded == 2 and calls == [["aa", "b"]]
    assert vectors[:, 0].tolist() == [2.0, 1.0, 2.0]
    vectors, encoded = cache.embed("m", ["b", "ccc"], encode)
    assert encoded == 1 and calls[-1] == ["ccc"] and vectors[:, 0].tolist() == [1.0, 3.0]
    assert cache.embed("other-model", ["b"], encode)[1] == 1  # keyed by model id too


@pytest.mark.parametrize(
    ("mode", "index"), [("bm25", "flat"), ("dense", "flat"), ("dense", "ivf"), ("dense", "hnsw"), ("hybrid", "flat")]
)
def test_each_mode_returns_the_planted_tool_first_for_its_description(
    tmp_path: Path, universe: list[ToolSpec], embedder: Embedder, mode: str, index: str
) -> None:
    config = RetrievalConfig(cache=str(tmp_path), index=index)
    tool_index = ToolIndex(universe, mode, config, embedder)  # type: ignore[arg-type]
    assert tool_index.search(PLANTED.description, 9)[0] == PLANTED.name
    assert len(tool_index.search("books and their authors", 5)) == 5 or mode == "bm25"
    assert tool_index.search("   ", 9) == [] and tool_index.search("books", 0) == []


def test_recall_at_k_on_the_generated_suite(suite: Suite, embedder: Embedder, tmp_path: Path) -> None:
    index = ToolIndex(list(suite.toolbox.specs.values()), "dense", RetrievalConfig(cache=str(tmp_path)), embedder)
    scores = recall_at_k(suite.scenarios, index, [1, 3, 9])
    assert scores["scenarios"] == len(suite.scenarios)
    at = scores["at"]
    assert 0 < at[1]["hit"] <= at[3]["hit"] <= at[9]["hit"] <= 1
    assert at[9]["recall"] <= at[9]["hit"] and at[9]["direct"] <= at[9]["hit"]


def test_removed_and_undisclosed_tools_never_leak_through_a_real_index(
    suite: Suite, embedder: Embedder, tmp_path: Path
) -> None:
    scenario = next(s for s in suite.scenarios if "Chile" in s.task)
    direct, (inner, outer) = scenario.gold.plans[0][0].tool, [c.tool for c in scenario.gold.plans[1]]
    # the outer chain function is hidden until the inner one fails; the direct function is removed
    staged = scenario.model_copy(
        update={
            "tools": [direct, inner],
            "hidden_tools": [outer],
            "disclosure": [DisclosureRule(tools=[outer], after_failure_of=inner)],
            "faults": [FaultSpec(kind=FaultKind.removed, target=direct)],
        }
    )
    specs = list(suite.toolbox.specs.values())
    searcher = searcher_for(specs, "hybrid", RetrievalConfig(cache=str(tmp_path)))
    assert isinstance(searcher, LocalSearcher)
    as_planned = Setting(name="scenario-faults")  # only the scenario's own fault plan
    env = suite.environment(staged, 0, as_planned, ToolAccess(mode="open", search="hybrid"), searcher)
    env.reset()
    for hidden in (direct, outer):
        description = suite.toolbox.specs[hidden].description
        found = call(env, SEARCH_TOOLS, query=description, num_results=9)
        assert found.ok and hidden not in {r["name"] for r in found.result}
        assert not call(env, GET_INFO, tool_name=hidden).ok
    assert call(env, inner, zeta="x").error.type == "invalid_arguments"  # a failed call of the trigger tool
    found = call(env, SEARCH_TOOLS, query=suite.toolbox.specs[outer].description, num_results=9)
    assert outer in {r["name"] for r in found.result}  # disclosed now
    assert direct not in {r["name"] for r in found.result}


def test_the_result_cap_is_configurable(suite: Suite) -> None:
    env = suite.environment(suite.scenarios[0], 0, PRESET_SETTINGS["clean"], ToolAccess(mode="open", max_results=3))
    env.reset()
    too_many = call(env, SEARCH_TOOLS, query="books", num_results=4)
    assert not too_many.ok and "num_results must be an integer from 1 to 3, got 4" in too_many.error.message
    assert len(call(env, SEARCH_TOOLS, query="books titles authors", num_results=3).result) <= 3


@pytest.mark.slow
def test_the_index_actor_is_one_per_node_and_serves_concurrent_callers(
    ray_local: None, universe: list[ToolSpec], tmp_path: Path, embedder: Embedder
) -> None:
    config = RetrievalConfig(cache=str(tmp_path))
    actor = index_actor(config)
    assert index_actor(config)._actor_id == actor._actor_id  # found by name, not created twice
    key = universe_key(universe)
    stats = ray.get(actor.ensure.remote(key, "dense", universe))
    assert stats["tools"] == len(universe) and stats["encoded"] == len(universe)
    local = ToolIndex(universe, "dense", config, embedder)  # same cache: encodes nothing

    queries = [PLANTED.description, "titles of books", "orders of customers in a city", "authors born after"] * 2

    @ray.remote(num_cpus=0)
    def ask(query: str) -> list[str]:
        return ray.get(actor.search.remote(key, "dense", query, 5))

    answers = ray.get([ask.remote(q) for q in queries])  # concurrent callers in other processes
    assert answers == [local.search(q, 5) for q in queries]
    assert answers[0][0] == PLANTED.name
    info = ray.get(actor.stats.remote())
    assert info["pid"] != os.getpid() and info["indexes"] == 1 and info["rss_mb"] > 50


def test_retrieval_eval_cli(suite: Suite, tmp_path: Path) -> None:
    folder = write_build(build_suite(make_spider(tmp_path / "spider")), tmp_path / "suite")
    runner = CliRunner()
    done = runner.invoke(app, ["retrieval-eval", "--suite", str(folder), "--modes", "bm25,lexical", "--format", "json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert set(report["modes"]) == {"bm25", "lexical"} and report["tools"] == len(suite.toolbox.specs)
    assert all(0 <= row["at"]["9"]["hit"] <= 1 for row in report["modes"].values())
    spider = tmp_path / "spider"
    built = runner.invoke(
        app, ["retrieval-eval", "--suite", "sqlfuncs", f"spider={spider}", "--modes", "bm25", "--format", "json"]
    )
    assert built.exit_code == 0, built.output
    assert json.loads(built.output)["tools"] == len(suite.toolbox.specs)  # the same suite, built from the family
    for args, message in [
        ([], "Missing option '--suite'"),
        (["--suite", "sqlfunc"], "unknown family 'sqlfunc'; did you mean 'sqlfuncs'?"),
        (["--suite", str(folder), "--k", "0"], "--k: expected comma-separated positive integers, e.g. 1,3,9, got '0'"),
        (["--suite", str(folder), "--modes", "magic"], "--modes: unknown mode 'magic'; expected some of bm25, dense"),
    ]:
        bad = runner.invoke(app, ["retrieval-eval", *args])
        assert bad.exit_code == 2 and message in " ".join(bad.output.split()), bad.output


def test_the_index_actor_outlives_the_workers_that_use_it(
    ray_local: None, universe: list[ToolSpec], tmp_path: Path
) -> None:
    """The driver creates the node's index actor (cluster.scheduler.start_index_actors), so a worker that used it
    and is gone does not take it down while another worker is still searching with it."""
    config = RetrievalConfig(cache=str(tmp_path), service="actor")
    shard = ShardSpec(
        shard_id="s",
        model={"name": "random"},
        suite=suite_ref({"family": "smoke", "access": {"mode": "open"}}),
        setting=PRESET_SETTINGS["clean"],
        retrieval=config,
        episodes=[],
    )
    start_index_actors([shard])

    @ray.remote(num_cpus=0)
    class Worker:
        def prepare(self) -> None:
            self.searcher = searcher_for(universe, "bm25", config)

        def search(self, query: str) -> list[str]:
            return self.searcher.search(query, 3)

    first, second = Worker.remote(), Worker.remote()
    ray.get(first.prepare.remote())
    ray.get(second.prepare.remote())
    ray.kill(first)
    with pytest.raises(ray.exceptions.RayActorError):
        ray.get(first.prepare.remote())  # the first worker is gone for good
    time.sleep(1.0)  # give an owner's death time to reach what it owned
    assert ray.get(second.search.remote(PLANTED.description))[0] == PLANTED.name
    release_index_actors()
