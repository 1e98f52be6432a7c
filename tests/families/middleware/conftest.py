"""The fixtures the middleware family's test modules share: the spider-dev folder its environments are built from."""

from __future__ import annotations

import pytest
from helpers.paths import SPIDER_DEV as SPIDER

from undertow.env_core.spider import SpiderData, read_spider


@pytest.fixture(scope="session")
def spider() -> SpiderData:
    """spider-dev read once (its databases, schemas and questions); the tests need ../shared beside the repository."""
    if not (SPIDER / "tables.json").is_file():
        pytest.fail(f"spider-dev data is missing: {SPIDER}")
    return read_spider(SPIDER)
