"""Every kind of the shared fault layer on the tools of two families — sqlfuncs built from spider-dev's
``concert_singer``, and the toy family of ``tests/toy_family`` — declared the same way for both: what the agent
observes, what the trace records, healing under ``temporary(after=1)``, determinism, and the messages a bad fault
spec gets. A third world, real SQLite write tools over the same ``concert_singer`` database, checks that a
``silent_noop`` write leaves the episode's state unchanged (and that a partial write lands half)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers.builders import step as call
from helpers.paths import SPIDER_DEV
from pydantic import ValidationError
from toy_family import build as toy_build  # type: ignore[import-not-found]  # tests/ is on the path

from undertow.env_core.environment import Environment
from undertow.env_core.faults import Setting, expects_give_up, resolve_faults
from undertow.env_core.model import (
    FaultKind,
    FaultSpec,
    Gold,
    Observation,
    Persistence,
    PlannedCall,
    Scenario,
    ToolSpec,
    Trajectory,
)
from undertow.env_core.scenarios import read_scenarios, validation_problems
from undertow.env_core.sqlfuncs.build import build_suite, write_build
from undertow.env_core.suites import load_suite, read_tools
from undertow.env_core.tools import SqliteToolBox, ToolBox
from undertow.workers.agent import AgentConfig, run_agent
from undertow.workers.policies import OraclePolicy

DB = "concert_singer"
PERMANENT = Persistence()
TEMPORARY = Persistence(mode="temporary", after=1)


@dataclass
class World:
    """One family's scenario and tool box, and which of its tools the tests aim at."""

    name: str
    scenario: Scenario
    toolbox: ToolBox
    read: str  # a tool whose result the silent faults alter
    read_args: dict[str, Any]
    argued: str  # a tool that takes an argument (argument drift) and depends on ``upstream`` (cascade)
    argued_args: dict[str, Any]
    upstream: str
    upstream_args: dict[str, Any]


def _mini_spider(folder: Path) -> Path:
    """spider-dev cut down to one database: every question of ``concert_singer``, its schema and its database."""
    if not SPIDER_DEV.is_dir():
        pytest.fail(f"{SPIDER_DEV} is missing: the tests need ../shared beside the repository")
    (folder / "database").mkdir(parents=True)
    (folder / "database" / DB).symlink_to(SPIDER_DEV / "database" / DB)
    tables = [t for t in json.loads((SPIDER_DEV / "tables.json").read_text()) if t["db_id"] == DB]
    questions = [q for q in json.loads((SPIDER_DEV / "dev.json").read_text()) if q["db_id"] == DB]
    (folder / "tables.json").write_text(json.dumps(tables))
    (folder / "dev.json").write_text(json.dumps(questions))
    return folder


@pytest.fixture(scope="module")
def sql_world(tmp_path_factory: pytest.TempPathFactory) -> World:
    spider = _mini_spider(tmp_path_factory.mktemp("spider"))
    suite = load_suite(write_build(build_suite(spider, seed=0, augment=1), tmp_path_factory.mktemp("built") / "s"))
    # a scenario whose backup plan reads a number (the average age), then passes it to a tool taking a list
    for scenario in suite.scenarios:
        if len(scenario.gold.plans) < 2 or len(scenario.gold.plans[1]) != 2:
            continue
        first, second = scenario.gold.plans[1]
        assert isinstance(suite.toolbox, SqliteToolBox)
        rows = suite.toolbox.query(suite.toolbox.specs[first.tool].binding["sql"], database=DB)
        if rows and isinstance(next(iter(rows[0].values())), float):
            (ref_name,) = second.arguments
            value = [next(iter(r.values())) for r in rows]
            return World(
                "sqlfuncs", scenario, suite.toolbox, first.tool, {}, second.tool, {ref_name: value}, first.tool, {}
            )
    pytest.fail("no concert_singer scenario reads a number first")


