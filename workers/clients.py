"""Model clients: one interface for OpenAI-compatible endpoints and built-in policies.

A client takes the chat so far (OpenAI message dicts) and the current tool list (OpenAI ``tools`` format) and
returns a ``ChatReply``. Endpoint failures that survive the retries raise ``InfraError``: the episode is recorded as
``infra_error`` and never counted as a model failure. Replies the model is responsible for (context overflow)
raise ``ModelError``.
"""

from __future__ import annotations

import json
import os
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field, model_validator

from env_core.model import Strict, ToolCall, Usage


class InfraError(Exception):
    """The endpoint or network failed (after retries): not the model's fault."""


class ModelError(Exception):
    """The model's request or reply was unusable for reasons attributable to the model (e.g. context overflow)."""


@dataclass
class ChatReply:
    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)


class ModelClient(ABC):
    @abstractmethod
    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        """The model's next reply."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""


POLICIES = ("oracle", "naive", "random")


class ModelConfig(Strict):
    """One model of a sweep: a built-in policy, or an OpenAI-compatible endpoint (vLLM, SGLang, a hosted API)."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.:/\-]+$")
    kind: Literal["policy", "openai"] = "policy"
    policy: str | None = Field(default=None, description="for kind 'policy': oracle | naive | random (default: name)")
    base_url: str | None = Field(default=None, description="for kind 'openai': e.g. http://127.0.0.2:8000/v1")
    model: str | None = Field(default=None, description="model id the endpoint serves (default: name)")
    api_key_env: str = "OPENAI_API_KEY"
    sampling: dict[str, Any] = Field(default_factory=lambda: {"temperature": 0.0, "max_tokens": 1024})
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=3, ge=0)
    concurrency: int = Field(default=8, ge=1, description="episodes in flight per worker for this model")

    @model_validator(mode="after")
    def _complete(self) -> ModelConfig:
        if self.kind == "policy":
            policy = self.policy or self.name
            if policy not in POLICIES:
                raise ValueError(f"unknown policy '{policy}'; built-in policies: {', '.join(POLICIES)}")
            self.policy = policy
        elif not self.base_url:
            raise ValueError("a model of kind 'openai' needs base_url (e.g. http://127.0.0.2:8000/v1)")
        return self


class OpenAIChatClient(ModelClient):
    """Chat completions with tools through the ``openai`` async SDK; its retries back off exponentially on
    429, 5xx, timeouts and connection errors."""

    def __init__(self, config: ModelConfig):
        import openai

        self._openai = openai
        self.config = config
        self._client = openai.AsyncOpenAI(
            base_url=config.base_url,
            api_key=os.environ.get(config.api_key_env) or "EMPTY",
            timeout=config.timeout_s,
            max_retries=config.max_retries,
        )

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        openai = self._openai
        request: dict[str, Any] = {"model": self.config.model or self.config.name, "messages": messages}
        if tools:
            request["tools"] = tools
        request.update(self.config.sampling)
        try:
            response = await self._client.chat.completions.create(**request)
        except openai.BadRequestError as exc:
            text = str(exc).lower()
            if "context" in text and ("length" in text or "window" in text or "maximum" in text):
                raise ModelError(f"context overflow: {exc}") from exc
            raise InfraError(f"endpoint rejected the request: {exc}") from exc
        except (openai.APIConnectionError, openai.APIStatusError) as exc:  # timeouts are connection errors
            raise InfraError(f"{type(exc).__name__}: {exc}") from exc
        if not response.choices:
            raise InfraError("endpoint returned no choices")
        choice = response.choices[0]
        message = choice.message
        calls = []
        for i, call in enumerate(message.tool_calls or []):
            function = getattr(call, "function", None)
            if function is None:
                continue
            raw = function.arguments or "{}"
            try:
                arguments = json.loads(raw)
                unparsed = None if isinstance(arguments, dict) else raw
            except json.JSONDecodeError:
                arguments, unparsed = {}, raw
            calls.append(
                ToolCall(
                    id=call.id or f"call_{i}",
                    name=function.name,
                    arguments=arguments if unparsed is None else {},
                    unparsed_arguments=unparsed,
                )
            )
        usage = response.usage
        return ChatReply(
            content=message.content,
            tool_calls=calls,
            finish_reason=choice.finish_reason,
            usage=Usage(
                prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
                cached_tokens=getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", 0) or 0,
            ),
        )

    async def aclose(self) -> None:
        await self._client.close()


async def probe_endpoint(config: ModelConfig) -> str | None:
    """None if the endpoint answers ``GET /models``; otherwise why it is unreachable. Uses the model's own timeout
    and retries, so a probe takes no longer than one request of an episode would."""
    import openai

    client = openai.AsyncOpenAI(
        base_url=config.base_url,
        api_key=os.environ.get(config.api_key_env) or "EMPTY",
        timeout=config.timeout_s,
        max_retries=config.max_retries,
    )
    started = time.perf_counter()
    try:
        await client.models.list()
    except openai.APIStatusError as exc:
        if exc.status_code in (404, 405):  # some servers do not implement /models; they are reachable
            return None
        detail = exc.message.removeprefix(f"Error code: {exc.status_code} - ")
        return f"{config.base_url} answered HTTP {exc.status_code}: {detail}"
    except openai.APIConnectionError as exc:
        return f"{config.base_url} unreachable after {time.perf_counter() - started:.1f} s: {exc}"
    finally:
        await client.close()
    return None
