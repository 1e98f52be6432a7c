"""Property tests of the scenario loader: whatever a ``.jsonl`` file holds, loading it gives scenarios or a
``DataError`` that names the file and the line, never another exception.

Lines are real smoke scenarios with fields set to arbitrary values, removed or misspelled (the real field names,
nested ones too), then written as JSON, truncated, or broken with bytes that are not UTF-8; besides them come huge
integers, deep nesting, stray brackets and arbitrary text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from undertow.env_core.errors import DataError
from undertow.env_core.model import FaultKind
from undertow.env_core.scenarios import ScenarioFile, ScenarioFileError, read_scenarios
from undertow.env_core.suites import Suite, copy_suite, load_suite

FAST = settings(max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

# where a value can be put or taken away: the real field names, nested ones as dotted paths
FIELDS = [
    "schema_version",
    "id",
    "family",
    "task",
    "tools",
    "tools.0",
    "hidden_tools",
    "disclosure",
    "disclosure.0",
    "disclosure.0.tools",
    "disclosure.0.after_calls",
    "disclosure.0.after_failure_of",
    "faults",
    "faults.0",
    "faults.0.kind",
    "faults.0.target",
    "faults.0.persistence",
    "faults.0.persistence.mode",
    "faults.0.persistence.after",
    "faults.0.params",
    "gold",
    "gold.answer",
    "gold.ordered",
    "gold.plans",
    "gold.plans.0",
    "gold.plans.0.0",
    "gold.plans.0.0.tool",
    "gold.plans.0.0.arguments",
    "gold.plans.1.1.arguments",
    "gold.required_calls",
    "gold.forbidden_calls",
    "gold.checkpoints",
    "gold.checkpoints.0.expect",
    "gold.checkpoints.0.weight",
    "variant_of",
    "metadata",
]
MISSPELT = ["taks", "tool", "hiden_tools", "fault", "gold.plan", "gold.answers", "faults.0.persistance", "idd"]
# integers past 64 bits as values; past Python's 4300-digit limit on int <-> str only as text (json.dumps refuses)
HUGE = st.integers(min_value=2**63, max_value=2**200) | st.integers(4000, 4299).map(lambda n: 10**n - 1)
HUGE_TEXT = st.integers(4290, 4500).map(lambda n: "9" * n)
HUGE_MARK = "__huge__"  # a value written as HUGE_TEXT once the line is JSON
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | HUGE
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from([k.value for k in FaultKind] + ["permanent", "temporary", "@solution", "@primary", ""])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=6), inner),
    max_leaves=8,
)
FAULTS = st.fixed_dictionaries(
    {
        "kind": st.sampled_from([k.value for k in FaultKind]),
        "target": st.sampled_from(["@solution", "@primary", "find_employee_ids", "nope"]),
    },
    optional={
        "persistence": st.fixed_dictionaries(
            {"mode": st.sampled_from(["permanent", "temporary"])}, optional={"after": st.integers(-2, 2000)}
        ),
        "params": st.dictionaries(st.text(max_size=4), SCALARS, max_size=2),
    },
)
NOT_UTF8 = st.sampled_from([b"\xff", b"\xfe\xff", b"\xc3", b"\xed\xa0\x80", b"\x80abc", b"\xf4\x90\x80\x80"])


def _set(data: Any, path: str, value: Any, *, delete: bool = False) -> None:
    """Put ``value`` at a dotted path (or remove what is there); a path that does not exist is left alone."""
    *parents, last = path.split(".")
    for part in parents:
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return
    if isinstance(data, dict):
        if delete:
            data.pop(last, None)
        else:
            data[last] = value
    elif isinstance(data, list) and last.isdigit() and int(last) < len(data):
        if delete:
            del data[int(last)]
        else:
            data[int(last)] = value


@st.composite
def scenario_lines(draw: st.DrawFn, bases: list[dict[str, Any]]) -> bytes:
    """A real scenario, changed a few times, written as JSON and perhaps cut short or broken."""
    data = json.loads(json.dumps(draw(st.sampled_from(bases))))
    for _ in range(draw(st.integers(0, 3))):
        change = draw(st.sampled_from(["set", "huge", "delete", "misspell", "fault"]))
        if change == "set":
            _set(data, draw(st.sampled_from(FIELDS)), draw(VALUES))
        elif change == "huge":
            _set(data, draw(st.sampled_from(FIELDS)), HUGE_MARK)
        elif change == "delete":
            _set(data, draw(st.sampled_from(FIELDS)), None, delete=True)
        elif change == "misspell":
            _set(data, draw(st.sampled_from(MISSPELT)), draw(VALUES))
        else:
            data["faults"] = draw(st.lists(FAULTS, max_size=2))
    text = json.dumps(data, ensure_ascii=draw(st.booleans())).replace(f'"{HUGE_MARK}"', draw(HUGE_TEXT))
    if draw(st.integers(0, 5)) == 0:
        text = text[: draw(st.integers(0, len(text)))]
    line = text.encode("utf-8", "surrogatepass")  # a lone surrogate from the text strategy: invalid UTF-8 too
    if draw(st.integers(0, 5)) == 0:
        at = draw(st.integers(0, len(line)))
        line = line[:at] + draw(NOT_UTF8) + line[at:]
    return line


OTHER_LINES = (
    st.integers(1, 3000).map(lambda n: ('{"id": ' + "[" * n + "]" * n + "}").encode())
    | st.integers(1, 3000).map(lambda n: ("[" * n).encode())
    | HUGE_TEXT.map(lambda n: f'{{"schema_version": {n}, "id": {n}}}'.encode())
    | HUGE.map(lambda n: f'{{"schema_version": {n}, "id": {n}}}'.encode())
    | st.sampled_from([b"", b"   ", b"\t", b"{", b"}", b"[]", b"null", b"1", b'"x"', b"\xef\xbb\xbf{}", b"NaN", b"{}"])
    | st.binary(max_size=40)
    | st.text(max_size=40).map(lambda t: t.encode("utf-8", "surrogatepass"))
    | VALUES.map(lambda v: json.dumps(v).encode())
)


@pytest.fixture(scope="module")
def bases(smoke: Suite) -> list[dict[str, Any]]:
    """Smoke scenarios as JSON data: one plain, one with faults, one with hidden tools if there is one."""
    chosen = [smoke.scenarios[0]]
    chosen += [s for s in smoke.scenarios if s.faults][:1]
    chosen += [s for s in smoke.scenarios if s.hidden_tools or s.disclosure][:1]
    return [s.model_dump(mode="json") for s in chosen]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("scenario-properties")


@pytest.fixture(scope="module")
def suite_folder(smoke: Suite, folder: Path) -> Path:
    return copy_suite(smoke, folder / "smoke-copy")


def files(bases: list[dict[str, Any]]) -> st.SearchStrategy[bytes]:
    lines = st.lists(scenario_lines(bases) | OTHER_LINES, min_size=1, max_size=5)
    return lines.map(b"\n".join)


def named_lines(message: str, path: Path) -> list[int]:
    return [int(n) for n in re.findall(re.escape(str(path)) + r":(\d+)", message)]


def line_count(data: bytes) -> int:
    # the loader reads text with universal newlines: \r, \n and \r\n end a line
    return max(1, len(data.splitlines()))


def assert_names_file_and_line(exc: DataError, path: Path, data: bytes) -> None:
    message = str(exc)
    lines = named_lines(message, path)
    assert lines, f"no {path}:LINE in {message!r}"
    assert all(1 <= n <= line_count(data) for n in lines), (lines, line_count(data))


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@FAST
@given(data=st.data())
def test_read_scenarios_gives_scenarios_or_a_data_error_naming_file_and_line(
    bases: list[dict[str, Any]], folder: Path, data: st.DataObject
) -> None:
    content = data.draw(files(bases))
    path = write(folder / "scenarios.jsonl", content)
    try:
        loaded = read_scenarios(path)
    except ScenarioFileError as exc:
        assert isinstance(exc, DataError)
        assert_names_file_and_line(exc, path, content)
    else:
        assert isinstance(loaded, ScenarioFile)
        assert loaded.skipped == []
        assert len(loaded.scenarios) <= line_count(content)


@FAST
@given(data=st.data())
def test_skip_invalid_names_each_line_it_skips(bases: list[dict[str, Any]], folder: Path, data: st.DataObject) -> None:
    content = data.draw(files(bases))
    path = write(folder / "scenarios.jsonl", content)
    try:
        loaded = read_scenarios(path, skip_invalid=True)
    except ScenarioFileError as exc:  # a problem of the whole file may still be an error
        assert_names_file_and_line(exc, path, content)
        return
    assert isinstance(loaded, ScenarioFile)
    assert len(loaded.scenarios) + len(loaded.skipped) <= line_count(content)
    for problem in loaded.skipped:
        lines = named_lines(problem, path)
        assert lines and 1 <= lines[0] <= line_count(content), problem


@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_load_suite_gives_a_suite_or_a_data_error_naming_the_file(
    bases: list[dict[str, Any]], folder: Path, suite_folder: Path, data: st.DataObject
) -> None:
    """Through a suite folder, where every scenario is also checked against the suite's tools."""
    content = data.draw(files(bases))
    path = write(folder / "replacement.jsonl", content)
    try:
        suite = load_suite(suite_folder, scenarios=path)
    except DataError as exc:  # ScenarioFileError, or SuiteError when no scenario is left
        assert str(path) in str(exc)
        if isinstance(exc, ScenarioFileError):
            assert_names_file_and_line(exc, path, content)
    else:
        assert 1 <= len(suite.scenarios) <= line_count(content)


# ---------------------------------------------------------------------------------------------------------------
# The lines that raised something else than a DataError, each on its own


@pytest.fixture
def one_line(tmp_path: Path) -> Iterator[Any]:
    def read(line: bytes) -> str:
        path = write(tmp_path / "one.jsonl", line + b"\n")
        with pytest.raises(ScenarioFileError) as excinfo:
            read_scenarios(path)
        assert named_lines(str(excinfo.value), path) == [1]
        return str(excinfo.value)

    yield read


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(b'{"id": "a\xff", "task": "t"}', id="not-utf8"),
        pytest.param(b'{"id": "\xed\xa0\x80"}', id="encoded-surrogate"),
        pytest.param(b'{"schema_version": ' + b"9" * 4400 + b"}", id="int-past-str-limit"),
        pytest.param(b'{"id": ' + b"[" * 3000 + b"]" * 3000 + b"}", id="deep"),
        pytest.param(b"\xef\xbb\xbf{}", id="byte-order-mark"),
    ],
)
def test_lines_that_are_not_scenarios_are_data_errors(one_line: Any, line: bytes) -> None:
    one_line(line)
