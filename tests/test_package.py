"""One installed name: the product is the package ``undertow`` (its subpackages are the repository's top-level
folders, reached through the symlinks in ``undertow/``), the wheel holds nothing else, and it works installed
from the wheel in an environment of its own, outside the repository. The import graph of ``undertow.*`` has no
cycle, and the check that says so finds a planted one."""

from __future__ import annotations

import gzip
import importlib.metadata
import importlib.util
import json
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import grimp
import pytest
from helpers.cli import invoke
from helpers.paths import REPO

import undertow
from undertow.cluster.store import parquet_rows

PACKAGES = ("storage", "env_core", "retrieval", "scoring", "workers", "cluster")


def import_cycles(graph: grimp.ImportGraph) -> list[str]:
    """Every direct import ``a -> b`` where ``b`` reaches back to ``a``."""
    cycles = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if graph.chain_exists(importer=imported, imported=module):
                cycles.append(f"{module} -> {imported}")
    return cycles


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("undertow")


def test_the_import_graph_sees_every_package_and_has_no_cycle(graph: grimp.ImportGraph) -> None:
    assert {f"undertow.{name}" for name in PACKAGES} <= graph.modules
    # the edges between the packages, through the symlinks: what the layers contract and this check rely on
    for importer, imported in [
        ("undertow.cluster.api.running", "undertow.workers.runner"),
        ("undertow.workers.runner", "undertow.env_core.suites"),
        ("undertow.workers.runner", "undertow.retrieval.service"),
        ("undertow.scoring.trajectory", "undertow.env_core.model"),
        ("undertow.env_core.suites", "undertow.env_core.environment"),
    ]:
        assert graph.direct_import_exists(importer=importer, imported=imported), (importer, imported)
    assert len(graph.modules) > 100
    assert import_cycles(graph) == []


def test_a_planted_cycle_is_found(graph: grimp.ImportGraph) -> None:
    graph.add_import(importer="undertow.env_core.model", imported="undertow.cluster.api.running")
    try:
        cycles = import_cycles(graph)
    finally:
        graph.remove_import(importer="undertow.env_core.model", imported="undertow.cluster.api.running")
    assert "undertow.env_core.model -> undertow.cluster.api.running" in cycles
    assert "undertow.cluster.api.running -> undertow.env_core.model" in cycles
    assert import_cycles(graph) == []


def test_the_version_is_the_distributions_and_the_cli_prints_it() -> None:
    assert undertow.__version__ == importlib.metadata.version("undertow")
    code, out, _ = invoke("--version")
    assert (code, out.strip()) == (0, f"undertow {undertow.__version__}")


def test_the_bare_folder_names_are_not_importable() -> None:
    """The tests run as users do (``python -P``: the repository root is not on the path), so an import that only
    works from the root fails here too."""
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        assert spec is None or spec.origin is None, f"{name} importable from {spec.origin}"  # a tests/ folder at most
    assert str(REPO) not in [str(Path(p).resolve()) for p in sys.path if p]


# -- the wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from a copy of what it is built from (setuptools writes build/ and egg-info next to the
    sources: not in the working tree)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for name in ("undertow", *PACKAGES):
        shutil.copytree(REPO / name, source / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = out.glob("undertow-*.whl")
    return built


def test_the_wheel_holds_one_top_level_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"undertow", f"undertow-{undertow.__version__}.dist-info"}, tops
    for name in PACKAGES:
        assert f"undertow/{name}/__init__.py" in names
    assert "undertow/py.typed" in names
    assert "undertow/cluster/templates/report.html.j2" in names
    assert "undertow/env_core/sandbox/child.py" in names
    assert "undertow/env_core/services/data/stays.jsonl" in names  # a family's content ships with its code
    assert "undertow/env_core/failtalms/data/requests.jsonl" in names  # a family's content ships with its code
    assert "undertow/env_core/failtalms/data/tables/stocks.jsonl" in names
    entry_points = zipfile.ZipFile(wheel).read(f"undertow-{undertow.__version__}.dist-info/entry_points.txt").decode()
    assert "undertow = undertow.cluster.cli:main" in entry_points
    assert "smoke = undertow.scoring.smoke:FAMILY" in entry_points