@pytest.fixture(scope="module")
def toy_world(tmp_path_factory: pytest.TempPathFactory) -> World:
    folder = tmp_path_factory.mktemp("toy")
    toy_build.build(toy_build.ToySuite(), folder)
    (lookup,) = read_tools(folder)
    # a second tool over the same table, so that a cascade has an upstream service
    mirror = lookup.model_copy(update={"name": "capital_mirror", "description": "A mirror of lookup_capital."})
    scenario = read_scenarios(folder / "scenarios.jsonl").scenarios[0]
    scenario = scenario.model_copy(update={"tools": [lookup.name, mirror.name]})
    toolbox = toy_build.toolbox([lookup, mirror], {})
    args = {"country": "France"}
    return World("toy", scenario, toolbox, lookup.name, args, lookup.name, args, mirror.name, args)


@pytest.fixture(params=["sqlfuncs", "toy"])
def world(request: pytest.FixtureRequest) -> World:
    return request.getfixturevalue(f"{request.param if request.param == 'toy' else 'sql'}_world")


def start(world: World, faults: list[FaultSpec], seed: int = 0) -> Environment:
    env = Environment(world.scenario, world.toolbox, seed=seed, faults=faults)
    env.reset()
    return env


def clean_result(world: World, tool: str, arguments: dict[str, Any]) -> Any:
    observation = call(start(world, []), tool, arguments)
    assert observation.ok and observation.fault is None
    return observation.result


# ---------------------------------------------------------------------------------------------------------------
# Each kind × persistence, on a tool of each family


def loud(error_type: str) -> Callable[[Any, Observation], None]:
    def check(clean: Any, obs: Observation) -> None:
        assert not obs.ok and obs.error is not None and obs.error.type == error_type
        assert obs.result is None

    return check


def stale(clean: Any, obs: Observation) -> None:
    assert obs.ok
    for record in obs.result:
        assert record["generated_at"] == "2026-03-16T06:00:00Z"  # four days before the fault layer's clock
        assert record["_stale_warning"] == "Data generated 4 days ago."
    stripped = [{k: v for k, v in r.items() if k not in ("generated_at", "_stale_warning")} for r in obs.result]
    assert stripped == clean  # the records keep their own keys and values


def noop_ok(clean: Any, obs: Observation) -> None:
    assert obs.ok and obs.result == {"status": "success"}


def changed(clean: Any, obs: Observation) -> None:
    assert obs.ok and obs.result != clean and isinstance(obs.result, list)


def renamed(clean: Any, obs: Observation) -> None:
    assert obs.ok
    assert [list(r.values()) for r in obs.result] == [list(r.values()) for r in clean]
    assert all(not set(r) & set(c) for r, c in zip(obs.result, clean, strict=True))


def retyped(clean: Any, obs: Observation) -> None:
    assert obs.ok and [list(r) for r in obs.result] == [list(r) for r in clean]
    for record, original in zip(obs.result, clean, strict=True):
        for key, value in original.items():
            assert type(record[key]) is not type(value)
            assert record[key] in (str(value), [value])


def ambiguous(clean: Any, obs: Observation) -> None:
    assert obs.ok and len(obs.result) == 3 * len(clean)  # each record and two near-duplicates
    assert all(record in obs.result for record in clean)


