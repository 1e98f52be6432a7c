"""What a service offers the scenario library: recipes, each a user request it can serve, the calls that serve it
and what the true result shows.

A service lists its recipes in ``lookups`` and ``writes`` (see :class:`~undertow.env_core.services.base.Service`);
the templates in ``undertow.env_core.services.library`` cross them with fault kinds and persistence. Recipes of
counterpart services that share a ``topic`` answer the same request, so that a fallback reaches the same facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Call:
    """A call of one of a service's tools: the method name (without the service prefix) and its arguments."""

    method: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Lookup:
    """A read the library can pose as a task. ``request`` is the user's words; ``call`` serves it; ``shows`` are
    strings that the true result contains (the oracle checks them; a stale, corrupted or drifted result lacks one);
    ``answer`` the concepts a right final answer states (with ``concludes``). ``pin`` is a call that names one
    entity exactly (by id), for disambiguation; ``value_field`` a numeric field of the result a corruption can
    alter. ``topic`` pairs it with a counterpart's lookup that answers the same request with the same facts."""

    topic: str
    request: str
    call: Call
    shows: list[str]
    answer: list[str]
    pin: Call | None = None
    value_field: str | None = None
    # the conclusion the request asks for, in words a right answer states beside the values ("cheapest"): checked
    # like the answer's concepts, but not a string of the result
    concludes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Write:
    """A write the library can pose as a task: ``call`` performs it, ``readback`` confirms it (a readback tool),
    ``landed`` are strings the readback shows once the write has landed and not before; ``answer`` the concepts a
    right final answer states. ``before`` are calls the write needs first (a menu before an order); the last of
    them is the write's upstream when a fault cascades. ``topic`` pairs it with a counterpart's write."""

    topic: str
    request: str
    call: Call
    readback: Call
    landed: list[str]
    answer: list[str]
    before: list[Call] = field(default_factory=list)
    concludes: list[str] = field(default_factory=list)  # as Lookup.concludes ("placed", "booked")
