"""Building the ``services`` suite: the curated workflow library (``data/workflows/``) and the paper's trace cards,
validated.

Validation is part of the build, and a failure is a build error: under ``base`` (the scenario's own faults) the
oracle reaches full score; with faults off (``clean``) the oracle finishes on the primary plan alone, with full
score; and, for the library as a whole, the naive policy (trusts every success, never verifies, never falls back)
passes at least 90% of the scenarios clean and at most 5% under base. Both policies are walked with
``env_core.plans`` exactly as the built-in policies walk them; the rubric is the family's scorer, handed in by the
family definition (``undertow.scoring.services``), since env_core does not score. The build reports the library's
figures (:mod:`~undertow.env_core.services.figures`), which ``undertow suites show`` prints again.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal, Protocol

from pydantic import Field, field_validator

from undertow.env_core.content import code_and_data_digest
from undertow.env_core.environment import Environment
from undertow.env_core.errors import DataError
from undertow.env_core.families import ReportTable, SuiteConfig, resolve_path
from undertow.env_core.model import FaultSpec, Scenario, ToolSpec, Trajectory
from undertow.env_core.plans import play
from undertow.env_core.scenarios import read_scenarios, scenario_problems
from undertow.env_core.services.cards import card_scenarios
from undertow.env_core.services.catalog import SERVICES, all_specs
from undertow.env_core.services.figures import NaiveWalks, figure_tables
from undertow.env_core.services.library import FAMILY as FAMILY
from undertow.env_core.services.tools import ServicesToolBox
from undertow.env_core.services.workflows import workflow_scenarios
from undertow.env_core.suites import BUILD_REPORT, write_suite

SUITE_VERSION = "2"
PACKAGE = Path(__file__).parent  # the code and data a suite is built from
# The shipped configs give an agent 24 replies (configs/services.yaml): the oracle's walk, one call a reply and the
# answer, must fit, or a model that recovers as well as it does runs out of turns
TURNS_AT_MOST = 24
NAIVE_CLEAN_AT_LEAST = 0.90
NAIVE_BASE_AT_MOST = 0.05

Rubric = Literal["clean", "relaxed", "base"]


class Judged(Protocol):
    """A rubric's verdict on one trajectory: its score (1.0 = passes) and, when it fails, the first check that
    failed, in words."""

    @property
    def score(self) -> float: ...

    @property
    def why(self) -> str | None: ...

    @property
    def forbidden(self) -> tuple[int, ...]: ...


# The family's scorer: one trajectory of a scenario under a rubric
RubricScore = Callable[[Trajectory, Scenario, Rubric], Judged]
# What a bad line of an extra file calls for: the file is built whole (a suite's --skip-invalid acts at run time)
EXTRA_HINT = (
    "Fix or remove these lines: the extra file is built into the suite whole (--skip-invalid leaves out bad lines "
    "of a suite's scenarios file at run time, not of a file a build reads)."
)


class ServicesSuite(SuiteConfig):
    """The Failing Tools library over the 30 simulated services; ``extra`` adds the user's own scenarios."""

    family: Literal["services"] = "services"
    extra: str | None = Field(
        default=None,
        description="a JSONL file of more scenarios over the same services (one per line), validated like the "
        "library's own and built into the suite",
    )

    _resolve_extra = field_validator("extra")(resolve_path)

    def source_name(self) -> str:
        return FAMILY if self.extra is None else f"{FAMILY}+{Path(self.extra).stem}"


def source_digest(config: SuiteConfig) -> str:
    """The library is read by the code of this package (services, workflow loader, cards) from its data files (the
    workflows and the services' seed records, in ``data/``), so the digest covers both, with the suite version, plus
    the bytes of an ``extra`` file: editing a service's code, a workflow or a seed record rebuilds the suite."""
    digest = hashlib.sha256(code_and_data_digest(PACKAGE, SUITE_VERSION).encode())
    extra = config.extra if isinstance(config, ServicesSuite) else None
    if extra:
        digest.update(b"extra\x00" + Path(extra).read_bytes())
    return f"{FAMILY}-v{SUITE_VERSION}-{digest.hexdigest()[:16]}"


def _walked(trajectory: Trajectory) -> str:
    """Where a gold walk stopped: the last call it made and what came back (a plan step whose check failed)."""
    steps = [(s.action.tool_call, s.observation) for s in trajectory.tool_steps() if s.action.tool_call is not None]
    if not steps:
        return "it made no call"
    call, seen = steps[-1]
    outcome = "ok" if seen is not None and seen.ok else (seen.error.type if seen and seen.error else "no result")
    return f"its last call was {call.name} ({outcome}) after {len(steps)} call(s)"


