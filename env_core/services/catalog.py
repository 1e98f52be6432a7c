"""The 30 simulated services, in one list: the family's whole tool universe."""

from __future__ import annotations

from undertow.env_core.model import ToolSpec
from undertow.env_core.services import commerce, communication, finance, information, travel
from undertow.env_core.services.base import Service

SERVICES: list[type[Service]] = [
    *travel.SERVICES,
    *finance.SERVICES,
    *commerce.SERVICES,
    *communication.SERVICES,
    *information.SERVICES,
]
BY_NAME: dict[str, type[Service]] = {service.name: service for service in SERVICES}


def all_specs() -> list[ToolSpec]:
    return [spec for service in SERVICES for spec in service.specs()]


def service_of(tool: str) -> type[Service] | None:
    """The service whose tool this is (tool names are ``<service>_<method>``; the longest prefix wins)."""
    owners = [
        s for s in SERVICES if tool.startswith(f"{s.name}_") and tool.removeprefix(f"{s.name}_") in s.tool_methods()
    ]
    return max(owners, key=lambda s: len(s.name)) if owners else None
