"""The services' seed records as data (``env_core/services/data/``, each provider's own history under
``data/histories/``): each record's stable fields and its values as dated snapshots, today's the latest on or before
the reference day; a malformed line is an error naming the file, the line and the field; the files key the suite's
build, so that editing one rebuilds the suite."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers.builders import call
from helpers.paths import REPO

from undertow.env_core.content import DATA
from undertow.env_core.environment import Environment
from undertow.env_core.errors import DataError
from undertow.env_core.model import FaultKind, FaultSpec, Gold, Scenario
from undertow.env_core.services import build
from undertow.env_core.services.catalog import BY_NAME, SERVICES, all_specs
from undertow.env_core.services.histories import held, past
from undertow.env_core.services.seeds import STAYS, TODAY, Product, Stay, read_seeds, tables
from undertow.env_core.services.states import Ride
from undertow.env_core.services.tools import ServicesToolBox
from undertow.env_core.services.travel import Uber
from undertow.env_core.suites import suite_folder, suite_ref

PACKAGE = build.PACKAGE
STAYS_FILE = PACKAGE / DATA / "stays.jsonl"
BAIXA = {  # a stay's stable fields, as its data line holds them
    "key": "baixa_grand",
    "name": "Baixa Grand Hotel",
    "kind": "hotel",
    "city": "Lisbon, Portugal",
    "area": "Baixa",
    "address": "Rua Augusta 180, 1100-053 Lisbon",
    "max_guests": 3,
    "amenities": ["free wifi"],
    "check_in_time": "14:00",
    "check_out_time": "12:00",
}


def snapshot(day: str, price: Any, policy: str = "Non-refundable") -> dict[str, Any]:
    return {"as_of": day, "nightly_price": price, "rating": 8.7, "cancellation_policy": policy}


def write_lines(path: Path, *records: dict[str, Any] | str) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def rewrite(path: Path, key: str, change: Any) -> None:
    """Apply ``change`` to the record ``key`` (its ``key``, or a quote's ``symbol``) of a JSONL data file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record.get("key", record.get("symbol")) == key:
            change(record)
            lines[i] = json.dumps(record, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_seed_records_are_data_files_in_the_package() -> None:
    assert date(2026, 3, 20) == TODAY
    names = {p.stem for p in (PACKAGE / DATA).glob("*.jsonl")}
    assert {"stays", "ride_places", "restaurants", "products", "quotes", "locations", "stories", "events"} <= names
    older = 0
    for path in (PACKAGE / DATA).glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)  # every line an object; no value is dated after today
            days = [date.fromisoformat(s["as_of"]) for s in record.get("values", [])]
            assert all(day <= TODAY for day in days), path.name
            older += len([day for day in days if day < TODAY])
    assert older  # what a stale fault reads
    baixa = next(s for s in STAYS if s.key == "baixa_grand")
    assert (baixa.nightly_price, baixa.cancellation_policy) == (
        204.95,
        "Free cancellation until 48 hours before check-in",
    )


def test_a_record_takes_its_latest_snapshot_on_or_before_today(tmp_path: Path) -> None:
    line = {
        **BAIXA,
        "values": [
            snapshot("2026-03-14", 180.0),
            snapshot("2026-03-20", 204.95, "Free cancellation until 48 hours before check-in"),
            snapshot("2026-03-27", 260.0),  # a later day's values are not today's
        ],
    }
    path = write_lines(tmp_path / "stays.jsonl", line)
    (today,) = read_seeds(path, Stay)
    assert (today.nightly_price, today.cancellation_policy) == (
        204.95,
        "Free cancellation until 48 hours before check-in",
    )
    # a day in the past sees that day's values: what a stale record will show
    (past,) = read_seeds(path, Stay, today=date(2026, 3, 16))
    assert (past.nightly_price, past.cancellation_policy, past.name) == (180.0, "Non-refundable", "Baixa Grand Hotel")
    # a snapshot may leave out a field that has a default
    product = {
        "key": "p",
        "name": "P",
        "description": "d",
        "values": [{"as_of": "2026-03-01", "price": 2.5, "rating": 4}],
    }
    (read,) = read_seeds(write_lines(tmp_path / "products.jsonl", product), Product)
    assert (read.price, read.in_stock) == (2.5, True)


def test_before_the_reference_day_a_record_not_dated_then_takes_its_earliest_snapshot(tmp_path: Path) -> None:
    line = {**BAIXA, "values": [snapshot("2026-03-18", 190.0), snapshot("2026-03-20", 204.95)]}
    path = write_lines(tmp_path / "stays.jsonl", line)
    (early,) = read_seeds(path, Stay, today=date(2026, 3, 16))  # it existed then; its values before 03-18 unknown
    assert early.nightly_price == 190.0
    (later,) = read_seeds(path, Stay, today=date(2026, 3, 19))
    assert later.nightly_price == 190.0
    # on the reference day a record must be dated by then (the "only later" case below)


@pytest.mark.parametrize(
    ("line", "field", "says"),
    [
        ({**BAIXA, "values": [snapshot("2026-03-20", "cheap")]}, "values.0.nightly_price", "valid number"),
        ({**BAIXA, "values": [{**snapshot("2026-03-20", 1.0), "as_of": "yesterday"}]}, "values.0.as_of", "date"),
        ({**BAIXA, "values": []}, "values", "at least 1 item"),
        (
            {k: v for k, v in BAIXA.items() if k != "city"} | {"values": [snapshot("2026-03-20", 1.0)]},
            "city",
            "Field required",
        ),
        ({**BAIXA, "nightly_price": 1.0, "values": [snapshot("2026-03-20", 1.0)]}, "nightly_price", "Extra inputs"),
        ({**BAIXA, "values": [snapshot("2026-04-01", 1.0)]}, "values", "no snapshot on or before 2026-03-20"),
        (
            {**BAIXA, "values": [snapshot("2026-03-20", 1.0), snapshot("2026-03-20", 2.0)]},
            "values.1.as_of",
            "two snapshots",
        ),
    ],
    ids=[
        "bad value",
        "bad day",
        "no snapshots",
        "missing field",
        "dated field outside values",
        "only later",
        "same day",
    ],
)
def test_a_malformed_line_names_file_line_and_field(
    tmp_path: Path, line: dict[str, Any], field: str, says: str
) -> None:
    good = {**BAIXA, "key": "other", "values": [snapshot("2026-03-20", 99.0)]}
    path = write_lines(tmp_path / "stays.jsonl", good, "", line)  # a blank line is skipped, not counted out
    with pytest.raises(DataError) as caught:
        read_seeds(path, Stay)
    error = caught.value
    assert (error.file, error.line, error.field) == (str(path), 3, field)
    assert str(error).startswith(f"{path}:3: {field}: ") and says in str(error)


def test_a_line_that_is_not_a_record_names_file_and_line(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "stays.jsonl", "[1, 2]", "{not json")
    with pytest.raises(DataError, match=r"stays.jsonl:1: expected a JSON object, got list"):
        read_seeds(path, Stay)
    with pytest.raises(DataError, match=r"stays.jsonl:2: not a JSON line"):
        read_seeds(write_lines(path, {**BAIXA, "values": [snapshot("2026-03-20", 1.0)]}, "{not json"), Stay)


def test_the_shipped_files_load_as_the_services_use_them() -> None:
    """A data file that no longer matches its record model fails when the package is imported; here today's tables
    are read again, one table for each data file of the folder (the histories sit in a folder of their own), and
    none of them is empty."""
    shipped = {name: value for name, value in vars(tables(TODAY)).items() if name != "day"}
    assert len(shipped) == len(list((PACKAGE / DATA).glob("*.jsonl")))
    assert all(shipped.values()), [name for name, value in shipped.items() if not value]


# -------------------------------------------------------------------------------------------------------------------
# A stale fault reads the world of age_days ago: the values the data files held then


@pytest.fixture(scope="module")
def box() -> ServicesToolBox:
    return ServicesToolBox(all_specs(), SERVICES)


def stale_episode(box: ServicesToolBox, tool: str, tools: list[str] | None = None) -> Environment:
    """An episode whose ``tool`` is stale (4 days, the default) and whose other ``tools`` work."""
    fault = FaultSpec(kind=FaultKind.stale, target=tool)
    scenario = Scenario(id="stale", family="services", task="t", tools=[tool, *(tools or [])], gold=Gold())
    env = Environment(scenario, box, faults=[fault])
    env.reset()
    return env


# the fault layer's clock is 2026-03-20 06:00 UTC: four days before it
SIGNALS = {"generated_at": "2026-03-16T06:00:00Z", "_stale_warning": "Data generated 4 days ago."}


def test_a_stale_forecast_is_the_one_issued_four_days_ago(box: ServicesToolBox) -> None:
    tool, napa = "weathercom_get_daily_forecast", {"location": "Napa Valley, CA", "days": 7}
    fresh = call(stale_episode(box, "weathercom_get_saved_locations", [tool]), tool, **napa).result
    stale = call(stale_episode(box, tool), tool, **napa)
    assert stale.ok and stale.fault is not None and stale.fault.kind == FaultKind.stale
    assert {k: stale.result[k] for k in SIGNALS} == SIGNALS
    # issued on 03-16, it covers the week from then; today's covers the week from 03-20
    assert [d["date"] for d in stale.result["days"]] == [f"2026-03-{day}" for day in range(16, 23)]
    assert fresh["days"][0]["date"] == "2026-03-20"
    by_date = {d["date"]: d for d in stale.result["days"]}
    saturday = {k: by_date["2026-03-21"][k] for k in ("condition", "high_f", "low_f", "precip_chance")}
    # forecast_facts.jsonl: Napa's Saturday as of 03-15 (the latest snapshot by 03-16), and as of today
    assert saturday == {"condition": "Sunny", "high_f": 74, "low_f": 50, "precip_chance": 5}
    assert {k: fresh["days"][1][k] for k in saturday} == {
        "condition": "Thunderstorms",
        "high_f": 61,
        "low_f": 50,
        "precip_chance": 80,
    }
    # Sunday's fact has no snapshot before today: the forecast issued then shows its earliest, today's
    assert by_date["2026-03-22"] == fresh["days"][2] and by_date["2026-03-22"]["condition"] == "Showers"


def test_a_stale_hourly_forecast_shows_the_older_hours(box: ServicesToolBox) -> None:
    tool, saturday = "weathercom_get_hourly_forecast", {"location": "Napa Valley, CA", "date": "2026-03-21"}
    stale = call(stale_episode(box, tool), tool, **saturday).result
    fresh = call(stale_episode(box, "weathercom_get_saved_locations", [tool]), tool, **saturday).result
    # hourly_facts.jsonl as of 03-15: sunny all day, 5%; as of today: thunderstorms from 13:00 to 20:00
    assert {(h["condition"], h["precip_chance"]) for h in stale["hours"]} == {("Sunny", 5)}
    assert (fresh["hours"][13]["condition"], fresh["hours"][13]["precip_chance"]) == ("Thunderstorms", 80)
    assert {k: stale[k] for k in SIGNALS} == SIGNALS


def test_a_record_without_an_older_snapshot_reads_as_today_with_the_signals(box: ServicesToolBox) -> None:
    quote = call(stale_episode(box, "robinhood_get_quote"), "robinhood_get_quote", symbol="AAPL").result
    # quotes.jsonl: AAPL's one snapshot (today's); the change is 218.37 - 215.92, and 2.45 / 215.92 is 1.13%
    assert quote == {
        "symbol": "AAPL",
        "name": "Apple Inc.",
        "kind": "stock",
        "last_price": 218.37,
        "prev_close": 215.92,
        "quote_time": "2026-03-19T20:00:00Z",
        "change": 2.45,
        "change_pct": 1.13,
        **SIGNALS,
    }


def test_a_stale_call_leaves_the_episode_untouched(box: ServicesToolBox) -> None:
    add, watchlist = "robinhood_add_to_watchlist", "robinhood_get_watchlist"
    env = stale_episode(box, add, [watchlist])
    added = call(env, add, symbols=["AMD"])
    assert added.ok and added.result == {"status": "added", "added": ["AMD"], **SIGNALS}
    # the write ran on the world of four days ago: the account's own watchlist (brokerage_accounts.jsonl) is as it was
    assert [s["symbol"] for s in call(env, watchlist).result["symbols"]] == ["AAPL", "MSFT", "NVDA"]


def test_what_did_not_exist_then_reads_as_today(box: ServicesToolBox) -> None:
    book, get = "expedia_book_hotel", "expedia_get_booking"
    env = stale_episode(box, get, [book])
    dates = {"check_in": "2026-04-07", "check_out": "2026-04-09", "guests": 2}
    booked = call(env, book, hotel_id="exp_manhattan_beacon", **dates).result
    # the booking is the episode's own: the world of four days ago has no such booking, so today's is read
    stale = call(env, get, booking_id=booked["booking_id"])
    assert stale.ok and stale.result == {**booked, **SIGNALS}
    assert booked["total_price"] == 685.5  # two nights at stays.jsonl's 342.75


def test_the_snapshot_is_a_fresh_world_of_that_day_on_the_episodes_clock(box: ServicesToolBox) -> None:
    world = box.new_state()
    for _ in range(3):
        world.tick()
    snapshot = box.snapshot(world, 4)
    assert (snapshot.as_of, snapshot.now) == (date(2026, 3, 16), world.now)
    assert world.as_of == TODAY and world.now == datetime(2026, 3, 20, 6, 1, tzinfo=UTC)
    snapshot.states["robinhood"].watchlist.append("AMD")  # type: ignore[attr-defined]
    assert "AMD" not in box.snapshot(world, 4).states["robinhood"].watchlist  # type: ignore[attr-defined]


HISTORIES = PACKAGE / DATA / "histories"


def history_lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (HISTORIES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]


def test_each_provider_history_line_names_a_service_and_accounts_hold_one_line_each() -> None:
    for path in HISTORIES.glob("*.jsonl"):
        assert {line["service"] for line in history_lines(path.stem)} <= set(BY_NAME), path.name
    for name in ("carts", "saved_lists", "payment_accounts", "brokerage_accounts"):
        services = [line["service"] for line in history_lines(name)]
        assert len(services) == len(set(services)), name


def test_a_past_record_holds_its_status_over_time(tmp_path: Path) -> None:
    ride = {k: v for k, v in history_lines("rides")[0].items() if k != "values"}
    statuses = [("2026-03-14", "driver_assigned"), ("2026-03-15", "completed"), ("2026-03-27", "cancelled")]
    values = [{"as_of": day, "status": status} for day, status in statuses]
    (record,) = read_seeds(write_lines(tmp_path / "rides.jsonl", {**ride, "values": values}), past(Ride))
    (today,) = held((record,), "uber", Ride)
    assert (today.status, today.ride_id) == ("completed", ride["ride_id"])
    assert Uber.initial_state().rides[ride["ride_id"]].status == "completed"  # the shipped file's snapshot


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        (lambda r: r["values"][0].update(status="lost"), "values.0.status", "Input should be"),
        (lambda r: r.pop("service"), "service", "Field required"),
        (lambda r: r.update(status="completed"), "status", "Extra inputs"),
    ],
    ids=["bad status", "no service", "dated field outside values"],
)
def test_a_malformed_history_line_names_file_line_and_field(tmp_path: Path, change: Any, field: str, says: str) -> None:
    lines = history_lines("rides")
    change(lines[1])
    path = write_lines(tmp_path / "rides.jsonl", *lines)
    with pytest.raises(DataError) as caught:
        read_seeds(path, past(Ride))
    error = caught.value
    assert (error.file, error.line, error.field) == (str(path), 2, field)
    assert str(error).startswith(f"{path}:2: {field}: ") and says in str(error)


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the family's package (code and data) whose files key the build instead of the installed one's."""
    copy = tmp_path / "services"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(build, "PACKAGE", copy)
    return copy


def test_editing_a_data_file_changes_the_cache_key(package: Path) -> None:
    config = suite_ref({"family": "services"})
    digest = build.source_digest(config)
    assert build.source_digest(config) == digest  # the same files, the same key

    rewrite(package / DATA / "stays.jsonl", "baixa_grand", lambda r: r["values"][0].update(nightly_price=199.95))
    edited = build.source_digest(config)
    assert edited != digest

    # an older snapshot does not change today's values, but it is content: the key moves too
    old = snapshot("2026-03-14", 180.0)
    rewrite(package / DATA / "stays.jsonl", "baixa_grand", lambda r: r["values"].insert(0, old))
    assert build.source_digest(config) not in (digest, edited)


SERVED = """
import json, sys
import undertow
from undertow.env_core.services.build import ServicesSuite, source_digest
from undertow.env_core.services.catalog import SERVICES
from undertow.env_core.services.travel import Booking
from undertow.env_core.services.tools import pristine_world