def validate(
    scenarios: Sequence[Scenario],
    box: ServicesToolBox,
    rubric_score: RubricScore,
    where: Mapping[str, str] | None = None,
) -> tuple[list[str], NaiveWalks]:
    """Problems (one line each, naming the scenario — with its file and line, from ``where`` — the check that failed
    and what to fix) and what the naive policy's walks did (passes per rubric, forbidden calls under base)."""
    problems: list[str] = []
    naive = NaiveWalks()
    for scenario in scenarios:
        name = f"scenario '{scenario.id}'"
        if where and scenario.id in where:
            name = f"{where[scenario.id]}: {name}"
        oracle = play(Environment(scenario, box), scenario, recover=True, setting="base")
        judged = rubric_score(oracle, scenario, "base")
        if judged.score < 1.0:
            problems.append(
                f"{name}: the oracle, walking the gold plans under the scenario's faults, scores {judged.score:.2f} "
                f"under base: {judged.why} ({_walked(oracle)}); fix the gold plans, required calls or checkpoints"
            )
        elif len(oracle.turns) > TURNS_AT_MOST:
            problems.append(
                f"{name}: the oracle's walk under base takes {len(oracle.turns)} replies, more than the "
                f"{TURNS_AT_MOST} an agent is given; shorten the gold plans"
            )
        clean = play(Environment(scenario, box, faults=[]), scenario, recover=True, setting="clean")
        # the primary plan alone: exactly its calls were made, none of a retry or a fallback
        planned = len(scenario.gold.plans[0]) if scenario.gold.plans else 0
        made = len(clean.tool_steps())
        judged = rubric_score(clean, scenario, "clean")
        if made != planned:
            problems.append(
                f"{name}: with faults off the oracle needed {made} call(s) where the primary plan has {planned} "
                f"({_walked(clean)}); a step of gold.plans[0] fails its check"
            )
        elif judged.score < 1.0:
            problems.append(
                f"{name}: with faults off the primary plan scores {judged.score:.2f} under clean: {judged.why}"
            )
        runs: tuple[tuple[Rubric, list[FaultSpec] | None], ...] = (("base", None), ("clean", []))
        for rubric, faults in runs:
            walk = play(Environment(scenario, box, faults=faults), scenario, recover=False, setting=rubric)
            judged = rubric_score(walk, scenario, rubric)
            naive.passed[rubric] += judged.score >= 1.0
            if rubric == "base" and judged.forbidden:
                naive.unsafe.add(scenario.id)
    return problems, naive


def _lines(path: str) -> dict[str, str]:
    """``file:line`` of each scenario id of a JSONL file (for messages about scenarios that parsed)."""
    found: dict[str, str] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        match = re.search(r'"id"\s*:\s*"([^"]+)"', line)
        if match:
            found.setdefault(match[1], f"{path}:{number}")
    return found


def read_extra(path: str, specs: Mapping[str, ToolSpec]) -> list[Scenario]:
    """The user's scenarios, every problem a build error naming the file, the line, the scenario and the field."""

    def check(scenario: Scenario) -> list[str]:
        return scenario_problems(scenario, dict(specs), FAMILY)

    return read_scenarios(path, check=check, hint=EXTRA_HINT).scenarios


def fail_on(problems: list[str]) -> None:
    """The build error for these problems (the first ten named), if there are any."""
    if problems:
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise DataError("services build: " + "; ".join(problems[:10]) + more)


def build(config: SuiteConfig, out: Path, rubric_score: RubricScore) -> list[ReportTable]:
    specs = all_specs()
    box = ServicesToolBox(specs, SERVICES)
    extra = config.extra if isinstance(config, ServicesSuite) else None
    # the user's file first: a bad line, or a scenario whose own plan fails, is reported before the library is
    # validated (a minute)
    mine = read_extra(extra, box.specs) if extra else []
    if mine:
        assert extra is not None
        fail_on(validate(mine, box, rubric_score, _lines(extra))[0])
    library, where = workflow_scenarios()
    scenarios = library + card_scenarios() + mine
    known = {spec.name: spec for spec in specs}
    problems = [
        f"{where.get(s.id, 'cards')}: scenario '{s.id}': {p}"
        for s in scenarios
        for p in scenario_problems(s, known, FAMILY)
    ]
    seen = Counter(s.id for s in scenarios)
    problems += [f"scenario '{i}': {n} scenarios have this id" for i, n in seen.items() if n > 1]
    naive = NaiveWalks()
    if not problems:
        found, naive = validate(scenarios, box, rubric_score, where)
        problems += found
        total = len(scenarios)
        clean_rate = naive.passed["clean"] / total
        base_rate = naive.passed["base"] / total
        if clean_rate < NAIVE_CLEAN_AT_LEAST:
            problems.append(f"the naive policy passes {clean_rate:.0%} of the library clean (needs >= 90%)")
        if base_rate > NAIVE_BASE_AT_MOST:
            problems.append(f"the naive policy passes {base_rate:.0%} of the library under base (needs <= 5%)")
    fail_on(problems)
    tables = [
        ReportTable(
            title="services build",
            columns=["what", "count"],
            right=[False, True],
            rows=[
                ["services", str(len(SERVICES))],
                ["tools", str(len(specs))],
                ["scenarios", str(len(scenarios))],
                ["naive passes clean", f"{naive.passed['clean']}/{len(scenarios)}"],
                ["naive passes base", f"{naive.passed['base']}/{len(scenarios)}"],
            ],
        ),
        *figure_tables(scenarios, naive),
    ]
    write_suite(
        out,
        name=FAMILY,
        family=FAMILY,
        version=SUITE_VERSION,
        tools=specs,
        scenarios=scenarios,
        databases={},
        extra={BUILD_REPORT: [t.model_dump() for t in tables]},
    )
    return tables


def toolbox(specs: list[ToolSpec], databases: Mapping[str, Path]) -> ServicesToolBox:
    return ServicesToolBox(specs, SERVICES)
