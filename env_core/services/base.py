"""The one shape every simulated service has: a typed class over a pydantic state model, whose tools are its
methods marked with :func:`tool`.

A service is a subclass of :class:`Service`. It names itself (``name``, ``title``), says where it sits in the
paper's taxonomy (``domain``, ``category``) and which services offer overlapping functionality (``counterparts``),
declares its state (a pydantic model in ``State``, seeded by ``initial_state``) and its tools: methods marked
``@tool(kind)`` with typed arguments (``Annotated[type, Field(description=...)]``) and a docstring whose first
paragraph is the tool's description. The tool named ``<service>_<method>`` is generated from that signature, with
a JSON schema the environment checks every call against before the method runs.

Each episode gets a fresh :class:`World`: the seeded state of every service, a simulated clock and the user's
profile. Methods read and write ``self.state`` (their own service's state) and ``self.world`` (clock, user); they
raise :class:`~undertow.env_core.tools.ToolExecutionError` for errors the agent should read (``not_found``, ...).

A service also offers the scenario library *recipes* (:class:`Lookup`, :class:`Write`): a user request it can
serve, the calls that serve it, and what the true result shows. The templates in ``undertow.env_core.services.library``
cross them with fault kinds and persistence; recipes of counterpart services that share a ``topic`` answer the
same request, so that a fallback reaches the same facts.
"""

from __future__ import annotations

import copy
import inspect
import json
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, ClassVar, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

from undertow.env_core.model import ToolSpec
from undertow.env_core.tools import ToolExecutionError
from undertow.env_core.untrusted import capped

# The simulated clock starts where the fault layer's reference clock is (env_core.faults.REFERENCE_NOW): a stale
# record's generated_at then counts back from the same instant the services' timestamps count from.
START = datetime(2026, 3, 20, 6, 0, tzinfo=UTC)
CALL_TICK = timedelta(seconds=20)  # simulated time one tool call takes

ToolKind = Literal["read", "write", "readback"]
DOMAINS = (
    "travel & lodging",
    "payments & finance",
    "commerce & food",
    "communication & productivity",
    "information",
)


class UserProfile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = "Alex Rivera"
    email: str = "alex.rivera@example.com"
    phone: str = "+1-415-555-0142"
    home_city: str = "San Francisco, CA"
    timezone: str = "America/Los_Angeles"


class World(BaseModel):
    """One episode's whole state: every service's state by service name, the clock and the user."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    now: datetime = START
    user: UserProfile = Field(default_factory=UserProfile)
    states: dict[str, BaseModel] = Field(default_factory=dict)
    counter: int = 0  # source of fresh ids (``new_id``), part of the state so that ids replay

    def tick(self) -> None:
        self.now += CALL_TICK

    def new_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}_{self.counter:04d}"

    def stamp(self) -> str:
        """The clock as ISO 8601 text (UTC)."""
        return self.now.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class ToolInfo:
    kind: ToolKind
    failure_hint: str  # H2 harness annotation: what can go wrong with this tool and how to check


def tool(kind: ToolKind, failure_hint: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a service method as a tool: ``read`` (no state change), ``write`` (changes state) or ``readback`` (a
    read that confirms a write's postcondition: ``get_transfer``, ``get_order``, ``get_saved_locations``).
    ``failure_hint`` is the schema annotation the H2 harness layer adds to the description."""

    def mark(method: Callable[..., Any]) -> Callable[..., Any]:
        method.__service_tool__ = ToolInfo(kind, failure_hint)  # type: ignore[attr-defined]
        return method

    return mark


@dataclass(frozen=True)
class Call:
    """A call of one of a service's tools: the method name (without the service prefix) and its arguments."""

    method: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Lookup:
    """A read the library can pose as a task. ``request`` is the user's words; ``call`` serves it; ``shows`` are
    strings that the true result contains (the oracle checks them; a stale, corrupted or drifted result lacks one);
    ``answer`` the concepts a right final answer states. ``pin`` is a call that names one entity exactly (by id),
    for disambiguation; ``value_field`` a numeric field of the result a corruption can alter. ``topic`` pairs it
    with a counterpart's lookup that answers the same request with the same facts."""

    topic: str
    request: str
    call: Call
    shows: list[str]
    answer: list[str]
    pin: Call | None = None
    value_field: str | None = None


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


