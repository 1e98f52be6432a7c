"""The ``smoke`` family: the built-in suite over a generated company database. Its metrics are the shared ones
(accuracy, give-up, outcome classes), so the family adds no per-episode details and no summary of its own."""

from __future__ import annotations

from undertow.env_core.families import FamilyDefinition
from undertow.env_core.smoke import build

FAMILY = FamilyDefinition.of(
    build,
    build.SmokeSuite,
    description="35 questions over a company database the project generates, each with two tool-disjoint plans",
)
