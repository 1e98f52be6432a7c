"""The one shape every simulated service has: a typed class over a pydantic state model, whose tools are its
methods marked with :func:`~undertow.env_core.tools.tool`.

A service is a subclass of :class:`Service`. It names itself (``name``, ``title``), says where it sits in the
paper's taxonomy (``domain``, ``category``) and which services offer overlapping functionality (``counterparts``),
declares its state (a pydantic model: the type of ``state``, seeded by ``initial_state``) and its tools: methods marked
``@tool(kind)`` with typed arguments (``Annotated[type, Field(description=...)]``) and a docstring whose first
paragraph is the tool's description. The tool named ``<service>_<method>`` is generated from that signature, with
a JSON schema the environment checks every call against before the method runs.

Each episode gets a fresh :class:`World`: the seeded state of every service, a simulated clock and the user's
profile. Methods read and write ``self.state`` (their own service's state) and ``self.world`` (clock, user); they
raise :class:`~undertow.env_core.tools.ToolExecutionError` for errors the agent should read (``not_found``, ...).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import re
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any, ClassVar, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, Field

from undertow.env_core.model import ToolSpec
from undertow.env_core.tools import first_paragraph, marked_tools, parameters_schema, tool_mark

# The simulated clock starts where the fault layer's reference clock is (env_core.faults.REFERENCE_NOW): a stale
# record's generated_at then counts back from the same instant the services' timestamps count from.
START = datetime(2026, 3, 20, 6, 0, tzinfo=UTC)
TODAY = START.date()  # the reference day: the world an episode starts in holds this day's seed values
CALL_TICK = timedelta(seconds=20)  # simulated time one tool call takes


# A service tool's kind (``@tool(kind, failure_hint)`` from env_core.tools): ``read`` (no state change), ``write``
# (changes state) or ``readback`` (a read that confirms a write's postcondition: ``get_transfer``, ``get_order``);
# its failure hint is the schema annotation the H2 harness layer adds to the description.
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
    """One episode's whole state: every service's state by service name, the clock and the user. ``as_of`` is the
    day whose seed values the world holds and its services read (``seeds.tables(as_of)``): the clock's first day in
    an episode's world, an earlier day in the world a ``stale`` fault reads from (``ServicesToolBox.snapshot``),
    whose clock is the episode's."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    as_of: date = TODAY
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