SILENT_AND_LOUD = [
    pytest.param(FaultKind.unavailable, {}, loud("unavailable"), id="unavailable"),
    pytest.param(FaultKind.unavailable, {"error": "auth"}, loud("auth"), id="unavailable-auth-401"),
    pytest.param(FaultKind.unavailable, {"error": "forbidden"}, loud("auth"), id="unavailable-forbidden-403"),
    pytest.param(FaultKind.unavailable, {"error": "rate_limit"}, loud("rate_limit"), id="unavailable-rate-limit"),
    pytest.param(FaultKind.first_tried, {}, loud("unavailable"), id="first_tried"),
    pytest.param(FaultKind.stale, {}, stale, id="stale"),
    pytest.param(FaultKind.silent_noop, {"returns": "ok"}, noop_ok, id="silent_noop"),
    pytest.param(FaultKind.corrupted, {}, changed, id="corrupted-decimal_shift"),
    pytest.param(FaultKind.corrupted, {"mode": "wrong_year"}, changed, id="corrupted-wrong_year"),
    pytest.param(FaultKind.corrupted, {"mode": "duplicate"}, changed, id="corrupted-duplicate"),
    pytest.param(FaultKind.corrupted, {"mode": "phantom"}, changed, id="corrupted-phantom"),
    pytest.param(FaultKind.corrupted, {"mode": "bad_total"}, changed, id="corrupted-bad_total"),
    pytest.param(FaultKind.schema_drift, {"mode": "rename"}, renamed, id="schema_drift-rename"),
    pytest.param(FaultKind.schema_drift, {"mode": "retype"}, retyped, id="schema_drift-retype"),
    pytest.param(FaultKind.ambiguous, {}, ambiguous, id="ambiguous"),
]


@pytest.mark.parametrize("persistence", [PERMANENT, TEMPORARY], ids=["permanent", "temporary1"])
@pytest.mark.parametrize(("kind", "params", "check"), SILENT_AND_LOUD)
def test_fault_kind_fires_and_heals_on_each_family(
    world: World, kind: FaultKind, params: dict[str, Any], check: Callable[[Any, Observation], None],
    persistence: Persistence,
) -> None:  # fmt: skip
    clean = clean_result(world, world.read, world.read_args)
    env = start(world, [FaultSpec(kind=kind, target=world.read, persistence=persistence, params=params)])
    first = call(env, world.read, world.read_args)
    assert first.fault is not None and first.fault.kind == kind and first.fault.index == 0
    check(clean, first)
    second = call(env, world.read, world.read_args)
    if persistence.mode == "permanent":
        assert second.fault is not None and second.fault.kind == kind
        check(clean, second)
    else:  # healed after one firing: the tool is itself again
        assert second.ok and second.fault is None and second.result == clean


@pytest.mark.parametrize("error", ["timeout", "rate_limit", "service_unavailable"])
def test_transient_fails_then_works_on_each_family(world: World, error: str) -> None:
    clean = clean_result(world, world.read, world.read_args)
    spec = FaultSpec(kind=FaultKind.transient, target=world.read, persistence=TEMPORARY, params={"error": error})
    env = start(world, [spec])
    first = call(env, world.read, world.read_args)
    assert first.error is not None and first.error.type == error and first.error.retryable
    assert first.fault is not None and first.fault.kind == FaultKind.transient
    second = call(env, world.read, world.read_args)
    assert second.ok and second.fault is None and second.result == clean


def test_removed_tool_is_not_listed_and_its_call_is_recorded(world: World) -> None:
    env = start(world, [FaultSpec(kind=FaultKind.removed, target=world.upstream)])
    assert world.upstream not in {t.name for t in env.tools()}
    observation = call(env, world.upstream, world.upstream_args)
    assert observation.error is not None and observation.error.type == "unknown_tool"
    assert observation.fault is not None and observation.fault.kind == FaultKind.removed


