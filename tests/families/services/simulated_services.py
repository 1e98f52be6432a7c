"""What the tests of the simulated services (env_core.services) share: an episode over a tool box of services, calls
into it, a service on a pristine world of its own, and the JSON text the checks search."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Sequence
from typing import Any

from helpers import builders

from undertow.env_core.environment import Environment
from undertow.env_core.model import Gold, Observation, Scenario
from undertow.env_core.services.base import Service
from undertow.env_core.services.tools import ServicesToolBox, pristine_world


@functools.cache
def _box(services: tuple[type[Service], ...]) -> ServicesToolBox:
    return ServicesToolBox([spec for service in services for spec in service.specs()], services)


def episode(services: Sequence[type[Service]]) -> Environment:
    """A fresh episode whose tools are every tool of ``services``."""
    box = _box(tuple(services))
    scenario = Scenario(id="services-test", family="services", task="test", tools=sorted(box.specs), gold=Gold())
    env = Environment(scenario, box)
    env.reset()
    return env


def step(env: Environment, name: str, arguments: dict[str, Any]) -> Observation:
    """Call the tool ``name`` in the episode (the call's id is the tool's name)."""
    return builders.step(env, name, arguments, call_id=name)


def call(env: Environment, service: type[Service], method: str, **arguments: Any) -> Observation:
    """Call ``service``'s tool for ``method`` in the episode."""
    return step(env, service.tool_name(method), arguments)


def ok(env: Environment, service: type[Service], method: str, **arguments: Any) -> Any:
    """The result of a call that must succeed."""
    observation = call(env, service, method, **arguments)
    assert observation.ok, (service.name, method, observation.error)
    return observation.result


def fresh(service: type[Service], services: Sequence[type[Service]]) -> Service:
    """``service`` on a pristine world of ``services``, outside any episode (no clock tick, no schema check)."""
    return service(pristine_world(services))


def run(service: Service, method: str, **arguments: Any) -> Any:
    """The result of calling ``service``'s tool for ``method`` straight on its world (no schema check)."""
    return service.run(method, arguments)


def text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def arguments(service: type[Service], method: str) -> tuple[list[str], list[str]]:
    """A tool's argument names in schema order, and its required ones sorted."""
    spec = next(s for s in service.specs() if s.name == service.tool_name(method))
    return list(spec.parameters["properties"]), sorted(spec.parameters.get("required", []))


def params(service: type[Service], method: str) -> dict[str, Any]:
    """A tool method's parameters (after self) with their defaults."""
    signature = inspect.signature(service.tool_methods()[method])
    return {name: p.default for name, p in list(signature.parameters.items())[1:]}
