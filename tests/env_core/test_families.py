"""The family door: the registry finds families by name, entry point or module:attribute and refuses what is not a
family; no module outside a family's own rooms names it (the import graph: tests/test_package.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.builders import episode_result
from helpers.paths import REPO

from undertow.env_core.families import (
    FamilyError,
    family_names,
    get_family,
    load_reference,
    summarize_family,
)

PACKAGES = ("storage", "env_core", "retrieval", "scoring", "workers", "cluster")


def _allowed(path: Path, family: str) -> bool:
    """A family may be named in its own folder, its scoring module (or package) and the registry (pyproject's entry
    points)."""
    relative = path.relative_to(REPO).as_posix()
    own = (f"env_core/{family}/", f"scoring/{family}/")
    return relative.startswith(own) or relative == f"scoring/{family}.py"


def test_built_in_families_register_through_the_entry_point_group() -> None:
    assert {"smoke", "sqlfuncs", "services", "liveapi", "failtalms", "middleware"} <= set(family_names())
    assert get_family("sqlfuncs").summary_model is not None


@pytest.mark.parametrize("family", ["smoke", "sqlfuncs", "services", "liveapi", "failtalms", "middleware"])
def test_no_module_outside_a_familys_rooms_names_it(family: str) -> None:
    pattern = re.compile(rf"\b{family}\b", re.IGNORECASE)
    hits = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*")):
            if path.suffix not in (".py", ".j2") or _allowed(path, family):
                continue
            for number, line in enumerate(path.read_text().splitlines(), start=1):
                if pattern.search(line):
                    hits.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not hits, "\n".join(hits)


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        (
            "no_such_package.bench:FAMILY",
            "family reference 'no_such_package.bench:FAMILY': cannot import no_such_package",
        ),
        ("json:nothing", "family reference 'json:nothing': json has no attribute 'nothing'"),
        ("json:dumps", "family reference 'json:dumps': function is not a Family"),
        ("json", "family reference 'json': expected module:attribute"),
    ],
)
def test_bad_references_name_the_reference_and_the_problem(reference: str, message: str) -> None:
    with pytest.raises(FamilyError) as excinfo:
        load_reference(reference)
    assert str(excinfo.value).startswith(message)


def test_unknown_family_lists_the_registered_ones_with_a_did_you_mean() -> None:
    with pytest.raises(FamilyError) as excinfo:
        get_family("sqlfunc")
    expected = (
        "unknown family 'sqlfunc'; did you mean 'sqlfuncs'? (registered: failtalms, liveapi, middleware, services, "
        "smoke"
    )
    assert expected in str(excinfo.value)


def test_a_summary_that_fails_its_model_names_the_family_and_the_field() -> None:
    family = get_family("sqlfuncs")
    broken = type(
        "Broken",
        (),
        {name: getattr(family, name) for name in dir(family) if not name.startswith("_")}
        | {"summarize": staticmethod(lambda results: {"family": "sqlfuncs", "confidence": "high"})},
    )()
    result = episode_result(suite="s", family="sqlfuncs")
    with pytest.raises(FamilyError) as excinfo:
        summarize_family(broken, [result])
    message = str(excinfo.value)
    assert message.startswith("family 'sqlfuncs': its summary does not match SqlfuncsSummary: confidence:")
