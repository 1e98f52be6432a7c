"""What the liveapi tool-box tests share: REST endpoints and scenarios over a ``concert_singer`` database (each test
module writes its own copy of that database, with the columns its endpoints read)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from undertow.env_core.liveapi.endpoints import Endpoint, EndpointParam
from undertow.env_core.model import Gold, Scenario

DATABASE = "concert_singer"
COUNTRY = EndpointParam("country", "string", "Country of the singer", "Country", "France")


def concert_endpoint(name: str, path: str, description: str, sql: str, params: list[EndpointParam]) -> Endpoint:
    """An endpoint running ``sql`` on the concert_singer database, one query parameter per ``params``."""
    return Endpoint(name=name, path=path, description=description, database=DATABASE, sql=sql, params=params)


def concert_scenario(
    tools: list[str], *, formulation: str = "slot", setup: str | None = None, columns: Sequence[Any] = ()
) -> Scenario:
    """A liveapi scenario over concert_singer: ``setup`` is the hidden initialization query (None: no starting
    table), ``columns`` the starting table's keys that narrow ``key_name``."""
    liveapi = {"setup": {"database": DATABASE, "sql": setup} if setup else None, "columns": list(columns)}
    return Scenario(
        id=f"liveapi/{formulation}/{DATABASE}/0001",
        family="liveapi",
        task="t",
        tools=tools,
        gold=Gold(),
        metadata={"liveapi": liveapi},
    )