@pytest.mark.parametrize("persistence", [PERMANENT, TEMPORARY], ids=["permanent", "temporary1"])
def test_argument_drift_refuses_the_old_name_and_runs_the_new_one(world: World, persistence: Persistence) -> None:
    (old,) = world.argued_args
    new = f"{old}_v2"
    clean = clean_result(world, world.argued, world.argued_args)
    params = {"mode": "arguments", "field": old, "to": new}
    env = start(
        world, [FaultSpec(kind=FaultKind.schema_drift, target=world.argued, persistence=persistence, params=params)]
    )
    refused = call(env, world.argued, world.argued_args)
    assert refused.error is not None and refused.error.type == "invalid_arguments"
    assert refused.error.message == (
        f"Invalid arguments for {world.argued}: parameter '{old}' is not accepted by this API version; it was "
        f"renamed to '{new}'."
    )
    assert refused.fault is not None and refused.fault.kind == FaultKind.schema_drift
    if persistence.mode == "permanent":
        repaired = call(env, world.argued, {new: world.argued_args[old]})
        assert repaired.ok and repaired.result == clean and repaired.fault is not None
    else:  # healed: the documented name works again
        again = call(env, world.argued, world.argued_args)
        assert again.ok and again.result == clean and again.fault is None


def test_argument_drift_defaults_to_the_first_required_argument_in_camel_case(toy_world: World) -> None:
    env = start(
        toy_world, [FaultSpec(kind=FaultKind.schema_drift, target=toy_world.argued, params={"mode": "arguments"})]
    )
    refused = call(env, toy_world.argued, toy_world.argued_args)
    assert refused.error is not None and "renamed to 'countryValue'" in refused.error.message
    assert call(env, toy_world.argued, {"countryValue": "France"}).result == [{"capital": "Paris"}]


@pytest.mark.parametrize("persistence", [PERMANENT, TEMPORARY], ids=["permanent", "temporary1"])
def test_cascade_fails_the_dependent_tool_once_the_upstream_faulted(world: World, persistence: Persistence) -> None:
    clean = clean_result(world, world.argued, world.argued_args)
    faults = [
        FaultSpec(kind=FaultKind.stale, target=world.upstream),
        FaultSpec(kind=FaultKind.cascade, target=world.argued, persistence=persistence, params={"on": world.upstream}),
    ]
    env = start(world, faults)
    before = call(env, world.argued, world.argued_args)  # the upstream has not failed yet: no cascade
    assert before.ok and before.fault is None and before.result == clean
    upstream = call(env, world.upstream, world.upstream_args)
    assert upstream.fault is not None and upstream.fault.kind == FaultKind.stale
    failed = call(env, world.argued, world.argued_args)
    assert failed.error is not None and failed.error.type == "dependency_failed"
    assert f"({world.upstream}) is failing" in failed.error.message
    assert failed.fault is not None and failed.fault.kind == FaultKind.cascade and failed.fault.index == 1
    after = call(env, world.argued, world.argued_args)
    if persistence.mode == "permanent":
        assert after.fault is not None and not after.ok
    else:
        assert after.ok and after.fault is None and after.result == clean


def test_silent_noop_on_a_read_tool_returns_the_real_result_by_default(world: World) -> None:
    """A read-only tool changes no state, so its no-op is indistinguishable from success: the fault is recorded,
    the result is the genuine one (``returns: ok`` gives a bare success instead)."""
    clean = clean_result(world, world.read, world.read_args)
    observation = call(
        start(world, [FaultSpec(kind=FaultKind.silent_noop, target=world.read)]), world.read, world.read_args
    )
    assert observation.ok and observation.result == clean
    assert observation.fault is not None and observation.fault.kind == FaultKind.silent_noop


# ---------------------------------------------------------------------------------------------------------------
# Silent no-op and partial writes: real SQLite write tools over concert_singer


def _spec(name: str, sql: str, properties: dict[str, Any] | None = None) -> ToolSpec:
    schema = {"type": "object", "properties": properties or {}, "required": list(properties or {})}
    return ToolSpec(name=name, description=name.replace("_", " "), parameters=schema, binding={"sql": sql})


