"""Tool execution: argument validation against each tool's JSON schema, and the tool boxes that run tools.

A *tool box* is a family's executable tool universe. It creates fresh per-episode state (``new_state``) and
executes one call over that state (``execute``). Families that answer from a database use ``SqliteToolBox``,
whose tools are parameterized SQL queries run on a private in-memory copy of the database.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import json
import math
import sqlite3
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, get_type_hints

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from pydantic import ConfigDict, create_model

from undertow.env_core.model import Scenario, ToolSpec
from undertow.env_core.untrusted import capped

F = TypeVar("F", bound=Callable[..., Any])


class ToolExecutionError(Exception):
    """Raised by a tool implementation for an error the agent should read (bad value, no such row, ...).
    ``error_type`` is the observation's error type (``tool_error`` unless the tool says what kind it is)."""

    def __init__(self, message: str, error_type: str = "tool_error"):
        super().__init__(message)
        self.error_type = error_type


# Limits on values no tool can take, whatever its schema says: a model sends them, so they must come back to it as
# an invalid-arguments observation instead of failing inside a tool (SQLite binds signed 64-bit integers only).
INT_RANGE = (-(2**63), 2**63 - 1)
MAX_DEPTH = 32  # levels of nested arrays / objects below an argument
# characters of one string: far above any real argument (the longest gold argument of the shipped families is a
# 344-character SQL query), low enough that no tool's work on one (a regex, difflib, a LIKE) takes long
MAX_STRING = 4_000
MAX_ITEMS = 100_000  # elements of one array or object
QUOTE_CHARS = 200  # characters of an argument a refusal quotes
MAX_MESSAGE = 2_000  # characters of a tool error or note: what no quotation shortened is cut here
_SCANNED = 100_000  # characters of a message searched for long arguments to quote short
_QUOTATIONS = 64  # long arguments looked for in one message
# SQLite work on model-chosen values is bounded: a statement running longer is interrupted (a tool error), so that
# no call holds the worker for long
QUERY_TIMEOUT_S = 5.0
_PROGRESS_STEPS = 10_000  # SQLite virtual-machine steps between looks at the clock


def _shown(value: int) -> str:
    # str() of an int past 4300 digits raises; a few hundred bits is already plainly too large
    return str(value) if value.bit_length() <= 256 else f"an integer of {value.bit_length()} bits"


def _text_problem(text: str, what: str) -> str | None:
    if len(text) > MAX_STRING:
        return f"{what} of {len(text)} characters is longer than the {MAX_STRING} allowed"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return f"{what} is not valid Unicode text (it holds a lone surrogate)"
    return None


def _path(where: str, key: object) -> str:
    """``where.key``, with lone surrogates escaped so that the message itself can be sent to the model, and a long
    name quoted short."""
    name = capped(str(key).encode("utf-8", "backslashreplace").decode("utf-8"))
    return f"{where}.{name}" if where else name


