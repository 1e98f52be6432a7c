"""Scenario files (JSONL, one scenario per line) and checks of scenarios against a tool universe."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from undertow.env_core.errors import DataError, did_you_mean
from undertow.env_core.model import ASK_USER, TARGET_PRIMARY, TARGET_SOLUTION, ArgRef, Scenario, ToolSpec


def describe_validation_error(exc: ValidationError) -> str:
    return " | ".join(validation_problems(exc))


def validation_problems(exc: ValidationError) -> list[str]:
    """One line per problem: the field path (``models[2].kind``), what was wrong, and the value that was given."""
    lines = []
    for err in exc.errors():
        where = ""
        for part in err["loc"]:
            where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        shown = (
            ""
            if err["type"] in ("missing", "value_error")
            else f" (got {json.dumps(err.get('input'), default=str)[:80]})"
        )
        lines.append(f"{where}: {message}{shown}" if where else f"{message}{shown}")
    return lines


# What to do about bad lines in a suite's scenario file, read where ``--skip-invalid`` (``skip_invalid: true``) works
SKIP_HINT = "Fix them, or pass --skip-invalid to run the valid scenarios only."


class ScenarioFileError(DataError):
    """Bad lines in a scenario file. ``problems`` holds one ``file:line: message`` string per bad line; ``hint``
    says what to do about them where the file is read (a flag that works there)."""

    def __init__(self, problems: list[str], hint: str = SKIP_HINT):
        self.problems = problems
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        super().__init__("invalid scenarios:\n  " + "\n  ".join(problems[:10]) + more + "\n" + hint)


@dataclass
class ScenarioFile:
    scenarios: list[Scenario]
    skipped: list[str] = field(default_factory=list)  # "file:line: message" for each bad line that was skipped


def read_scenarios(
    path: str | Path,
    skip_invalid: bool = False,
    check: Callable[[Scenario], list[str]] | None = None,
    hint: str = SKIP_HINT,
) -> ScenarioFile:
    """Load a JSONL scenario file in one pass. Any bad line (not JSON, not a scenario, a repeated id, or a problem
    ``check`` finds, e.g. an unknown tool) is an error naming its file and line, unless ``skip_invalid``; ``hint``
    ends the error (what to do where this file is read)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: scenario file not found")
    scenarios: list[Scenario] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    with path.open("rb") as handle:  # bytes: a line that is not UTF-8 is one bad line, not a crash
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append(f"{path}:{number}: not valid UTF-8 (byte {exc.start + 1})")
                continue
            if not line.strip():
                continue
            try:
                scenario = Scenario.model_validate_json(line)
            except ValidationError as exc:
                if any(e["type"] == "json_invalid" for e in exc.errors()):
                    problems.append(f"{path}:{number}: not valid JSON")
                else:
                    problems.append(f"{path}:{number}: {_named(line)}{describe_validation_error(exc)}")
                continue
            if scenario.id in seen:
                problems.append(
                    f"{path}:{number}: duplicate scenario id '{scenario.id}' (first on line {seen[scenario.id]})"
                )
                continue
            seen[scenario.id] = number
            found = check(scenario) if check is not None else []
            if found:
                problems.extend(f"{path}:{number}: scenario '{scenario.id}': {problem}" for problem in found)
                continue
            scenarios.append(scenario)
    if problems and not skip_invalid:
        raise ScenarioFileError(problems, hint)
    return ScenarioFile(scenarios=scenarios, skipped=problems)


def _named(line: str) -> str:
    """``scenario 'id': `` for a line whose JSON names its id, so that a bad scenario is found by name too."""
    try:
        identifier = json.loads(line).get("id")
    except (ValueError, AttributeError):
        return ""
    return f"scenario '{identifier}': " if isinstance(identifier, str) and identifier else ""


def write_scenarios(path: str | Path, scenarios: list[Scenario]) -> None:
    with Path(path).open("w", encoding="utf-8") as handle:
        for scenario in scenarios:
            handle.write(scenario.model_dump_json(exclude_defaults=False) + "\n")


def scenario_problems(scenario: Scenario, specs: dict[str, ToolSpec], family: str) -> list[str]:
    """Everything about ``scenario`` that cannot work with this tool universe, as readable messages."""
    problems = []
    if scenario.family != family:
        problems.append(f"family '{scenario.family}' does not match the suite's family '{family}'")

    def check(tool: str, where: str) -> None:
        if tool not in specs:
            problems.append(f"{where} references unknown tool '{tool}'; {did_you_mean(tool, specs)}")

    for name in scenario.tools:
        check(name, "tools")
    for name in scenario.hidden_tools:
        check(name, "hidden_tools")
    available = set(scenario.tools) | set(scenario.hidden_tools)
    for p, plan in enumerate(scenario.gold.plans):
        for c, call in enumerate(plan):
            where = f"gold.plans[{p}][{c}]"
            check(call.tool, where)
            if call.tool in specs and call.tool not in available:
                problems.append(f"{where} uses tool '{call.tool}', which is neither visible nor hidden in the scenario")
            for arg, value in call.arguments.items():
                if isinstance(value, ArgRef) and value.from_call >= c:
                    problems.append(f"{where}.arguments.{arg} refers to call {value.from_call}, which is not earlier")
    for kind in ("required_calls", "forbidden_calls"):
        for i, pattern in enumerate(getattr(scenario.gold, kind)):
            for tool in pattern.tools:
                if tool != ASK_USER or not scenario.user_replies:
                    check(tool, f"gold.{kind}[{i}]")
            if pattern.after is not None and (
                kind != "required_calls" or pattern.after >= len(scenario.gold.required_calls)
            ):
                problems.append(f"gold.{kind}[{i}].after: no required call number {pattern.after}")
    for i, checkpoint in enumerate(scenario.gold.checkpoints):
        if checkpoint.trigger != "final" and checkpoint.trigger not in specs:
            problems.append(
                f"gold.checkpoints[{i}].trigger: names a call that never exists: '{checkpoint.trigger}' is neither "
                f"'final' nor a tool; {did_you_mean(checkpoint.trigger, [*specs, 'final'])}"
            )
    for i, fault in enumerate(scenario.faults):
        for target in fault.targets:
            if target not in (TARGET_SOLUTION, TARGET_PRIMARY):
                check(target, f"faults[{i}].target")
    return problems