@pytest.fixture(scope="module")
def ledger() -> World:
    text = {"type": "string"}
    specs = [
        _spec(
            "add_singer",
            "INSERT INTO singer (Singer_ID, Name, Country, Age) VALUES ((SELECT max(Singer_ID) + 1 FROM singer), "
            ":name, :country, 30) RETURNING Singer_ID, Name",
            {"name": text, "country": text},
        ),
        _spec(
            "add_singers",
            "INSERT INTO singer (Singer_ID, Name, Country, Age) SELECT (SELECT max(Singer_ID) FROM singer) + key + 1, "
            "value, 'Nowhere', 30 FROM json_each(:names) RETURNING Name",
            {"names": {"type": "array", "items": text}},
        ),
        _spec("count_singers", "SELECT count(*) AS total FROM singer"),
        _spec("concerts", "SELECT concert_Name, Theme, Year FROM concert ORDER BY concert_ID"),
    ]
    toolbox = SqliteToolBox(specs, SPIDER_DEV / "database" / DB / f"{DB}.sqlite")
    scenario = Scenario(
        id="ledger", family="sqlfuncs", task="Add a singer.", tools=[s.name for s in specs], gold=Gold()
    )
    return World("ledger", scenario, toolbox, "concerts", {}, "add_singer", {}, "count_singers", {})


def count(env: Environment) -> int:
    result = call(env, "count_singers", {}).result
    assert isinstance(result, list)
    return int(result[0]["total"])


@pytest.mark.parametrize("persistence", [PERMANENT, TEMPORARY], ids=["permanent", "temporary1"])
def test_silent_noop_write_reports_success_and_leaves_state_unchanged(ledger: World, persistence: Persistence) -> None:
    env = start(ledger, [FaultSpec(kind=FaultKind.silent_noop, target="add_singer", persistence=persistence)])
    before = count(env)
    first = call(env, "add_singer", {"name": "Nadia Quell", "country": "Chile"})
    assert first.ok and first.result == [{"Singer_ID": before + 1, "Name": "Nadia Quell"}]  # a genuine-looking echo
    assert first.fault is not None and first.fault.kind == FaultKind.silent_noop
    assert count(env) == before  # nothing was written
    second = call(env, "add_singer", {"name": "Nadia Quell", "country": "Chile"})
    if persistence.mode == "permanent":
        assert second.fault is not None and count(env) == before
    else:
        assert second.fault is None and count(env) == before + 1


def test_partial_write_lands_the_first_half_and_reports_the_whole(ledger: World) -> None:
    spec = FaultSpec(kind=FaultKind.silent_noop, target="add_singers", params={"apply": "partial"})
    env = start(ledger, [spec])
    before = count(env)
    names = ["Ana", "Bo", "Cy", "Di"]
    observation = call(env, "add_singers", {"names": names})
    assert observation.ok and observation.result == [{"Name": n} for n in names]
    assert count(env) == before + 2
    # a fresh episode sees none of it
    assert count(start(ledger, [])) == before


def test_silent_noop_writes_do_not_leak_between_episodes(ledger: World) -> None:
    env = start(ledger, [])
    before = count(env)
    call(env, "add_singer", {"name": "Real Write", "country": "Peru"})
    assert count(env) == before + 1 and count(start(ledger, [])) == before


# ---------------------------------------------------------------------------------------------------------------
# Corruption modes, exactly, and determinism


def only_value(result: Any) -> Any:
    (record,) = result
    (value,) = record.values()
    return value


def test_decimal_shift_moves_the_decimal_point(sql_world: World) -> None:
    clean = only_value(clean_result(sql_world, sql_world.read, {}))
    env = start(
        sql_world, [FaultSpec(kind=FaultKind.corrupted, target=sql_world.read, params={"mode": "decimal_shift"})]
    )
    shifted = only_value(call(env, sql_world.read, {}).result)
    assert shifted == pytest.approx(clean * 10) or shifted == pytest.approx(clean / 10)


def test_bad_total_alters_an_aggregate(ledger: World) -> None:
    env = start(ledger, [FaultSpec(kind=FaultKind.corrupted, target="count_singers", params={"mode": "bad_total"})])
    observation = call(env, "count_singers", {})
    assert observation.fault is not None and observation.fault.detail.startswith("bad_total: total 6 -> ")
    assert only_value(observation.result) > 6


