"""Retrieval evaluation: recall@k of each scenario's solution functions when the query is the task text, per
search mode (:func:`retrieval_eval`, what ``undertow retrieval-eval`` prints)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from undertow.cluster.api.hooks import is_user_error
from undertow.cluster.api.suites import suite_reference
from undertow.cluster.config import ConfigError
from undertow.env_core.errors import close_match, did_you_mean
from undertow.env_core.scenarios import validation_problems
from undertow.env_core.suites import load_ref, suite_ref

RETRIEVAL_MODES = ("bm25", "dense", "hybrid", "lexical")


@dataclass(frozen=True)
class RetrievalEval:
    """Recall@k per search mode. ``modes[mode]``: ``scenarios`` counted, ``at[k]`` with ``recall``, ``hit`` and
    ``direct`` (see :func:`undertow.retrieval.evaluate.recall_at_k`), and ``build_s``, the seconds its index took."""

    suite: str
    tools: int
    scenarios: int
    model: str
    index: str
    cutoffs: list[int]
    modes: dict[str, dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        """What ``undertow retrieval-eval --format json`` prints."""
        return {"tools": self.tools, "model": self.model, "index": self.index, "modes": self.modes}


def _cutoffs(ks: str | Sequence[int]) -> list[int]:
    items = [k.strip() for k in ks.split(",") if k.strip()] if isinstance(ks, str) else list(ks)
    bad = [str(k) for k in items if not str(k).isdigit() or int(k) < 1]
    if bad or not items:
        shown = ks if isinstance(ks, str) else ",".join(str(k) for k in ks)
        wrong = f" (not positive integers: {', '.join(repr(b) for b in bad)})" if bad else ""
        raise ConfigError(f"expected comma-separated positive integers, e.g. 1,3,9, got '{shown}'{wrong}", field="--k")
    return sorted({int(k) for k in items})


def _modes(modes: str | Sequence[str]) -> list[str]:
    chosen = [m.strip() for m in (modes.split(",") if isinstance(modes, str) else modes) if m.strip()]
    for mode in chosen:
        if mode not in RETRIEVAL_MODES:
            raise ConfigError(
                f"unknown mode '{mode}'; expected some of {', '.join(RETRIEVAL_MODES)}",
                field="--modes",
                hint=close_match(mode, RETRIEVAL_MODES),
            )
    if not chosen:
        raise ConfigError(f"no mode given; expected some of {', '.join(RETRIEVAL_MODES)}", field="--modes")
    return chosen


EMBEDDING_MODES = ("dense", "hybrid")  # the modes that load the sentence-transformers model


def _cached_hub_models() -> list[str]:
    """Model ids in the local Hugging Face cache (what can load without a download)."""
    try:
        from huggingface_hub import scan_cache_dir

        return sorted(r.repo_id for r in scan_cache_dir().repos if r.repo_type == "model")
    except Exception:  # only feeds a hint: a missing or unreadable cache lists nothing
        return []


def _check_embedding_model(model: str) -> None:
    """Refuse, before any work, a model that could not load: nothing is downloaded at run time, so it must be the
    packaged default, a folder, or a model id already in the local Hugging Face cache."""
    from undertow.retrieval.embedder import DEFAULT_MODEL, resolve_model

    source, _ = resolve_model(model)
    if Path(source).exists():
        return
    cached = _cached_hub_models()
    if source in cached or f"sentence-transformers/{source}" in cached:
        return
    known = [DEFAULT_MODEL, *cached, *(c.removeprefix("sentence-transformers/") for c in cached)]
    raise ConfigError(
        f"no sentence-transformers model '{model}' here: it is not the packaged {DEFAULT_MODEL}, a folder, or in the "
        "local Hugging Face cache (nothing is downloaded)",
        field="--model",
        hint=did_you_mean(model, known),
    )


def retrieval_eval(
    suite: str,
    fields: Sequence[str] | None = None,
    *,
    modes: str | Sequence[str] = RETRIEVAL_MODES,
    ks: str | Sequence[int] = (1, 3, 9),
    model: str = "all-MiniLM-L6-v2",
    device: str = "cpu",
    index: str = "flat",
) -> RetrievalEval:
    """Recall@k of each scenario's solution functions when the query is the task text, per search mode
    (``modes`` and ``ks`` as lists or comma-separated text). ``suite``: a built suite folder, or a family name
    with its ``fields``. Every option is checked (and the model found) before any index is built."""
    import re

    from undertow.env_core.errors import describe
    from undertow.env_core.search import LexicalSearch
    from undertow.retrieval.evaluate import recall_at_k
    from undertow.retrieval.index import RetrievalConfig, ToolIndex

    cutoffs = _cutoffs(ks)
    chosen = _modes(modes)
    if not re.fullmatch(r"cpu|cuda(:\d+)?|mps", device):
        raise ConfigError(f"expected cpu, cuda, cuda:N or mps, got '{device}'", field="--device")
    try:
        config = RetrievalConfig.model_validate({"model": model, "device": device, "index": index})
    except ValidationError as exc:  # the options are the config's fields: name them as options
        raise ConfigError("; ".join(f"--{p}" for p in validation_problems(exc))) from None
    embedding = any(mode in EMBEDDING_MODES for mode in chosen)
    if embedding:
        _check_embedding_model(model)
    try:
        ref = suite_ref(suite_reference(suite, fields), base=Path.cwd())
    except ValidationError as exc:
        raise ConfigError("; ".join(validation_problems(exc)), field="--suite") from None
    from undertow.workers.docgen import document_suite

    try:
        loaded = load_ref(ref, document_suite)  # a suite with docs: model is documented when it is built
    except ValueError as exc:  # a suite field phrased by the family
        if is_user_error(exc):
            raise
        raise ConfigError(str(exc), field="--suite") from None
    from undertow.retrieval.embedder import Embedder

    specs = list(loaded.toolbox.specs.values())
    embedder = Embedder(config.model, config.device, config.batch_size)  # one model load for every mode
    if embedding:
        try:
            embedder.dimension  # noqa: B018 - loads the model now, so that a bad one stops before any index
        except (OSError, ValueError, RuntimeError) as exc:
            raise ConfigError(f"cannot load model '{model}' on {device}: {describe(exc)}", field="--model") from None
    rows: dict[str, dict[str, Any]] = {}
    for mode in chosen:
        started = time.perf_counter()
        searcher = LexicalSearch(specs) if mode == "lexical" else ToolIndex(specs, mode, config, embedder)  # type: ignore[arg-type]
        build_s = time.perf_counter() - started
        rows[mode] = {**recall_at_k(loaded.scenarios, searcher, cutoffs), "build_s": round(build_s, 3)}
    return RetrievalEval(ref.label, len(specs), len(loaded.scenarios), model, index, cutoffs, rows)