def _long_strings(value: Any, limit: int) -> set[str]:
    """The strings (and names) in a JSON value longer than ``limit``; iterative, whatever the nesting."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if len(item) > limit:
                found.add(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


def shorten_quotes(message: str, arguments: Any, limit: int = QUOTE_CHARS) -> str:
    """A refusal or a note as the model reads it: every long argument it repeats (as is, or as Python or JSON
    writes it) quoted short, and the whole kept under ``MAX_MESSAGE`` characters, so that a refused 1 MB argument
    does not come back whole."""
    if len(message) <= limit:
        return message
    # bounded work whatever the arguments hold: the head of the message, the longest arguments (a shorter one may
    # be part of a longer one, so these go first)
    total, message = len(message), message[:_SCANNED]
    for text in sorted(_long_strings(arguments, limit), key=len, reverse=True)[:_QUOTATIONS]:
        for form in (text, repr(text)[1:-1], json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]):
            if len(form) > limit and form in message:
                message = message.replace(form, capped(form, limit))
    if len(message) > MAX_MESSAGE or total > _SCANNED:
        message = f"{message[:MAX_MESSAGE]}… ({total if total > _SCANNED else len(message):,} characters)"
    return message


class QueryTimeout(sqlite3.OperationalError):
    """A statement stopped by ``time_limit``."""


@contextlib.contextmanager
def time_limit(conn: sqlite3.Connection, seconds: float | None) -> Iterator[None]:
    """Interrupt a statement of ``conn`` that runs past ``seconds`` (None: no limit), with an error that says so:
    ``QueryTimeout("the query ran past the 5 s time limit and was stopped")``. SQLite releases the
    interpreter lock while it runs, and calls the handler every few thousand steps."""
    if seconds is None:
        yield
        return
    deadline = time.monotonic() + seconds
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), _PROGRESS_STEPS)
    try:
        yield
    except sqlite3.OperationalError as exc:
        if str(exc) != "interrupted":
            raise
        raise QueryTimeout(f"the query ran past the {seconds:g} s time limit and was stopped") from exc
    finally:
        conn.set_progress_handler(None, 0)


def value_problem(arguments: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(where, problem)`` for the first value in ``arguments`` that no tool can take: an integer outside the
    signed 64-bit range, a NaN or infinite float, a string or name that is not valid Unicode or longer than
    ``MAX_STRING``, more than ``MAX_ITEMS`` elements, nesting deeper than ``MAX_DEPTH``, or anything that is not
    a JSON value. ``where`` is the dotted path (``ids.3``). Iterative, so deep nesting cannot exhaust the stack."""
    stack: list[tuple[str, Any, int]] = [("", dict(arguments), -1)]
    while stack:
        where, value, depth = stack.pop()
        if value is None or isinstance(value, bool):
            continue
        if isinstance(value, int):
            if not INT_RANGE[0] <= value <= INT_RANGE[1]:
                return where, f"{_shown(value)} is outside the signed 64-bit integer range"
        elif isinstance(value, float):
            if not math.isfinite(value):
                return where, f"{value!r} is not a finite number"
        elif isinstance(value, str):
            problem = _text_problem(value, "a string")
            if problem is not None:
                return where, problem
        elif isinstance(value, list | dict):
            if depth >= MAX_DEPTH:
                return where, f"values nested deeper than {MAX_DEPTH} levels are not accepted"
            if len(value) > MAX_ITEMS:
                kind = "an array" if isinstance(value, list) else "an object"
                return where, f"{kind} of {len(value)} elements is longer than the {MAX_ITEMS} allowed"
            items = list(value.items() if isinstance(value, dict) else enumerate(value))
            if isinstance(value, dict):
                for key, _ in items:
                    problem = "a name must be a string" if not isinstance(key, str) else _text_problem(key, "a name")
                    if problem is not None:
                        return _path(where, key), problem
            stack.extend((_path(where, k), v, depth + 1) for k, v in reversed(items))
        else:
            return where, f"a {type(value).__name__} is not a JSON value"
    return None


@dataclass(frozen=True)
class ToolOutput:
    """A result plus text the tool "prints" beside it (a hint such as "Did you mean 'Shelley'?")."""

    value: Any
    notes: list[str]


# ---------------------------------------------------------------------------------------------------------------
# The one way to declare a hand-written tool: a typed function marked with @tool
#
#     @tool("read")
#     def get_weather(self, city: Annotated[str, Field(description="the city's name")]) -> dict[str, Any]:
#         """Today's weather in a city. (The first paragraph of the docstring is the tool's description.)"""
#
# ``tool_spec`` turns it into the ToolSpec a model sees: the JSON schema of its parameters comes from the typed
# signature (pydantic), with no unknown arguments allowed. Families whose tools are compiled from data (a SQL
# query per tool) build ToolSpecs directly instead.


@dataclass(frozen=True)
class ToolMark:
    """What ``@tool`` records on a function: its ``kind`` (the family's own word: read / write, navigational /
    functional, a category), an optional hint of what can go wrong with it, an explicit name or description where
    the function's own do not serve, and extra binding fields (what the family's tool box needs to run it)."""

    kind: str
    failure_hint: str = ""
    name: str | None = None
    description: str | None = None
    binding: Mapping[str, Any] = field(default_factory=dict)


def tool(
    kind: str, failure_hint: str = "", *, name: str | None = None, description: str | None = None, **binding: Any
) -> Callable[[F], F]:
    """Mark a function (or a method) as a tool; see :class:`ToolMark` for the fields."""

    def mark(function: F) -> F:
        function.__tool__ = ToolMark(kind, failure_hint, name, description, binding)  # type: ignore[attr-defined]
        return function

    return mark