def test_wrong_year_moves_one_year_by_one(ledger: World) -> None:
    clean = clean_result(ledger, "concerts", {})
    env = start(ledger, [FaultSpec(kind=FaultKind.corrupted, target="concerts", params={"mode": "wrong_year"})])
    corrupted = call(env, "concerts", {}).result
    diffs = [(a, b) for a, b in zip(clean, corrupted, strict=True) if a != b]
    assert len(diffs) == 1
    (original, wrong), *_ = diffs
    assert abs(int(wrong["Year"]) - int(original["Year"])) == 1
    assert {k: v for k, v in wrong.items() if k != "Year"} == {k: v for k, v in original.items() if k != "Year"}


def test_phantom_and_duplicate_add_one_record(ledger: World) -> None:
    clean = clean_result(ledger, "concerts", {})
    for mode in ("phantom", "duplicate"):
        env = start(ledger, [FaultSpec(kind=FaultKind.corrupted, target="concerts", params={"mode": mode})])
        result = call(env, "concerts", {}).result
        assert len(result) == len(clean) + 1 and all(r in result for r in clean)
        extra = [r for r in result if r not in clean]
        assert (extra != []) == (mode == "phantom")  # a phantom is new; a duplicate repeats a real record


def corrupted_runs(world: World, seed: int, mode: str) -> list[Any]:
    env = start(world, [FaultSpec(kind=FaultKind.corrupted, target=world.read, params={"mode": mode})], seed=seed)
    return [call(env, world.read, world.read_args).result for _ in range(3)]


@pytest.mark.parametrize("mode", ["phantom", "duplicate", "wrong_year"])
def test_corruption_is_the_same_for_the_same_scenario_and_seed(ledger: World, mode: str) -> None:
    assert corrupted_runs(ledger, 3, mode) == corrupted_runs(ledger, 3, mode)
    # and the choice does depend on the seed (and the call): over a few seeds the runs are not all alike
    runs = [json.dumps(corrupted_runs(ledger, seed, mode)) for seed in range(6)]
    assert len(set(runs)) > 1


def test_stale_age_is_a_parameter_and_a_bare_value_is_wrapped(toy_world: World) -> None:
    env = start(toy_world, [FaultSpec(kind=FaultKind.stale, target=toy_world.read, params={"age_days": 30})])
    record = call(env, toy_world.read, toy_world.read_args).result[0]
    assert record == {
        "capital": "Paris",
        "generated_at": "2026-02-18T06:00:00Z",
        "_stale_warning": "Data generated 30 days ago.",
    }


def test_rename_of_one_named_field(sql_world: World) -> None:
    clean = clean_result(sql_world, sql_world.read, {})
    (key,) = clean[0]
    spec = FaultSpec(
        kind=FaultKind.schema_drift, target=sql_world.read, params={"mode": "rename", "field": key, "to": "avg"}
    )
    result = call(start(sql_world, [spec]), sql_world.read, {}).result
    assert result == [{"avg": clean[0][key]}]


# ---------------------------------------------------------------------------------------------------------------
# The sentence: stale, corrupted, silent_noop and transient, declared in a setting, on a sqlfuncs scenario
# and on the toy family, through the real agent loop; the trace records each.


TRACE_FAULTS = {
    "stale": FaultSpec(kind=FaultKind.stale, target="@primary"),
    "corrupted": FaultSpec(kind=FaultKind.corrupted, target="@primary", params={"mode": "phantom"}),
    "silent_noop": FaultSpec(kind=FaultKind.silent_noop, target="@primary", params={"returns": "ok"}),
    "transient": FaultSpec(kind=FaultKind.transient, target="@primary", persistence=TEMPORARY),
}


