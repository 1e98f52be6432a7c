"""The services tool box: every service's tools over one episode's :class:`~undertow.env_core.services.base.World`.

Each episode starts from a copy of one pristine world (every service's seeded state), so no episode ever sees
another's writes, whichever worker or thread runs it; a tool call runs the service method it is bound to and moves
the simulated clock on.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Sequence
from typing import Any

from undertow.env_core.model import ToolSpec
from undertow.env_core.services.base import Service, World
from undertow.env_core.tools import ToolBox


def pristine_world(services: Sequence[type[Service]]) -> World:
    return World(states={service.name: service.initial_state() for service in services})


class PristineWorld:
    """Copies of one pristine world. Kept pickled: unpickling makes an independent copy about 3x faster than
    ``copy.deepcopy`` of the pydantic models, and a library build copies the world a few thousand times."""

    def __init__(self, services: Sequence[type[Service]]):
        self._pickled = pickle.dumps(pristine_world(services), protocol=pickle.HIGHEST_PROTOCOL)

    def copy(self) -> World:
        world = pickle.loads(self._pickled)
        assert isinstance(world, World)
        return world


class ServicesToolBox(ToolBox):
    def __init__(self, specs: Iterable[ToolSpec], services: Sequence[type[Service]]):
        super().__init__(specs)
        self.services = {service.name: service for service in services}
        for spec in self.specs.values():
            service = self.services.get(spec.binding.get("service", ""))
            if service is None or spec.binding.get("method") not in service.tool_methods():
                raise ValueError(f"tool '{spec.name}' is bound to no method of a known service")
        self._pristine = PristineWorld(services)

    def new_state(self) -> World:
        return self._pristine.copy()

    def execute(self, state: World, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        service = self.services[spec.binding["service"]](state)
        state.tick()
        # errors meant for the agent are ToolExecutionError; anything else is a bug in the service, which the runner
        # records as a harness error, never as the model's mistake
        return service.run(spec.binding["method"], arguments)
