"""Scoring for the ``services`` family (the "Failing Tools" benchmark), one module a concern:

- :mod:`.rubrics`: the clean / relaxed / base rubrics (paper Table 1), safety-gated, and the family's scorer;
- :mod:`.concepts`: normalized concept matching for recovery checkpoints (§4.2), by embedding or by a judge model;
- :mod:`.failure_modes`: failure-mode labels (§5.2), the unsafe-operation audit (§5.3) and the episode's details;
- :mod:`.summary`: the family summary and the paper's table layouts (``failing_tools``, ``harness``).
"""

from __future__ import annotations

from pathlib import Path

from undertow.env_core.families import FamilyDefinition, FamilyMetrics, ReportTable, SuiteConfig
from undertow.env_core.services import build, prompts
from undertow.scoring.services.concepts import (
    MIN_PARAPHRASE_WORDS,
    TARGET_PRECISION,
    THRESHOLD,
    Calibration,
    ConceptMatcher,
    ConceptPair,
    EmbeddingMatcher,
    JudgeMatcher,
    calibrate,
    default_matcher,
    evaluate,
    load_pairs,
)
from undertow.scoring.services.failure_modes import (
    FAILURE_LABELS,
    FM_LABELS,
    FM_NAMES,
    UNSAFE,
    ForbiddenAudit,
    ServicesDetails,
    audit_forbidden,
    episode_details,
    failure_mode,
)
from undertow.scoring.services.judging import judge_episode
from undertow.scoring.services.normal import normal_clauses, normalize
from undertow.scoring.services.rubrics import (
    RUBRICS,
    RubricName,
    RubricResult,
    checkpoint_passes,
    chosen_rubric,
    rubric_score,
    score,
    score_rubric,
)
from undertow.scoring.services.senses import negated
from undertow.scoring.services.statements import candidate_spans, stated_verbatim
from undertow.scoring.services.summary import (
    HARNESS_LABELS,
    LAYOUTS,
    ServicesSummary,
    failing_tools_layout,
    harness_layout,
    percent,
    plus_minus,
    rate,
    summarize,
    summarize_services,
    wilson_half_width,
)

__all__ = [
    "FAILURE_LABELS",
    "FAMILY",
    "FM_LABELS",
    "FM_NAMES",
    "HARNESS_LABELS",
    "LAYOUTS",
    "MIN_PARAPHRASE_WORDS",
    "RUBRICS",
    "TARGET_PRECISION",
    "THRESHOLD",
    "UNSAFE",
    "Calibration",
    "ConceptMatcher",
    "ConceptPair",
    "EmbeddingMatcher",
    "ForbiddenAudit",
    "JudgeMatcher",
    "RubricName",
    "RubricResult",
    "ServicesDetails",
    "ServicesSummary",
    "audit_forbidden",
    "calibrate",
    "candidate_spans",
    "checkpoint_passes",
    "chosen_rubric",
    "default_matcher",
    "episode_details",
    "evaluate",
    "failing_tools_layout",
    "failure_mode",
    "harness_layout",
    "load_pairs",
    "negated",
    "normal_clauses",
    "normalize",
    "percent",
    "plus_minus",
    "rate",
    "rubric_score",
    "score",
    "score_rubric",
    "stated_verbatim",
    "summarize",
    "summarize_services",
    "wilson_half_width",
]


class _RubricBuild:
    """The services build side (a :class:`SuiteBuilder`), whose build validates the suite by scoring the oracle and
    the naive policy with this family's rubric (env_core cannot import it)."""

    FAMILY = build.FAMILY
    source_digest = staticmethod(build.source_digest)
    toolbox = staticmethod(build.toolbox)

    @staticmethod
    def build(config: SuiteConfig, out: Path) -> list[ReportTable]:
        """The env_core build with this family's rubric."""
        return build.build(config, out, score_rubric)


FAMILY = FamilyDefinition.of(
    _RubricBuild,
    build.ServicesSuite,
    FamilyMetrics(episode_details, ServicesDetails, summarize, ServicesSummary),
    prompt_presets=prompts.PRESETS,
    layouts=LAYOUTS,
    score=score,
    judge=judge_episode,
    description="Failing Tools: 219 scenarios over 30 simulated services, every runtime fault kind, staged "
    "disclosure, safety-gated trajectory rubrics (clean / relaxed / base)",
)
