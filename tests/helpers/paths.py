"""Where things are, for every test module whatever its depth under tests/."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
CONFIGS = REPO / "configs"
SCHEMAS = REPO / "docs" / "schema"
# ../shared beside the repository: the papers' data the tests may read (never the product)
SHARED_DATA = REPO.parent / "shared" / "data"
SPIDER_DEV = SHARED_DATA / "spider-dev"
FAIL_TALMS = SHARED_DATA / "fail-talms"
