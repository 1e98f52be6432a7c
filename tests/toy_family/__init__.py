"""A benchmark family that lives only in the tests, registered by ``module:attribute`` (``toy_family:FAMILY``):
the proof that a family comes in through the one door without touching a product file."""

from toy_family import build, metrics
from undertow.env_core.families import FamilyDefinition

FAMILY = FamilyDefinition(
    name=build.NAME,
    description="capitals of countries, one lookup tool",
    suite_config=build.ToySuite,
    source_digest=build.source_digest,
    build=build.build,
    toolbox=build.toolbox,
    episode_details=metrics.episode_details,
    summarize=metrics.summarize,
    summary_model=metrics.ToySummary,
)