@pytest.mark.parametrize("kind", list(TRACE_FAULTS))
def test_setting_faults_show_in_the_trace_of_each_family(world: World, kind: str) -> None:
    setting = Setting(name=f"only_{kind}", faults=[TRACE_FAULTS[kind]])
    faults = resolve_faults(world.scenario, setting)
    primary = world.scenario.gold.plans[0][0]
    assert [f.targets for f in faults] == [[primary.tool]]
    clean = clean_result(world, primary.tool, dict(primary.arguments))
    env = Environment(world.scenario, world.toolbox, seed=0, faults=faults)
    trajectory = Trajectory(episode_id="e", scenario_id=world.scenario.id, model="oracle", setting=setting.name, seed=0)
    trajectory.faults = env.faults
    asyncio.run(run_agent(env, OraclePolicy(world.scenario), AgentConfig(), trajectory))
    # the trace as it is written to the store, read back
    trace = Trajectory.model_validate_json(trajectory.model_dump_json())
    assert [f.kind.value for f in trace.faults] == [kind]
    observations = [s.observation for s in trace.tool_steps() if s.observation is not None]
    first = observations[0]
    assert first.tool == primary.tool and first.fault is not None and first.fault.kind.value == kind
    if kind == "stale":
        assert all(r["_stale_warning"] for r in first.result) and trace.final_answer is not None
    elif kind == "corrupted":
        assert first.ok and len(first.result) == len(clean) + 1
    elif kind == "silent_noop":
        assert first.ok and first.result == {"status": "success"}
    else:  # the oracle retried the 503 and the healed tool answered
        assert not first.ok and first.error is not None and first.error.type == "service_unavailable"
        assert observations[1].ok and observations[1].fault is None and observations[1].result == clean


# ---------------------------------------------------------------------------------------------------------------
# Dead plans: only loud permanent faults leave nothing to do but give up


@pytest.mark.parametrize(
    "kind", [FaultKind(k) for k in ("stale", "silent_noop", "corrupted", "schema_drift", "ambiguous")]
)
def test_silent_faults_never_make_giving_up_right(sql_world: World, kind: FaultKind) -> None:
    faults = resolve_faults(sql_world.scenario, Setting(name="s", faults=[FaultSpec(kind=kind, target="@solution")]))
    assert not expects_give_up(sql_world.scenario, faults)


def test_a_permanent_cascade_kills_the_plans_that_call_upstream_and_dependent(sql_world: World) -> None:
    scenario = sql_world.scenario
    primary = scenario.gold.plans[0][0].tool
    upstream, dependent = (c.tool for c in scenario.gold.plans[1])
    cascade = FaultSpec(kind=FaultKind.cascade, target=dependent, params={"on": upstream})
    kill_primary = FaultSpec(kind=FaultKind.unavailable, target=primary)
    # the upstream carries no fault of its own: nothing triggers the cascade
    assert not expects_give_up(scenario, [kill_primary, cascade])
    # it does: the backup plan dies with it, the primary is gone: giving up is right
    upstream_fault = FaultSpec(kind=FaultKind.stale, target=upstream, persistence=TEMPORARY)
    assert expects_give_up(scenario, [kill_primary, upstream_fault, cascade])
    # a temporary cascade heals: the plan survives
    healing = cascade.model_copy(update={"persistence": TEMPORARY})
    assert not expects_give_up(scenario, [kill_primary, upstream_fault, healing])


# ---------------------------------------------------------------------------------------------------------------
# Validation


