"""A scripted OpenAI-compatible HTTP server for tests: standard library only, real HTTP on 127.0.0.1.

It serves ``GET /v1/models`` and ``POST /v1/chat/completions``. Chat replies come from a *script*: a list of
``Reply`` objects served in order, or a callable from the request JSON to a ``Reply`` (for episodes that run
concurrently). Every request is recorded on arrival, so tests can check the tools and messages the client sent.
"""

from __future__ import annotations

import itertools
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"
_call_ids = itertools.count(1)


@dataclass
class Reply:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # wait this long before answering (to provoke client timeouts)


@dataclass
class Exchange:
    method: str
    path: str
    headers: dict[str, str]  # names lowercased
    body: Any
    reply: Reply | None = None  # None while the reply is being prepared


def completion(message: dict[str, Any], finish_reason: str, usage: tuple[int, int] = (10, 5)) -> Reply:
    """A 200 chat completion with one choice and token usage, shaped like the OpenAI API's (and vLLM's)."""
    prompt, produced = usage
    choice = {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
    usage_body = {"prompt_tokens": prompt, "completion_tokens": produced, "total_tokens": prompt + produced}
    body = {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 1700000000, "model": "scripted"}
    return Reply(200, body | {"choices": [choice], "usage": usage_body})


def tool_calls(*calls: tuple[str, Any], ids: list[str] | None = None, usage: tuple[int, int] = (10, 5)) -> Reply:
    """Native tool calls, each (name, arguments); arguments given as a str are sent verbatim (e.g. broken JSON)."""
    ids = ids or [f"call_{next(_call_ids)}" for _ in calls]
    items = [
        {
            "id": i,
            "type": "function",
            "function": {"name": name, "arguments": a if isinstance(a, str) else json.dumps(a)},
        }
        for i, (name, a) in zip(ids, calls, strict=True)
    ]
    return completion({"role": "assistant", "content": None, "tool_calls": items}, "tool_calls", usage)


def answer(text: str | None, finish_reason: str = "stop", usage: tuple[int, int] = (10, 5)) -> Reply:
    return completion({"role": "assistant", "content": text}, finish_reason, usage)


def error(status: int, message: str, code: str | None = None, headers: dict[str, str] | None = None) -> Reply:
    """An HTTP error with the OpenAI error body."""
    return Reply(status, {"error": {"message": message, "type": "error", "param": None, "code": code}}, headers or {})


Script = list[Reply] | Callable[[dict[str, Any]], Reply]


class ScriptedServer:
    def __init__(self, script: Script, models: Reply | None = None):
        self.script = script
        self.models = models or Reply(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        self.exchanges: list[Exchange] = []
        self.problems: list[str] = []  # mistakes of the script itself: the context manager fails the test on them
        self.base_url = ""
        self.lock = threading.Lock()

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the chat completion requests, in order of arrival."""
        return [e.body for e in self.exchanges if e.path == CHAT_PATH]

    def hits(self, path: str = CHAT_PATH) -> int:
        return sum(e.path == path for e in self.exchanges)

    def chat_reply(self, index: int, body: dict[str, Any]) -> Reply:
        try:
            if not isinstance(self.script, list):
                return self.script(body)
            if index < len(self.script):
                return self.script[index]
            raise IndexError(f"request {index + 1} but the script has {len(self.script)} replies")
        except Exception as exc:  # answer without retries, and report it when the server stops
            self.problems.append(f"script failed: {type(exc).__name__}: {exc}")
            return error(500, self.problems[-1], headers={"x-should-retry": "false"})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like real servers
    server: _HTTPServer

    def _respond(self, body: Any) -> None:
        scripted, path = self.server.scripted, self.path.split("?")[0]
        exchange = Exchange(self.command, path, {k.lower(): v for k, v in self.headers.items()}, body)
        with scripted.lock:
            scripted.exchanges.append(exchange)
            index = scripted.hits(CHAT_PATH) - 1
        if (self.command, path) == ("GET", MODELS_PATH):
            exchange.reply = scripted.models
        elif (self.command, path) == ("POST", CHAT_PATH):
            exchange.reply = scripted.chat_reply(index, body)
        else:
            exchange.reply = error(404, f"no route for {self.command} {path}")
        time.sleep(exchange.reply.delay_s)
        data = json.dumps(exchange.reply.body).encode()
        self.send_response(exchange.reply.status)
        for name, value in {"Content-Type": "application/json", **exchange.reply.headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._respond(None)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._respond(json.loads(raw) if raw else None)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    scripted: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that gave up (timeout) is expected
            super().handle_error(request, client_address)


@contextmanager
def scripted_server(script: Script, models: Reply | None = None) -> Iterator[ScriptedServer]:
    """Serve ``script`` on 127.0.0.1 at an ephemeral port from a background thread; ``base_url`` ends in ``/v1``."""
    scripted = ScriptedServer(script, models)
    httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
    httpd.scripted = scripted
    scripted.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield scripted
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
    assert not scripted.problems, "scripted server: " + "; ".join(scripted.problems)


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released): connecting to it is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
