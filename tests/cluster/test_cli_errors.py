"""Bad input fails before any episode runs, with one message naming the file, the field and what was expected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from undertow.cluster.cli import app
from undertow.env_core.suites import load_ref, suite_ref

runner = CliRunner()

BASE = {"name": "t", "models": ["oracle"], "suites": ["smoke"], "settings": ["clean"], "seeds": [0]}


def write_config(tmp_path: Path, **changes: object) -> Path:
    data = {**BASE, **changes, "run": {"store": str(tmp_path / "runs")}}
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def run_cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, " ".join(result.output.split())


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"modles": ["oracle"]}, ["sweep.yaml:3: modles: unknown field"]),
        ({"agent": {"max_turns": "many"}}, ["sweep.yaml:2: agent.max_turns:", "valid integer", '"many"']),
        ({"agent": {"max_turns": 0}}, ["agent.max_turns:", "greater than or equal to 1"]),
        ({"models": ["oracle", "gpt-9"]}, ["models[1]: unknown model 'gpt-9'", "oracle, naive, random"]),
        ({"models": [{"name": "m", "kind": "openai"}]}, ["models[0]:", "needs base_url"]),
        ({"models": [{"name": "m", "kind": "policy", "policy": "genius"}]}, ["unknown policy 'genius'"]),
        (
            {"models": [{"name": "m", "kind": "vllm", "weights": "/no/such/model"}]},
            ["models[0]:", "weights folder not found: /no/such/model"],
        ),
        ({"settings": ["clean", "chaos"]}, ["settings[1]: unknown setting 'chaos'", "first_tried"]),
        (
            {"settings": [{"name": "s", "faults": [{"kind": "flaky", "target": "x"}]}]},
            ["settings[0].faults[0].kind", "Input should be 'unavailable'", "'cascade'", "flaky"],
        ),
        (
            {"suites": ["smokee"]},
            ["suites[0]: 'smokee' is neither a suite folder nor a family", "did you mean 'smoke'?"],
        ),
        ({"suites": [{"family": "smokee"}]}, ["suites[0]: unknown family 'smokee'; did you mean 'smoke'?", "sqlfuncs"]),
        (
            {"suites": [{"family": "no_such_package.bench:FAMILY"}]},
            ["suites[0]: family reference 'no_such_package.bench:FAMILY': cannot import no_such_package.bench"],
        ),
        (
            {"suites": [{"family": "json:dumps"}]},
            ["suites[0]: family reference 'json:dumps': function is not a Family"],
        ),
        (
            {"suites": [{"family": "json:nothing"}]},
            ["family reference 'json:nothing': json has no attribute 'nothing'"],
        ),
        ({"suites": [{"family": "smoke", "spider": "x"}]}, ["suites[0].spider: unknown field"]),
        ({"seeds": [1, 1]}, ["seeds: seeds must be unique"]),
        ({"models": ["oracle", "oracle"]}, ["model names must be unique; repeated: oracle"]),
    ],
)
def test_config_errors_name_file_field_and_expectation(tmp_path: Path, changes: dict, expected: list[str]) -> None:
    code, output = run_cli("run", str(write_config(tmp_path, **changes)))
    assert code == 2
    assert output.startswith("error:")
    for fragment in expected:
        assert fragment in output
    assert not (tmp_path / "runs").exists(), "nothing may run or be written"


def test_missing_config_file(tmp_path: Path) -> None:
    code, output = run_cli("run", str(tmp_path / "nope.yaml"))
    assert code == 2 and "nope.yaml: config file not found" in output


def test_invalid_yaml(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("models: [oracle\nsuites: smoke\n")
    code, output = run_cli("run", str(path))
    assert code == 2 and "bad.yaml:2: not valid YAML" in output and "line 1" in output


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- oracle\n")
    code, output = run_cli("run", str(path))
    assert code == 2 and "expected a mapping of fields at the top level, got list" in output


def test_missing_suite_folder_and_scenario_file(tmp_path: Path) -> None:
    code, output = run_cli("run", str(write_config(tmp_path, suites=["no_such_suite_dir"])))
    assert code == 2 and "'no_such_suite_dir' is neither a suite folder nor a family" in " ".join(output.split())
    code, output = run_cli("run", str(write_config(tmp_path, suites=[{"path": "no_such_suite_dir"}])))
    assert code == 2 and "sweep.yaml:11: suites[0].path: folder" in output and "no_such_suite_dir not found" in output
    code, output = run_cli("run", str(write_config(tmp_path, suites=[{"family": "smoke", "scenarios": "x.jsonl"}])))
    assert code == 2 and "x.jsonl: scenario file not found" in output
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("agent.max_turns", "expected KEY=VALUE"),
        ("agent.max_turnz=3", "agent.max_turnz: unknown field"),
        ("models.5.name=x", "models.5: no list item 5 (the list has 1)"),
        ("seeds=[0, 1", "value is not valid YAML"),
    ],
)
def test_bad_overrides(tmp_path: Path, override: str, expected: str) -> None:
    code, output = run_cli("run", str(write_config(tmp_path)), override)
    assert code == 2 and expected in output


def test_overrides_apply_before_validation(tmp_path: Path) -> None:
    code, output = run_cli("validate", str(write_config(tmp_path)), "seeds=[0,1,2]", "settings=[clean,impossible]")
    assert code == 0, output
    assert f"{35 * 3 * 2} episodes" in output


def _scenarios_with_unknown_tool(tmp_path: Path) -> Path:
    suite = load_ref(suite_ref("smoke"))
    lines = [s.model_dump(mode="json") for s in suite.scenarios[:3]]
    lines[1]["gold"]["plans"][1][0]["tool"] = "teleport_employee"
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_gold_plan_with_unknown_tool_stops_the_run(tmp_path: Path) -> None:
    scenarios = _scenarios_with_unknown_tool(tmp_path)
    config = write_config(tmp_path, suites=[{"family": "smoke", "scenarios": scenarios.name}])
    code, output = run_cli("run", str(config))
    assert code == 2
    assert "mine.jsonl:2: scenario 'smoke-reports-02'" in output
    assert "gold.plans[1][0] references unknown tool 'teleport_employee'" in output
    assert "--skip-invalid" in output
    assert not (tmp_path / "runs").exists()


def test_skip_invalid_runs_the_valid_scenarios_and_reports_the_skipped(tmp_path: Path) -> None:
    scenarios = _scenarios_with_unknown_tool(tmp_path)
    config = write_config(tmp_path, suites=[{"family": "smoke", "scenarios": scenarios.name}])
    code, output = run_cli("validate", str(config), "--skip-invalid")
    assert code == 0, output
    assert "skipped:" in output and "teleport_employee" in output
    assert "smoke (smoke v1): 2 scenarios" in output


def test_bad_scenario_line_is_reported_with_file_and_line(tmp_path: Path) -> None:
    suite = load_ref(suite_ref("smoke"))
    good = suite.scenarios[0].model_dump_json()
    (tmp_path / "lines.jsonl").write_text(f"{good}\n{{not json\n")
    config = write_config(tmp_path, suites=[{"family": "smoke", "scenarios": "lines.jsonl"}])
    code, output = run_cli("run", str(config))
    assert code == 2 and "lines.jsonl:2: not valid JSON" in output
    code, output = run_cli("validate", str(config), "--skip-invalid")
    assert code == 0 and "1 scenarios" in output


def test_report_errors(tmp_path: Path) -> None:
    code, output = run_cli("report", "no-such-run", "--store", str(tmp_path))
    assert code == 2 and "run 'no-such-run' not found" in output
    code, output = run_cli("report", "x", "--format", "xml")
    assert code == 2 and "--format: expected 'table' or 'json', got 'xml'" in output


def run_split(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_markup_in_an_override_is_text_not_rich_markup(tmp_path: Path) -> None:
    # "[/oracle]" is a closing tag to rich: printed as markup it raised MarkupError and a traceback
    code, out, err = run_split("validate", str(write_config(tmp_path)), "models=[/oracle]")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ")
    assert "models[0]: unknown model '/oracle'" in err and "Traceback" not in err


def test_markup_in_names_is_printed_literally_by_every_command(tmp_path: Path) -> None:
    # names users choose freely (a suite's alias here) reach tables, titles and notes of many commands
    from helpers.runs import stored_run

    label = "[/oracle][bold]x[/bold]"
    config = {
        "name": "markup",
        "models": ["oracle", "naive"],
        "suites": [{"family": "smoke", "limit": 4, "alias": label}],
        "settings": ["clean", "first_tried"],
    }
    manifest = stored_run(tmp_path, config)
    # each command's first row with the label, as printed (split into cells), and where the label must be in it
    expected = {
        "report": (0, ["oracle", label, "clean"]),
        "status": (0, ["oracle", label, "clean"]),
        "compare": (0, [label, "clean", "oracle", "naive"]),
        "episodes": (1, ["oracle", label, "clean"]),
    }
    for command, (start, cells) in expected.items():
        code, out, err = run_split(command, manifest.run_id, "--store", str(tmp_path))
        assert code == 0 and "Traceback" not in out + err, (command, err)
        row = next(line.split() for line in out.splitlines() if label in line)
        assert row[start : start + len(cells)] == cells, (command, row)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--model", "all-MiniLM-L6-v3"],
            "error: --model: no sentence-transformers model 'all-MiniLM-L6-v3' here: it is not the packaged "
            "all-MiniLM-L6-v2, a folder, or in the local Hugging Face cache (nothing is downloaded); did you mean "
            "'all-MiniLM-L6-v2'?",
        ),
        (["--model", "nosuch", "--modes", "hybrid"], "error: --model: no sentence-transformers model 'nosuch' here"),
        (
            ["--k", "0,x"],
            "error: --k: expected comma-separated positive integers, e.g. 1,3,9, got '0,x' "
            "(not positive integers: '0', 'x')",
        ),
        (["--k", ""], "error: --k: expected comma-separated positive integers, e.g. 1,3,9, got ''"),
        (
            ["--modes", "bm25,dens"],
            "error: --modes: unknown mode 'dens'; expected some of bm25, dense, hybrid, lexical; did you mean 'dense'?",
        ),
        (["--index", "nosuch"], "error: --index: Input should be 'flat', 'ivf' or 'hnsw' (got \"nosuch\")"),
        (["--device", "tpu"], "error: --device: expected cpu, cuda, cuda:N or mps, got 'tpu'"),
        (["--format", "xml"], "error: --format: expected 'table' or 'json', got 'xml'"),
    ],
)
def test_retrieval_eval_options_are_one_line_errors(options: list[str], message: str) -> None:
    code, out, err = run_split("retrieval-eval", "--suite", "smoke", *options)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.strip().startswith(message)


def test_retrieval_eval_suite_typo_names_the_option() -> None:
    code, _, err = run_split("retrieval-eval", "--suite", "smokee")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("error: --suite: unknown family 'smokee'; did you mean 'smoke'?")
