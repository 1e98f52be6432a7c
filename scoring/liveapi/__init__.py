"""Scoring for the ``liveapi`` family (Live API-Bench over Spider): the per-episode measures and the scorer
(``metrics.py``), the summary and the paper's tables (``summary.py``), and the family object."""

from __future__ import annotations

from undertow.env_core.families import FamilyDefinition, FamilyMetrics
from undertow.env_core.liveapi import build
from undertow.scoring.liveapi.metrics import (
    ERROR_CATEGORIES,
    PRF,
    START,
    Call,
    LiveApiDetails,
    Ref,
    answer_states,
    answered_without_calling,
    call_slots,
    completed,
    episode_completed,
    episode_details,
    error_category,
    gold_calls,
    instances,
    intent_scores,
    predicted_calls,
    score,
    sequence_output,
    slot_scores,
    stuck,
)
from undertow.scoring.liveapi.summary import (
    LAYOUTS,
    LiveApiRow,
    LiveApiSummary,
    live_api_layout,
    summarize,
    table6,
)

__all__ = [
    "ERROR_CATEGORIES",
    "FAMILY",
    "LAYOUTS",
    "PRF",
    "START",
    "Call",
    "LiveApiDetails",
    "LiveApiRow",
    "LiveApiSummary",
    "Ref",
    "answer_states",
    "answered_without_calling",
    "call_slots",
    "completed",
    "episode_completed",
    "episode_details",
    "error_category",
    "gold_calls",
    "instances",
    "intent_scores",
    "live_api_layout",
    "predicted_calls",
    "score",
    "sequence_output",
    "slot_scores",
    "stuck",
    "summarize",
    "table6",
]

# ---------------------------------------------------------------------------------------------------------------
# The family object: the build and options (env_core.liveapi), this module's scorer and summary

FAMILY = FamilyDefinition.of(
    build,
    build.LiveApiSuite,
    FamilyMetrics(episode_details, LiveApiDetails, summarize, LiveApiSummary),
    layouts=LAYOUTS,
    score=score,
    folder_config=build.LiveApiFolder,
    adapt=build.adapt,
    description="Live API-Bench: Spider/BIRD questions compiled into SLOT, SEL and REST tool formulations (REST "
    "served live over HTTP), direct and ReAct modes, intent / slot / completion metrics and BFCL error categories",
)