class Service:
    """Base of every simulated service. Subclasses set the class attributes and define tools with ``@tool``."""

    name: ClassVar[str]  # lower_snake, the tool prefix: "weathercom"
    title: ClassVar[str]  # how people call it: "Weather.com"
    domain: ClassVar[str]  # one of DOMAINS
    category: ClassVar[str]  # fine-grained: "weather", "payments", ...
    counterparts: ClassVar[tuple[str, ...]] = ()  # names of services with overlapping functionality

    def __init_subclass__(
        cls,
        *,
        name: str | None = None,
        title: str | None = None,
        domain: str | None = None,
        category: str | None = None,
        **kwargs: Any,
    ) -> None:
        """A service says what it is in its class line: ``class _Reviews(Category, domain="information",
        category="reviews")``, ``class Yelp(_Voting, name="yelp", title="Yelp")``."""
        for attribute, value in (("name", name), ("title", title), ("domain", domain), ("category", category)):
            if value is not None:
                setattr(cls, attribute, value)
        super().__init_subclass__(**kwargs)

    def __init__(self, world: World):
        self.world = world
        self.state: Any = world.states[self.name]

    @classmethod
    def initial_state(cls, day: date = TODAY) -> BaseModel:
        """The seeded state a world of ``day`` starts from: the seed values of that day (deterministic: the same
        every time). An episode's world is the clock's first day's."""
        raise NotImplementedError

    @classmethod
    def tool_methods(cls) -> dict[str, Callable[..., Any]]:
        return marked_tools(cls)

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
            mark = tool_mark(method)
            assert mark is not None  # tool_methods holds marked methods only
            specs.append(
                ToolSpec(
                    name=cls.tool_name(method_name),
                    description=f"{cls.title}: {first_paragraph(method)}",
                    parameters=parameters_schema(method, skip_first=True),
                    # the binding's keys in this order: the built suite's tools.jsonl is compared byte for byte
                    binding={
                        "service": cls.name,
                        "method": method_name,
                        "kind": mark.kind,
                        "failure_hint": mark.failure_hint,
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


def peers(*providers: type[Service]) -> list[type[Service]]:
    """The providers of one category, in order: each one's counterparts are the others, in that order."""
    for provider in providers:
        provider.counterparts = tuple(other.name for other in providers if other is not provider)
    return list(providers)


class Category(Service):
    """Base of a category of counterpart services (rides, payments, food delivery, ...): it holds the shared state
    model and the tools, and each provider is a subclass that sets its name, ids and seeded data.

    An inherited tool is a template, and each provider gets its own copy of it, so that its specs read as its own.
    The docstring and the failure hint are filled in: ``{name}`` stands for the provider's name (the prefix of its
    tool names), ``{tool:NAME}`` and ``{arg:NAME}`` for the provider's names of the tool and the parameter ``NAME``,
    ``{word}`` for ``words["word"]``, the provider's own wording (added to its bases' words). ``docs`` and
    ``hints`` replace a description or a failure hint outright, ``renames`` gives a tool the provider's own name,
    ``arg_names`` a parameter (or leaves out one with a default), and ``arg_types`` a parameter the provider's own
    type (its own ``Literal`` of options, its own description; ``tool.arg`` for one tool's); all keyed by the
    provider's names."""

    words: ClassVar[dict[str, str]] = {}
    docs: ClassVar[dict[str, str]] = {}  # a tool's description in the provider's own words, where more than a word
    hints: ClassVar[dict[str, str]] = {}  # a tool's failure hint in the provider's own words
    renames: ClassVar[dict[str, str]] = {}  # an inherited tool's name -> the provider's name for it
    # an inherited tool's parameter -> the provider's name for it, or None where the provider does not take it (the
    # template's default applies)
    arg_names: ClassVar[Mapping[str, str | None]] = {}
    arg_types: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:  # a provider, not an intermediate base
            for attr, method in marked_tools(cls).items():
                if attr in cls.__dict__:
                    continue
                template = getattr(method, "__template__", method)
                own = cls.tool_of(attr)
                if own != attr:  # the template's own name stays a method of the provider, but not a tool
                    setattr(cls, attr, _untooled(template))
                setattr(cls, own, cls._tailored(own, template))

    @classmethod
    def tool_of(cls, template: str) -> str:
        """The provider's name for an inherited tool (the method its tool runs; the tool's name without the prefix)."""
        return cls.renames.get(template, template)

    @classmethod
    def arg_of(cls, template: str) -> str:
        """The provider's name for a parameter of its inherited tools."""
        return cls.arg_names.get(template) or template

    @classmethod
    def _fill(cls, text: str) -> str:
        words = {"name": cls.name}
        for klass in reversed(cls.__mro__):  # a provider's words add to (and override) its bases' words
            words.update(klass.__dict__.get("words", {}))
        for key, value in words.items():
            text = text.replace("{" + key + "}", value)
        # {tool:NAME} and {arg:NAME}: the provider's names for an inherited tool and a parameter
        text = re.sub(r"\{tool:(\w+)\}", lambda m: cls.tool_of(m[1]), text)
        return re.sub(r"\{arg:(\w+)\}", lambda m: cls.arg_of(m[1]), text)

    @classmethod
    def _tailored(cls, own: str, template: Any) -> Any:
        """The provider's copy of a template tool, named ``own``: it runs the template with the arguments under
        the template's parameter names."""
        mark = tool_mark(template)
        assert mark is not None  # only marked methods are tailored
        signature = inspect.signature(template)
        left_out = [p for p in signature.parameters.values() if p.name in cls.arg_names and not cls.arg_names[p.name]]
        if any(p.default is inspect.Parameter.empty for p in left_out):
            raise TypeError(f"{cls.__name__}.{own}: only a parameter with a default can be left out")
        names = {name: cls.arg_of(name) for name in signature.parameters if name not in {p.name for p in left_out}}
        back = {renamed: name for name, renamed in names.items()}
        kept = [p.replace(name=names[p.name]) for p in signature.parameters.values() if p.name in names]

        def method(self: Any, *args: Any, **arguments: Any) -> Any:
            return template(self, *args, **{back.get(key, key): value for key, value in arguments.items()})

        method.__name__ = own
        method.__qualname__ = f"{cls.__qualname__}.{own}"
        method.__module__ = template.__module__
        method.__doc__ = cls.docs.get(own) or cls._fill(template.__doc__ or "")
        method.__signature__ = signature.replace(parameters=kept)  # type: ignore[attr-defined]
        hints = get_type_hints(template, include_extras=True)
        method.__annotations__ = {
            names[arg]: cls._arg_type(own, names[arg], hint) for arg, hint in hints.items() if arg in names
        }
        method.__annotations__["return"] = hints["return"]
        hint = cls.hints.get(own) or cls._fill(mark.failure_hint)
        method.__tool__ = dataclasses.replace(mark, failure_hint=hint)  # type: ignore[attr-defined]
        method.__template__ = template  # type: ignore[attr-defined]
        return method

    @classmethod
    def _arg_type(cls, tool: str, arg: str, template: Any) -> Any:
        """A parameter's type for the provider: its ``arg_types`` entry for this tool (``tool.arg``), or for the
        parameter in all its tools (``arg``), or the template's."""
        return cls.arg_types.get(f"{tool}.{arg}", cls.arg_types.get(arg, template))


def _untooled(template: Callable[..., Any]) -> Callable[..., Any]:
    """A template tool as a plain method (no tool mark), for a provider that offers it under another name."""

    def method(self: Any, *args: Any, **arguments: Any) -> Any:
        return template(self, *args, **arguments)

    method.__name__ = template.__name__
    method.__doc__ = template.__doc__
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