class Service:
    """Base of every simulated service. Subclasses set the class attributes and define tools with ``@tool``."""

    name: ClassVar[str]  # lower_snake, the tool prefix: "weathercom"
    title: ClassVar[str]  # how people call it: "Weather.com"
    domain: ClassVar[str]  # one of DOMAINS
    category: ClassVar[str]  # fine-grained: "weather", "payments", ...
    counterparts: ClassVar[tuple[str, ...]] = ()  # names of services with overlapping functionality
    State: ClassVar[type[BaseModel]]

    def __init__(self, world: World):
        self.world = world
        self.state: Any = world.states[self.name]

    @classmethod
    def initial_state(cls) -> BaseModel:
        """The seeded state every episode starts from (deterministic: the same every time)."""
        raise NotImplementedError

    @classmethod
    def lookups(cls) -> list[Lookup]:
        return []

    @classmethod
    def writes(cls) -> list[Write]:
        return []

    @classmethod
    def tool_methods(cls) -> dict[str, Callable[..., Any]]:
        return {
            name: member
            for name, member in inspect.getmembers(cls, inspect.isfunction)
            if hasattr(member, "__service_tool__")
        }

    @classmethod
    def tool_name(cls, method: str) -> str:
        return f"{cls.name}_{method}"

    @classmethod
    def specs(cls) -> list[ToolSpec]:
        """The service's tools as the model sees them; ``binding`` says which service and method run each."""
        return list(_specs_of(cls))

    @classmethod
    def _make_specs(cls) -> tuple[ToolSpec, ...]:
        specs = []
        for method_name, method in sorted(cls.tool_methods().items()):
            info: ToolInfo = method.__service_tool__  # type: ignore[attr-defined]
            hints = get_type_hints(method, include_extras=True)
            fields: dict[str, Any] = {}
            for parameter in list(inspect.signature(method).parameters.values())[1:]:
                default = ... if parameter.default is inspect.Parameter.empty else parameter.default
                fields[parameter.name] = (hints[parameter.name], default)
            model = create_model(f"{cls.__name__}_{method_name}", __config__=ConfigDict(extra="forbid"), **fields)
            schema = model.model_json_schema()
            schema.pop("title", None)
            for prop in schema.get("properties", {}).values():
                prop.pop("title", None)
            schema["additionalProperties"] = False
            doc = inspect.getdoc(method) or ""
            description = f"{cls.title}: " + " ".join(doc.split("\n\n")[0].split())
            specs.append(
                ToolSpec(
                    name=cls.tool_name(method_name),
                    description=description,
                    parameters=schema,
                    binding={
                        "service": cls.name,
                        "method": method_name,
                        "kind": info.kind,
                        "failure_hint": info.failure_hint,
                    },
                )
            )
        return tuple(specs)

    def run(self, method: str, arguments: dict[str, Any]) -> Any:
        """Run one tool call (arguments already checked against the schema) and return a JSON-able result."""
        result = getattr(self, method)(**arguments)
        return jsonable(result)


_SPECS: dict[str, tuple[ToolSpec, ...]] = {}


def _specs_of(service: type[Service]) -> tuple[ToolSpec, ...]:
    # a class's specs never change: built once per process
    key = f"{service.__module__}.{service.__qualname__}"
    if key not in _SPECS:
        _SPECS[key] = service._make_specs()
    return _SPECS[key]


def money(value: Decimal | float) -> float:
    """Round to cents, half up (the way a receipt does), whatever the binary float says: the one rounding of every
    service."""
    return float(Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def shown(value: float) -> str:
    """A number as a result's JSON writes it: the literal a recipe's answer looks for."""
    return json.dumps(value)


def invalid(message: str) -> ToolExecutionError:
    return ToolExecutionError(message, "invalid_request")


class Category(Service):
    """Base of a category of counterpart services (rides, payments, food delivery, ...): it holds the shared state
    model and the tools, and each provider is a subclass that sets its name, ids and seeded data.

    An inherited tool's docstring and failure hint are templates: ``{name}`` stands for the provider's name (the
    prefix of its tool names) and ``{word}`` for ``words["word"]``, the provider's own wording (added to its bases'
    words); ``docs`` replaces a description outright, and ``arg_types`` gives a parameter the provider's own type
    (its own ``Literal`` of options). Each provider gets its own copy of every inherited tool with the templates
    filled in, so that its specs read as its own."""

    words: ClassVar[dict[str, str]] = {}
    docs: ClassVar[dict[str, str]] = {}  # a tool's description in the provider's own words, where more than a word
    arg_types: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:  # a provider, not an intermediate base
            for attr, method in inspect.getmembers(cls, inspect.isfunction):
                if hasattr(method, "__service_tool__") and attr not in cls.__dict__:
                    setattr(cls, attr, cls._tailored(attr, getattr(method, "__template__", method)))

    @classmethod
    def _fill(cls, text: str) -> str:
        words = {"name": cls.name}
        for klass in reversed(cls.__mro__):  # a provider's words add to (and override) its bases' words
            words.update(klass.__dict__.get("words", {}))
        for key, value in words.items():
            text = text.replace("{" + key + "}", value)
        return text

    @classmethod
    def _tailored(cls, attr: str, template: Any) -> Any:
        info: ToolInfo = template.__service_tool__
        method = types.FunctionType(
            template.__code__, template.__globals__, attr, template.__defaults__, template.__closure__
        )
        method.__kwdefaults__ = template.__kwdefaults__
        method.__module__ = template.__module__
        method.__qualname__ = f"{cls.__qualname__}.{attr}"
        method.__doc__ = cls.docs.get(attr) or cls._fill(template.__doc__ or "")
        method.__annotations__ = {
            arg: cls.arg_types.get(arg, hint) if arg != "return" else hint
            for arg, hint in template.__annotations__.items()
        }
        method.__service_tool__ = ToolInfo(info.kind, cls._fill(info.failure_hint))  # type: ignore[attr-defined]
        method.__template__ = template  # type: ignore[attr-defined]
        return method


def jsonable(value: Any) -> Any:
    """A result as plain JSON values (pydantic models dumped, datetimes as ISO text)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return copy.deepcopy(value)


def not_found(what: str, key: object) -> ToolExecutionError:
    """The error every service raises for an id or name it does not know (a long one quoted short)."""
    return ToolExecutionError(f"{what} {(capped(key) if isinstance(key, str) else key)!r} not found", "not_found")
