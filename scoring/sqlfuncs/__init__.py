"""Scoring for the ``sqlfuncs`` family (the "Hell or High Water" benchmark): the error taxonomy and backup-plan size
of an episode (:mod:`.taxonomy`), the per-model summary of the paper's tables (:mod:`.summary`) and the paper's
tables across a run's suites (:mod:`.hohw`, ``undertow report RUN --layout hohw``).

Each sqlfuncs scenario has two tool-disjoint gold plans: ``plans[0]`` a single direct call, ``plans[1]`` a chain
(inner functions first, the outer one last). In the *open* setting the agent finds functions with ``search_tools``
(its result is a list of ``{"name", "description"}``) and reads documentation with ``get_info``; in the *closed*
setting the solution functions are listed from the start. ``first_tried`` disables the first solution function the
agent calls, so only the plan without it can still work: the *backup plan*.
"""

from __future__ import annotations

from undertow.env_core.families import FamilyDefinition, FamilyMetrics
from undertow.env_core.sqlfuncs import build, prompts
from undertow.env_core.sqlfuncs.compile import FAMILY as FAMILY_NAME
from undertow.env_core.sqlfuncs.docs import DOCUMENTER
from undertow.scoring.sqlfuncs.hohw import hohw_layout
from undertow.scoring.sqlfuncs.summary import SqlfuncsSummary, SuiteAccess, summarize, summarize_sqlfuncs, turn_stats
from undertow.scoring.sqlfuncs.taxonomy import (
    ERROR_CATEGORIES,
    SqlfuncsDetails,
    backup_plan_calls,
    episode_details,
    error_category,
)

__all__ = [
    "ERROR_CATEGORIES",
    "FAMILY",
    "FAMILY_NAME",
    "SqlfuncsDetails",
    "SqlfuncsSummary",
    "SuiteAccess",
    "backup_plan_calls",
    "episode_details",
    "error_category",
    "hohw_layout",
    "summarize",
    "summarize_sqlfuncs",
    "turn_stats",
]

FAMILY = FamilyDefinition.of(
    build,
    build.SqlfuncsSuite,
    FamilyMetrics(episode_details, SqlfuncsDetails, summarize, SqlfuncsSummary),
    documenter=DOCUMENTER,
    layouts={"hohw": hohw_layout},
    prompt_presets=prompts.PRESETS,
    description="Spider-format SQL compiled into obfuscated functions with backup plans (Hell or High Water)",
)
