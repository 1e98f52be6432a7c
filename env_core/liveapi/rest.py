"""The live REST server behind Live API-Bench's REST formulation: REST tools are GET endpoints of a FastAPI app
(``rest_app``) served by uvicorn in a child process (``RestServer``), so the tool box calls them over HTTP and
argument errors come back as a real API's HTTP 422 (``readable_422`` puts them in plain words). ``render_sql`` is the
SQL a call runs (a column parameter, validated against its enum, written in as a quoted identifier), the same for
the server's routes and for ``endpoint_rows``, which runs an endpoint without the server (the build's check).

Run as ``python -m undertow.env_core.liveapi.rest serve ...`` this module is that child process.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import httpx

from undertow.env_core.errors import DataError, InfraError
from undertow.env_core.liveapi.limits import REST_TIMEOUT_S
from undertow.env_core.liveapi.operations import jsonable
from undertow.env_core.model import ToolSpec
from undertow.env_core.tools import fetch_rows, memory_copy, time_limit

if TYPE_CHECKING:  # imported where used: the tool box imports this module, FastAPI runs only in the server process
    from fastapi import FastAPI


HOST = "127.0.0.2"  # a loopback address of its own, apart from 127.0.0.1 where test servers and endpoints listen
START_TIMEOUT = 30.0
REQUEST_TIMEOUT = 30.0
HEALTH_PATH = "/_health"
_PYTHON_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}


class Databases:
    """Read-only in-memory copies of the databases, loaded on first use, one lock each (uvicorn runs sync routes
    in a thread pool)."""

    def __init__(self, paths: Mapping[str, Path]):
        self.paths = dict(paths)
        self._connections: dict[str, tuple[sqlite3.Connection, threading.Lock]] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> tuple[sqlite3.Connection, threading.Lock]:
        """The database's connection and its lock, copied into memory on first use; DataError for an unknown name."""
        with self._lock:
            if name not in self._connections:
                if name not in self.paths:
                    raise DataError(f"unknown database '{name}'", hint=f"known: {', '.join(sorted(self.paths))}")
                conn = memory_copy(self.paths[name])
                conn.execute("PRAGMA query_only = ON")  # nothing writes: make sure nothing can
                self._connections[name] = (conn, threading.Lock())
            return self._connections[name]

    def query(
        self, name: str, sql: str, params: Mapping[str, Any] | None = None, timeout_s: float | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """(column names, rows) of ``sql`` run with ``params`` on the database, for ``timeout_s`` at most."""
        conn, lock = self.get(name)
        with lock, time_limit(conn, timeout_s):
            cursor = conn.execute(sql, dict(params or {}))
            return [d[0] for d in cursor.description or ()], cursor.fetchall()

    def close(self) -> None:
        """Close every connection opened so far."""
        with self._lock:
            for conn, _ in self._connections.values():
                conn.close()
            self._connections.clear()


# a quoted string or name (skipped: a placeholder inside one is text), or a :name placeholder
_SQL_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`[^`]*`|\[[^\]]*\]|:([A-Za-z_][A-Za-z0-9_]*)")


def render_sql(binding: Mapping[str, Any], arguments: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(SQL, bound values) that a REST endpoint's call runs: a value parameter is bound as an SQL parameter; a column
    parameter (its ``identifiers``) is no value SQLite can bind, so its placeholder is replaced by the quoted
    identifier its chosen entry maps to. Only the binding's own identifiers ever reach the SQL text: a choice
    outside them, a missing argument or an unknown one is a ValueError (the server refuses them first, HTTP 422)."""
    params = binding.get("params", [])
    known = {p["name"] for p in params}
    unknown = sorted(set(arguments) - known)
    if unknown:
        raise ValueError(f"unknown argument '{unknown[0]}' (the parameters are: {', '.join(sorted(known))})")
    chosen: dict[str, str] = {}
    values: dict[str, Any] = {}
    for param in params:
        name = param["name"]
        if name not in arguments:
            raise ValueError(f"missing argument '{name}'")
        identifiers = param.get("identifiers")
        if identifiers is None:
            values[name] = arguments[name]
            continue
        value = arguments[name]
        if not isinstance(value, str) or value not in identifiers:
            raise ValueError(f"{name} must be one of {', '.join(identifiers)}, not {json.dumps(value)[:100]}")
        chosen[name] = identifiers[value]

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        return chosen[name] if name is not None and name in chosen else match.group(0)

    sql = _SQL_TOKENS.sub(substitute, binding["sql"]) if chosen else binding["sql"]
    return sql, values


def endpoint_rows(conn: sqlite3.Connection, spec: ToolSpec, arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows a REST endpoint returns for ``arguments``, run on ``conn`` (a read-only connection to its database)
    as its server runs them: what the build compares with the gold SQL's rows."""
    sql, values = render_sql(spec.binding, arguments)
    return fetch_rows(conn, sql, values)


def _annotation(param: Mapping[str, Any]) -> Any:
    """The Python type FastAPI validates a query parameter against: a column parameter's enum as a Literal."""
    enum = param.get("enum")
    if enum:
        return Literal[tuple(enum)]
    return _PYTHON_TYPES[param["type"]]


def _route(spec: ToolSpec, databases: Databases, timeout_s: float) -> Callable[..., Any]:
    from fastapi import Query
    from fastapi.responses import JSONResponse

    params = spec.binding.get("params", [])
    database = spec.binding["database"]
    names = [p["name"] for p in params]

    def endpoint(**arguments: Any) -> Any:
        values = {name: arguments[f"p{i}"] for i, name in enumerate(names)}
        try:
            sql, bound = render_sql(spec.binding, values)
            columns, rows = databases.query(database, sql, bound, timeout_s)
        except (sqlite3.Error, OverflowError, ValueError) as exc:
            return JSONResponse({"detail": f"query failed: {exc}"}, status_code=500)
        return JSONResponse([dict(zip(columns, jsonable(list(row)), strict=True)) for row in rows])

    # FastAPI reads the route's query parameters from its signature; the real names travel as aliases, so a name
    # that is no Python identifier (a keyword such as "class") still works
    endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                f"p{i}",
                inspect.Parameter.KEYWORD_ONLY,
                default=Query(..., alias=p["name"], description=p.get("description"), title=p.get("title")),
                annotation=_annotation(p),
            )
            for i, p in enumerate(params)
        ]
    )
    endpoint.__name__ = spec.name
    return endpoint


def rest_app(specs: Sequence[ToolSpec], databases: Mapping[str, Path], timeout_s: float = REST_TIMEOUT_S) -> FastAPI:
    """A FastAPI app with one GET route per REST spec (``binding.path``): typed, required query parameters, the
    spec's SQL run with them (for ``timeout_s`` at most) on a read-only copy of its database, the rows as records."""
    from fastapi import FastAPI

    app = FastAPI(
        title="Live API-Bench REST endpoints",
        version="1.0.0",
        description="Read-only endpoints over the question databases, one per distinct query.",
    )
    dbs = Databases(databases)
    paths: dict[str, str] = {}
    rows_schema = {"type": "array", "items": {"type": "object", "additionalProperties": True}}
    for spec in specs:
        if spec.binding.get("kind") != "rest":
            continue
        path = spec.binding["path"]
        if path in paths:  # a second route on a path would never be reached
            raise ValueError(f"tools '{paths[path]}' and '{spec.name}' share the path {path}")
        if spec.binding["database"] not in databases:
            raise ValueError(f"tool '{spec.name}' runs on unknown database '{spec.binding['database']}'")
        paths[path] = spec.name
        app.add_api_route(
            path,
            _route(spec, dbs, timeout_s),
            methods=["GET"],
            name=spec.name,
            operation_id=spec.name,
            summary=spec.description,
            response_model=None,
            responses={
                200: {
                    "description": "The rows, one record each",
                    "content": {"application/json": {"schema": rows_schema}},
                }
            },
        )

    def health() -> dict[str, bool]:
        return {"ok": True}

    app.add_api_route(HEALTH_PATH, health, methods=["GET"], include_in_schema=False)
    app.state.databases = dbs
    return app


def _stop_process(process: subprocess.Popen[bytes], folder: str) -> None:
    """Stop the server process (only the one this module started, by its handle) and remove its files."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
    shutil.rmtree(folder, ignore_errors=True)


class RestServer:
    """The REST app served by uvicorn in a child process on ``HOST`` at a free port.

    The parent binds the listening socket and hands it to the child, so the port cannot be taken in between. The
    child exits when the parent does (it watches its parent), and a finalizer stops it at interpreter exit."""

    def __init__(
        self,
        specs: Sequence[ToolSpec],
        databases: Mapping[str, Path],
        *,
        host: str = HOST,
        timeout: float = START_TIMEOUT,
        query_timeout_s: float = REST_TIMEOUT_S,
    ):
        self.specs = [s for s in specs if s.binding.get("kind") == "rest"]
        self.databases = {name: Path(path) for name, path in databases.items()}
        self.host = host
        self.timeout, self.query_timeout_s = timeout, query_timeout_s
        self.process: subprocess.Popen[bytes] | None = None
        self._url: str | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None

    @property
    def url(self) -> str:
        """The base URL (``http://127.0.0.2:PORT``); the server must be running."""
        if self._url is None:
            raise RuntimeError("the REST server is not running: call start() first")
        return self._url

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> str:
        """Start the server and wait until it answers; returns the base URL."""
        if self.running():
            return self.url
        folder = tempfile.mkdtemp(prefix="liveapi-rest-")
        specs_file, databases_file, log_file = (Path(folder) / n for n in ("specs.json", "databases.json", "log.txt"))
        specs_file.write_text(json.dumps([s.model_dump(mode="json") for s in self.specs]))
        databases_file.write_text(json.dumps({name: str(path) for name, path in self.databases.items()}))
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, 0))
            sock.listen(1024)
            port = sock.getsockname()[1]
            root = str(Path(__file__).resolve().parents[2])  # the folder holding env_core
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
            command = [
                sys.executable, "-m", "undertow.env_core.liveapi.rest", "serve",
                "--specs", str(specs_file), "--databases", str(databases_file),
                "--fd", str(sock.fileno()), "--parent", str(os.getpid()), "--timeout", str(self.query_timeout_s),
            ]  # fmt: skip
            with log_file.open("wb") as log:
                process = subprocess.Popen(
                    command, pass_fds=[sock.fileno()], stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env
                )
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        finally:
            sock.close()  # the child holds its own copy
        self.process = process
        self._finalizer = weakref.finalize(self, _stop_process, process, folder)
        self._url = f"http://{self.host}:{port}"
        self._wait(log_file)
        return self._url

    def _wait(self, log_file: Path) -> None:
        deadline = time.monotonic() + self.timeout
        assert self.process is not None
        with httpx.Client(timeout=1.0) as client:
            while True:
                code = self.process.poll()
                if code is not None:
                    log = log_file.read_text(errors="replace")[-2000:] if log_file.exists() else ""
                    self.stop()
                    raise InfraError(f"the REST server exited with status {code} before answering", hint=log.strip())
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(self.url + HEALTH_PATH).status_code == 200:
                        return
                if time.monotonic() > deadline:
                    self.stop()
                    raise InfraError(f"the REST server did not answer within {self.timeout:g} s")
                time.sleep(0.02)

    def stop(self) -> None:
        """Stop the server process and wait for it."""
        if self._finalizer is not None:
            self._finalizer()  # runs once: a later call or interpreter exit does nothing
        self._finalizer = None
        self._url = None


def readable_422(body: Any) -> str:
    """FastAPI's validation ``detail`` in plain words: which query parameter, what is wrong."""
    detail = body.get("detail") if isinstance(body, Mapping) else None
    if not isinstance(detail, list):
        return json.dumps(body)[:500]
    parts = []
    for item in detail:
        if not isinstance(item, Mapping):
            continue
        loc = [str(x) for x in item.get("loc", [])]
        where = f"query parameter '{loc[-1]}'" if len(loc) >= 2 and loc[0] == "query" else ".".join(loc) or "request"
        if item.get("type") == "missing":
            parts.append(f"{where} is required but was not given")
            continue
        message = str(item.get("msg", "is invalid"))
        got = f" (got {json.dumps(item['input'])})" if "input" in item else ""
        parts.append(f"{where}: {message[:1].lower()}{message[1:]}{got}")
    return "; ".join(parts) or json.dumps(body)[:500]


# ---------------------------------------------------------------------------------------------------------------
# The server process


def _watch_parent(parent: int) -> None:
    # a parent killed outright runs no finalizer: the child notices it is orphaned and leaves
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def serve(argv: Sequence[str] | None = None) -> int:
    """``serve --specs FILE --databases FILE --fd N --parent PID``: serve the REST app on an inherited socket."""
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m undertow.env_core.liveapi.rest serve")
    parser.add_argument("--specs", required=True, type=Path)
    parser.add_argument("--databases", required=True, type=Path)
    parser.add_argument("--fd", required=True, type=int)
    parser.add_argument("--parent", required=True, type=int)
    parser.add_argument("--timeout", type=float, default=REST_TIMEOUT_S)  # seconds a query may run
    options = parser.parse_args(argv)
    specs = [ToolSpec.model_validate(s) for s in json.loads(options.specs.read_text())]
    databases = {name: Path(path) for name, path in json.loads(options.databases.read_text()).items()}
    app = rest_app(specs, databases, options.timeout)
    threading.Thread(target=_watch_parent, args=(options.parent,), daemon=True).start()
    sock = socket.socket(fileno=options.fd)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] != ["serve"]:
        sys.exit(
            "usage: python -m undertow.env_core.liveapi.rest serve --specs FILE --databases FILE --fd N --parent PID"
        )
    sys.exit(serve(sys.argv[2:]))
