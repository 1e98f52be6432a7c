"""The services tool box: every service's tools over one episode's :class:`~undertow.env_core.services.base.World`.

Each episode starts from a copy of one pristine world (every service's seeded state as of today), so no episode ever
sees another's writes, whichever worker or thread runs it; a tool call runs the service method it is bound to and
moves the simulated clock on. A ``stale`` fault reads from a pristine world of an earlier day instead
(:meth:`ServicesToolBox.snapshot`): the seed values that were current then.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Sequence
from datetime import date, timedelta
from typing import Any

from undertow.env_core.model import ToolSpec
from undertow.env_core.services.base import Service, World
from undertow.env_core.services.seeds import TODAY
from undertow.env_core.tools import ToolBox


def pristine_world(services: Sequence[type[Service]], day: date = TODAY) -> World:
    """Every service's seeded state as of ``day``, in a world of that day."""
    return World(as_of=day, states={service.name: service.initial_state(day) for service in services})


class PristineWorld:
    """Copies of one pristine world (of ``day``). Kept pickled: unpickling makes an independent copy about 3x faster
    than ``copy.deepcopy`` of the pydantic models, and a library build copies the world a few thousand times."""

    def __init__(self, services: Sequence[type[Service]], day: date = TODAY):
        self._pickled = pickle.dumps(pristine_world(services, day), protocol=pickle.HIGHEST_PROTOCOL)

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
        # the worlds stale faults read from, made on first use (two threads may both make one: the same world)
        self._past: dict[date, PristineWorld] = {}

    def new_state(self) -> World:
        return self._pristine.copy()

    def snapshot(self, state: World, age_days: int) -> World:
        """A fresh pristine world as of ``age_days`` before the episode's day: every service's seed values of
        then (a quote's older price, a forecast as issued then, an older nightly rate), none of the episode's
        writes; its clock is the episode's."""
        day = state.as_of - timedelta(days=age_days)
        pristine = self._past.get(day)
        if pristine is None:
            pristine = self._past[day] = PristineWorld(list(self.services.values()), day)
        world = pristine.copy()
        world.now = state.now
        return world

    def execute(self, state: World, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        service = self.services[spec.binding["service"]](state)
        state.tick()
        # errors meant for the agent are ToolExecutionError; anything else is a bug in the service, which the runner
        # records as a harness error, never as the model's mistake
        return service.run(spec.binding["method"], arguments)