def problems(**fields: Any) -> list[str]:
    with pytest.raises(ValidationError) as excinfo:
        FaultSpec(**fields)
    return validation_problems(excinfo.value)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"kind": "corrupted", "params": {"mod": "phantom"}},
            "params.mod: unknown parameter of a 'corrupted' fault; did you mean 'mode'?",
        ),
        (
            {"kind": "corrupted", "params": {"mode": "phantoms"}},
            "params.mode: unknown value 'phantoms'; did you mean 'phantom'?",
        ),
        (
            {"kind": "corrupted", "params": {"mode": "meteor"}},
            "params.mode: unknown value 'meteor'; expected one of: decimal_shift, wrong_year, duplicate, phantom, "
            "bad_total, set",
        ),
        (
            {"kind": "corrupted", "params": {"mode": "set", "field": "amount"}},
            "params.value: a corrupted fault with mode 'set' needs 'field' and 'value'",
        ),
        (
            {"kind": "unavailable", "params": {"error": "authh"}},
            "params.error: unknown value 'authh'; did you mean 'auth'?",
        ),
        ({"kind": "stale", "params": {"age_days": 0}}, "params.age_days: expected an integer from 1 to 3650, got 0"),
        (
            {"kind": "stale", "params": {"age_days": "4"}},
            "params.age_days: expected an integer from 1 to 3650, got '4'",
        ),
        (
            {"kind": "schema_drift", "params": {"mode": "renames"}},
            "params.mode: unknown value 'renames'; did you mean 'rename'?",
        ),
        (
            {"kind": "schema_drift", "params": {"mode": "arguments", "field": "q", "to": "q"}},
            "params.to: the drifted name must differ from the field's own name",
        ),
        ({"kind": "schema_drift", "params": {"field": ""}}, "params.field: expected a non-empty name, got ''"),
        ({"kind": "ambiguous", "params": {"count": 50}}, "params.count: expected an integer from 1 to 20, got 50"),
        ({"kind": "cascade"}, "params.on: a 'cascade' fault needs 'on'"),
        (
            {"kind": "cascade", "params": {"on": "t"}},
            "params.on: a cascade's upstream tool cannot be one of its own targets",
        ),
        (
            {"kind": "silent_noop", "params": {"return": "ok"}},
            "params.return: unknown parameter of a 'silent_noop' fault; did you mean 'returns'?",
        ),
        (
            {"kind": "ambiguous", "params": {"colour": 1}},
            "params.colour: unknown parameter of a 'ambiguous' fault; it takes: count",
        ),
        (
            {"kind": "first_tried", "params": {"x": 1}},
            "params.x: unknown parameter of a 'first_tried' fault; it takes none",
        ),
    ],
)
def test_bad_fault_params_are_refused_with_a_hint(fields: dict[str, Any], expected: str) -> None:
    assert problems(target="t", **fields) == [expected]


def test_an_unknown_kind_is_refused_listing_the_kinds() -> None:
    (message,) = problems(kind="flaky", target="t")
    assert message.startswith("kind: Input should be ")
    assert all(f"'{kind.value}'" in message for kind in FaultKind)


def test_every_kind_is_accepted_with_both_persistences_where_it_allows() -> None:
    needs = {FaultKind.cascade: {"on": "upstream"}}
    for kind in FaultKind:
        for persistence in (PERMANENT, TEMPORARY):
            if (kind, persistence.mode) in ((FaultKind.removed, "temporary"), (FaultKind.transient, "permanent")):
                continue
            FaultSpec(kind=kind, target="t", persistence=persistence, params=needs.get(kind, {}))


def test_a_fault_spec_round_trips_through_a_setting_file() -> None:
    data = {
        "name": "messy",
        "faults": [
            {"kind": "stale", "target": "@primary", "params": {"age_days": 9}},
            {"kind": "cascade", "target": "b", "params": {"on": "a"}, "persistence": {"mode": "temporary", "after": 2}},
        ],
    }
    setting = Setting.model_validate(data)
    assert Setting.model_validate_json(setting.model_dump_json()) == setting
    scenario = Scenario(id="s", family="toy", task="t", tools=["a", "b"], gold=Gold(plans=[[PlannedCall(tool="a")]]))
    assert [f.targets for f in resolve_faults(scenario, setting)] == [["a"], ["b"]]
