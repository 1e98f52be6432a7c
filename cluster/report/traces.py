"""The episode a report shows: choosing an instructive one, and laying its trajectory out for the HTML page.

What the model wrote (replies, tool names and arguments, answers, errors) and what tools returned passes
:func:`~undertow.cluster.report.text.printable`: the template escapes HTML, but a bidi override would still
reorder the text a reader sees, a lone surrogate could not be written as UTF-8, and an escape sequence would be
lost from view; each is shown as a visible escape instead."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from undertow.cluster.report.text import printable
from undertow.env_core.model import EpisodeResult, ToolCall, Trajectory


def pick_trace(
    results: Iterable[EpisodeResult],
    load_trajectories: Callable[[str], Iterable[Trajectory]],
) -> Trajectory | None:
    """An instructive episode to show: one where an injected fault fired and the model still solved the task,
    else one where a fault fired, else the first episode that did not end in ``infra_error``, else the first.
    ``load_trajectories(shard_id)`` yields a shard's trajectories; None when no candidate's trajectory is found."""
    results = list(results)
    fired = [r for r in results if r.faults_fired > 0 and r.outcome.judged]
    tiers = [
        [r for r in fired if r.solved],
        fired,
        [r for r in results if r.outcome.judged],
        results,
    ]
    loaded: dict[str, dict[str, Trajectory]] = {}
    tried: set[str] = set()
    for tier in tiers:
        for r in tier:
            if r.episode_id in tried:
                continue
            tried.add(r.episode_id)
            if r.shard_id not in loaded:
                loaded[r.shard_id] = {t.episode_id: t for t in load_trajectories(r.shard_id)}
            if r.episode_id in loaded[r.shard_id]:
                return loaded[r.shard_id][r.episode_id]
    return None


def _json_text(value: Any, limit: int = 4000) -> str:
    """Pretty JSON of a tool result or arguments, cut at ``limit`` characters so one huge result cannot bury the
    page."""
    text = json.dumps(value, indent=1, ensure_ascii=False, default=str)
    return printable(text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)")


def _text(value: str | None) -> str | None:
    return None if value is None else printable(value)


def _arguments(call: ToolCall) -> str:
    return printable(call.unparsed_arguments) if call.unparsed_arguments else _json_text(call.arguments)


def trace_view(trace: Trajectory) -> dict[str, Any]:
    """The trajectory as the template shows it: turns with their steps, tool calls, observations and fired faults."""
    steps_by_turn: dict[int, list[dict[str, Any]]] = {}
    for step in trace.steps:
        obs = step.observation
        action = step.action
        item: dict[str, Any] = {
            "kind": action.kind,
            "content": _text(action.content),
            "call": None,
            "observation": None,
        }
        if action.tool_call is not None:
            item["call"] = {"name": printable(action.tool_call.name), "arguments": _arguments(action.tool_call)}
        if obs is not None:
            item["observation"] = {
                "tool": printable(obs.tool),
                "ok": obs.ok,
                "body": _json_text(obs.result) if obs.ok else None,
                "error": None if obs.error is None else printable(f"{obs.error.type}: {obs.error.message}"),
                "fault": None if obs.fault is None else obs.fault.kind.value,
                "fault_detail": None if obs.fault is None else _text(obs.fault.detail),
                "disclosed": obs.disclosed,
                "notes": [printable(note) for note in obs.notes],
                "latency_ms": f"{obs.latency_ms:.1f}",
            }
        steps_by_turn.setdefault(step.turn, []).append(item)
    stepped = {s.action.tool_call.id for s in trace.steps if s.action.tool_call is not None}
    turns = [
        {
            "index": turn.index,
            "content": _text(turn.content),
            # Calls the model made that never became a step (e.g. past a per-turn limit): shown, not dropped.
            "tool_calls": [(printable(c.name), _arguments(c)) for c in turn.tool_calls if c.id not in stepped],
            "parse_error": _text(turn.parse_error),
            "finish_reason": turn.finish_reason,
            "tokens": turn.usage.prompt_tokens + turn.usage.completion_tokens,
            "steps": steps_by_turn.pop(turn.index, []),
        }
        for turn in trace.turns
    ]
    # Steps whose turn was not recorded (should not happen) are still shown rather than silently dropped.
    for index, steps in sorted(steps_by_turn.items()):
        turns.append(
            {
                "index": index,
                "content": None,
                "tool_calls": [],
                "parse_error": None,
                "finish_reason": None,
                "tokens": 0,
                "steps": steps,
            }
        )
    return {
        "episode_id": trace.episode_id,
        "scenario_id": trace.scenario_id,
        "model": trace.model,
        "setting": trace.setting,
        "seed": trace.seed,
        "outcome": trace.outcome.value,
        "gave_up": trace.gave_up,
        # The final answer is usually the last turn's text, already shown: repeat it only when it differs.
        "final_answer": None
        if trace.turns and trace.final_answer == trace.turns[-1].content
        else _text(trace.final_answer),
        "error": _text(trace.error),
        "faults": [
            {
                "kind": f.kind.value,
                "targets": ", ".join(f.targets),
                "persistence": f.persistence.mode
                + (f" (first {f.persistence.after} calls)" if f.persistence.after else ""),
            }
            for f in trace.faults
        ],
        "n_fired": sum(1 for s in trace.steps if s.observation is not None and s.observation.fault is not None),
        "turns": turns,
    }