hotel = Booking(pristine_world(SERVICES)).run("get_hotel", {"hotel_id": "bdc_baixa_grand"})
print(json.dumps({"from": undertow.__file__, "key": source_digest(ServicesSuite()), "price": hotel["nightly_price"]}))
"""


def served(tree: Path) -> dict[str, Any]:
    """What a copy of the product tree says in a fresh interpreter: its build key and Baixa Grand's nightly price."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-P", "-c", SERVED]
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    assert Path(result["from"]).is_relative_to(tree)
    return result


def test_the_services_serve_what_the_data_files_hold(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(REPO / "undertow", tree / "undertow", ignore=shutil.ignore_patterns("__pycache__"))
    before = served(tree)
    rewrite(
        tree / "undertow" / "env_core" / "services" / DATA / "stays.jsonl",
        "baixa_grand",
        lambda r: r["values"][0].update(nightly_price=199.95),
    )
    after = served(tree)
    assert (before["price"], after["price"]) == (204.95, 199.95)
    assert after["key"] != before["key"]


@pytest.mark.slow
def test_editing_a_data_file_rebuilds_the_suite(package: Path) -> None:
    config = suite_ref({"family": "services"})
    first = suite_folder(config)  # the session's build when it has one: the copy's files are the same
    assert suite_folder(config) == first
    rewrite(package / DATA / "quotes.jsonl", "NVDA", lambda r: r["values"][0].update(quote_time="2026-03-19T20:00:01Z"))
    second = suite_folder(config)
    assert second != first and (second / "suite.json").is_file() and (first / "suite.json").is_file()
