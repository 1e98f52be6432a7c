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
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import REPO

from undertow.env_core.content import DATA
from undertow.env_core.errors import DataError
from undertow.env_core.services import build
from undertow.env_core.services.catalog import BY_NAME
from undertow.env_core.services.histories import held, past
from undertow.env_core.services.seeds import STAYS, TODAY, Product, Stay, read_seeds
from undertow.env_core.services.states import Ride
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
    for path in (PACKAGE / DATA).glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)  # every line an object; a dated table's snapshots hold today's values
            assert all(s["as_of"] == TODAY.isoformat() for s in record.get("values", [])), path.name
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
    """A data file that no longer matches its record model fails when the package is imported; here each shipped
    file is read again on its own, through the loader, to say which one."""
    from undertow.env_core.services import seeds

    tables = {name: value for name, value in vars(seeds).items() if name.isupper() and isinstance(value, tuple | dict)}
    assert len(tables) >= 18 and all(tables.values())


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