def tool_mark(function: object) -> ToolMark | None:
    """The mark ``@tool`` left on a function, or None."""
    found = getattr(function, "__tool__", None)
    return found if isinstance(found, ToolMark) else None


def marked_tools(owner: type | Iterable[Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """The marked functions of a class (its methods, inherited ones included) or of a list of functions, by name."""
    members: list[Callable[..., Any]] = (
        [member for _, member in inspect.getmembers(owner, inspect.isfunction)]
        if isinstance(owner, type)
        else list(owner)
    )
    return {member.__name__: member for member in members if tool_mark(member) is not None}


def parameters_schema(function: Callable[..., Any], *, skip_first: bool = False) -> dict[str, Any]:
    """The JSON schema of a function's parameters, from their annotations (``Annotated[type, Field(...)]`` gives
    descriptions and bounds) and defaults; ``skip_first`` leaves out ``self``. No title keys; no extra arguments."""
    hints = get_type_hints(function, include_extras=True)
    fields: dict[str, Any] = {}
    parameters = list(inspect.signature(function).parameters.values())
    for parameter in parameters[1:] if skip_first else parameters:
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[parameter.name] = (hints[parameter.name], default)
    model = create_model(f"{function.__qualname__}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    schema: dict[str, Any] = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    schema["additionalProperties"] = False
    return schema


def first_paragraph(function: Callable[..., Any]) -> str:
    """The first paragraph of a function's docstring, as one line."""
    return " ".join((inspect.getdoc(function) or "").split("\n\n")[0].split())


def tool_spec(
    function: Callable[..., Any],
    *,
    name: str | None = None,
    binding: Mapping[str, Any] | None = None,
    skip_first: bool = False,
) -> ToolSpec:
    """The ToolSpec of a marked function: its mark's (or the given, or the function's) name, its mark's description
    or its docstring's first paragraph, the schema of its typed parameters, and a binding of the mark's kind, its
    failure hint when it has one, the mark's binding fields and ``binding``."""
    mark = tool_mark(function)
    if mark is None:
        raise TypeError(f"{function.__qualname__} is not marked with @tool")
    fields: dict[str, Any] = {"kind": mark.kind, **({"failure_hint": mark.failure_hint} if mark.failure_hint else {})}
    return ToolSpec(
        name=name or mark.name or function.__name__,
        description=" ".join(mark.description.split()) if mark.description is not None else first_paragraph(function),
        parameters=parameters_schema(function, skip_first=skip_first),
        binding={**fields, **mark.binding, **(binding or {})},
    )


class ToolBox(ABC):
    """A family's tools plus the code that runs them."""

    def __init__(self, specs: Iterable[ToolSpec]):
        self.specs: dict[str, ToolSpec] = {}
        for spec in specs:
            if spec.name in self.specs:
                raise ValueError(f"duplicate tool name '{spec.name}'")
            self.specs[spec.name] = spec
        self._validators: dict[str, Draft202012Validator] = {}

    @abstractmethod
    def new_state(self) -> Any:
        """Fresh state for one episode: no episode can see another's writes."""

    @abstractmethod
    def execute(self, state: Any, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        """Run one validated call and return its result (or a ``ToolOutput`` with notes). Raise
        ``ToolExecutionError`` for errors the agent should see."""

    def close_state(self, state: Any) -> None:  # noqa: B027 - optional hook
        """Release per-episode resources."""

    def start(self, state: Any, scenario: Scenario) -> None:  # noqa: B027 - optional hook
        """Prepare a fresh state for one scenario before the agent acts: a hidden set-up step the agent never sees
        (Live API-Bench joins a question's tables into its starting table this way)."""

    def episode_spec(self, spec: ToolSpec, scenario: Scenario) -> ToolSpec:
        """The tool as one scenario's episode shows and validates it; by default the universe's spec. A tool box
        whose argument choices depend on the scenario narrows them here (an enum of the columns its data has)."""
        return spec

    def answer_result(self, state: Any, answer: str) -> Any:
        """What a final answer denotes in the episode's state, for the scorer (``Trajectory.answer_result``): a SQL
        query's rows run on the episode's data, the entities a named variable holds; None (the default) when the
        answer is read as text only. Model-written: a tool box that runs it does so as it runs a tool call."""
        return None

    def valid_actions(self, state: Any) -> list[tuple[str, dict[str, Any]]] | None:
        """Every call the environment's rules allow on ``state`` now, as ``(tool, arguments)`` pairs, or None (the
        default) when a tool box cannot list them. A tool box that can (the knowledge-base environment, whose calls
        take only variables, entities and schema items the episode has already seen) lets an agent protocol have the
        model pick its next action from a finite list instead of writing it: decoupled generation (FUXI §3.2,
        Figure 2(b)), where a thought is written first and the action matching it is chosen among these candidates."""
        return None

    def fork_state(self, state: Any) -> Any:
        """A throwaway copy of an episode's state: a ``silent_noop`` fault runs the call on it, so the agent sees
        a genuine-looking success while the episode's own state stays unchanged. A deep copy by default; a tool
        box whose state holds handles (connections, files) overrides this."""
        return copy.deepcopy(state)

    def snapshot(self, state: Any, age_days: int) -> Any | None:
        """The episode's world as it was ``age_days`` ago, for a ``stale`` fault to read from: the environment runs
        the faulted call on it (the episode's state is not touched), so the agent reads older values, and the fault
        adds its staleness signals. None (the default) when a tool box keeps no history: then ``stale`` serves
        today's result with its signals only. A state returned here is the caller's: it is closed after the call
        (``close_state``)."""
        return None

    def argument_error(self, spec: ToolSpec, arguments: dict[str, Any]) -> str | None:
        """A readable message if ``arguments`` hold a value no tool can take (see ``value_problem``) or do not
        satisfy the tool's schema, else None."""
        problem = value_problem(arguments)
        if problem is not None:
            where, message = problem
            return f"Invalid arguments for {spec.name}: {message} (at '{where}')"
        # a scenario may narrow a tool's schema (episode_spec): such a spec is validated against its own schema
        key = spec.name if self.specs.get(spec.name) is spec else f"{spec.name}\x00{json.dumps(spec.parameters)}"
        validator = self._validators.get(key)
        if validator is None:
            if len(self._validators) > 4096:  # narrowed schemas vary by scenario: keep the cache bounded
                self._validators.clear()
            validator = self._validators[key] = Draft202012Validator(spec.parameters)
        error = best_match(validator.iter_errors(arguments))
        if error is None:
            return None
        where = ".".join(capped(str(p)) for p in error.absolute_path)
        message = error.message
        # a value none of an anyOf's forms takes: name the allowed values rather than "any of the given schemas"
        listed = [e for e in error.context or () if e.validator == "enum"] if error.validator == "anyOf" else []
        if listed:
            message = f"{listed[0].message} (nor any other form this argument takes)"
        # jsonschema quotes the offending value whole: a long one comes back short
        text = f"Invalid arguments for {spec.name}: {message}" + (f" (at '{where}')" if where else "")
        return shorten_quotes(text, arguments)


MAIN = "main"  # the database of a single-database tool box


def fetch_rows(conn: sqlite3.Connection, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Run SQL and return its rows as records (column name -> value)."""
    cursor = conn.execute(sql, params or {})
    columns = [d[0] for d in cursor.description or ()]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


_NO_FILES = (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH)


def _deny_files(action: int, *_: object) -> int:
    # ATTACH opens (and creates) a file by a path the query names: query_only would still let it make the file
    return sqlite3.SQLITE_DENY if action in _NO_FILES else sqlite3.SQLITE_OK


def model_query(conn: sqlite3.Connection, sql: str, timeout_s: float, max_rows: int) -> dict[str, Any]:
    """Run a model-written query on a read-only connection (``PRAGMA query_only`` set by its owner): its rows as
    ``{"rows": [[...], ...]}``, or ``{"error": ...}`` with SQLite's message — for a query that fails, runs past
    ``timeout_s``, returns more than ``max_rows`` rows, or names a file (ATTACH, refused here: nothing the model
    writes reaches the file system)."""
    if not sql.strip():
        return {"error": "no SQL query in the answer"}
    conn.set_authorizer(_deny_files)
    try:
        with time_limit(conn, timeout_s):
            rows = conn.execute(sql).fetchmany(max_rows + 1)
    except (sqlite3.Error, ValueError, OverflowError) as exc:  # ValueError: two statements, a NUL character
        return {"error": str(exc)}
    finally:
        conn.set_authorizer(None)
    if len(rows) > max_rows:
        return {"error": f"the query returns more than {max_rows:,} rows"}
    return {"rows": [list(row) for row in rows]}


Database = sqlite3.Connection | str | Path


def memory_copy(database: Database) -> sqlite3.Connection:
    """An in-memory copy of a database given as a connection or a file path (opened read-only)."""
    memory = sqlite3.connect(":memory:", check_same_thread=False)
    if isinstance(database, sqlite3.Connection):
        database.backup(memory)
        return memory
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as disk:
            disk.backup(memory)
    except sqlite3.DatabaseError as exc:  # name the file: the caller may load many
        raise sqlite3.DatabaseError(f"{database}: {exc}") from exc
    return memory


class EpisodeDatabases:
    """One episode's private database copies, made on first use (an episode touches one database of many)."""

    def __init__(self, sources: Mapping[str, sqlite3.Connection]):
        self._sources = sources
        self._copies: dict[str, sqlite3.Connection] = {}

    def connection(self, name: str = MAIN) -> sqlite3.Connection:
        if name not in self._copies:
            copy = sqlite3.connect(":memory:", check_same_thread=False)
            self._sources[name].backup(copy)
            self._copies[name] = copy
        return self._copies[name]

    def fork(self) -> EpisodeDatabases:
        """A private copy of the databases as they are now (the episode's writes included)."""
        forked = EpisodeDatabases(self._sources)
        for name, conn in self._copies.items():
            copy_ = sqlite3.connect(":memory:", check_same_thread=False)
            conn.backup(copy_)
            forked._copies[name] = copy_
        return forked

    def close(self) -> None:
        for conn in self._copies.values():
            conn.close()
        self._copies.clear()


class SqliteToolBox(ToolBox):
    """Tools that are parameterized SQLite queries over one or more databases.

    Each spec's ``binding`` holds ``sql`` with named placeholders (``:name``) and, with several databases, the
    ``database`` it runs on. List arguments are passed as JSON text, so a query reads them with
    ``json_each(:name)`` and stays fully parameterized. Databases are loaded into memory once; each episode gets
    its own copies, so writes never leak between episodes.
    """

    def __init__(
        self,
        specs: Iterable[ToolSpec],
        databases: Mapping[str, Database] | Database,
        *,
        timeout_s: float | None = QUERY_TIMEOUT_S,
    ):
        super().__init__(specs)
        self.timeout_s = timeout_s
        if not isinstance(databases, Mapping):
            databases = {MAIN: databases}
        for spec in self.specs.values():
            if "sql" not in spec.binding:
                raise ValueError(f"tool '{spec.name}' has no binding.sql")
            if spec.binding.get("database", MAIN) not in databases:
                raise ValueError(f"tool '{spec.name}' runs on unknown database '{spec.binding.get('database', MAIN)}'")
        self.sources = {name: memory_copy(db) for name, db in sorted(databases.items())}

    def new_state(self) -> EpisodeDatabases:
        return EpisodeDatabases(self.sources)

    def close_state(self, state: EpisodeDatabases) -> None:
        state.close()

    def fork_state(self, state: EpisodeDatabases) -> EpisodeDatabases:
        return state.fork()

    def execute(self, state: EpisodeDatabases, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        return self.run_sql(state.connection(spec.binding.get("database", MAIN)), spec, arguments)

    def run_sql(self, conn: sqlite3.Connection, spec: ToolSpec, arguments: dict[str, Any]) -> list[dict[str, Any]]:
        try:
            params = {k: json.dumps(v) if isinstance(v, list) else v for k, v in arguments.items()}
            for name in spec.parameters.get("properties", {}):
                params.setdefault(name, None)
            with time_limit(conn, self.timeout_s):
                return fetch_rows(conn, spec.binding["sql"], params)
        # the arguments are the model's: one SQLite cannot bind (an int past 64 bits: OverflowError; a lone
        # surrogate: UnicodeEncodeError, a ValueError) is an error the model reads, like a failing query
        except (sqlite3.Error, OverflowError, ValueError) as exc:
            raise ToolExecutionError(f"{spec.name} failed: {exc}") from exc

    def query(self, sql: str, params: dict[str, Any] | None = None, database: str = MAIN) -> list[dict[str, Any]]:
        """Run read-only SQL on a pristine database (used to compute gold answers)."""
        return fetch_rows(self.sources[database], sql, params)

    def database_bytes(self, database: str = MAIN) -> bytes:
        return self.sources[database].serialize()