@pytest.mark.slow
def test_the_wheel_works_in_a_fresh_environment_outside_the_repository(wheel: Path, tmp_path: Path) -> None:
    """The wheel alone (``--no-deps``) in a new virtual environment; its dependencies come from the development
    environment through a ``.pth`` line (a plain path: that folder's own .pth files, the editable install among
    them, are not read). Then what a user does first: build two suites, and run the quickstart from another folder
    and read its results back (this is the suite's end-to-end run of `make demo`'s sweep)."""
    venv = tmp_path / "venv"
    base_python = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base_python, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    (purelib,) = {
        Path(p)
        for p in subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    }
    (purelib / "development.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    work = tmp_path / "elsewhere"
    work.mkdir()

    def run(*args: str) -> str:
        done = subprocess.run(args, cwd=work, capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, f"{args}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done.stdout

    where = run(str(python), "-c", "import undertow.cluster, sys; print(undertow.cluster.__file__)").strip()
    assert Path(where).is_relative_to(venv), where
    bare = subprocess.run([str(python), "-c", "import cluster"], cwd=work, capture_output=True, text=True)
    assert "No module named 'cluster'" in bare.stderr
    undertow_command = str(venv / "bin" / "undertow")
    assert run(undertow_command, "--version").strip() == f"undertow {undertow.__version__}"
    run(undertow_command, "build", "smoke", "--out", str(work / "smoke-suite"))
    assert (work / "smoke-suite" / "scenarios.jsonl").is_file()
    run(undertow_command, "build", "services", "--out", str(work / "services-suite"))
    assert (work / "services-suite" / "scenarios.jsonl").is_file()
    # the quickstart (what `make demo` runs) from a copy of the config, in another folder: table, run folder, report
    config = tmp_path / "configs-copy" / "quickstart.yaml"
    config.parent.mkdir()
    shutil.copy(REPO / "configs" / "quickstart.yaml", config)
    out = run(undertow_command, "run", str(config))
    store = work / "runs"  # ./runs, as documented
    (run_dir,) = [p for p in store.iterdir() if (p / "manifest.json").is_file()]
    lines = [" ".join(line.split()) for line in out.splitlines()]
    assert f"{run_dir.name}: 315 episodes" in out and "315/315" in out
    for row in (
        "oracle smoke first_tried 35 100.0% 90–100 0.0% scored 35",
        "oracle smoke impossible 35 0.0% 0–10 100.0% scored 35",
        "naive smoke first_tried 35 0.0% 0–10 0.0% scored 35",
    ):
        assert any(line.startswith(row) for line in lines), row

    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["run_id"] == run_dir.name
    assert {"undertow", "python", "ray", "pydantic"} <= set(manifest["versions"])
    assert manifest["versions"]["undertow"] == undertow.__version__
    assert manifest["suites"][0]["n_scenarios"] == 35 and len(manifest["suites"][0]["content_hash"]) == 64
    assert manifest["config"]["settings"][1]["name"] == "first_tried"
    result_rows = sum(len(parquet_rows(p.read_bytes())) for p in (run_dir / "results").glob("*.parquet"))
    trace_lines = sum(len(gzip.decompress(p.read_bytes()).splitlines()) for p in (run_dir / "traces").glob("*.gz"))
    assert result_rows == trace_lines == 315

    rows = json.loads(run(undertow_command, "report", run_dir.name, "--format", "json"))["rows"]
    assert len(rows) == 9
    assert {k for k in rows[0]} >= {"model", "suite", "setting", "n", "accuracy", "ci_low", "ci_high", "outcomes"}
    by_key = {(r["model"], r["setting"]): r for r in rows}
    assert by_key["oracle", "first_tried"]["accuracy"] == 1.0 and by_key["oracle", "first_tried"]["ci_low"] > 0.89
    assert by_key["naive", "first_tried"]["accuracy"] == 0.0
    assert by_key["oracle", "impossible"]["gave_up_rate"] == 1.0
    assert all(r["outcomes"]["scored"] == 35 for r in rows)
    table = run(undertow_command, "report", str(run_dir))
    assert "oracle smoke first_tried 35 100.0% 90–100" in " ".join(table.split())
