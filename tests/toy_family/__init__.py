"""A benchmark family that lives only in the tests, registered by ``module:attribute`` (``toy_family:FAMILY``):
the proof that a family comes in through the one door without touching a product file, and the worked example of
docs/families.md (a tool, a data file, a prompt preset, a summary, typed details)."""

from toy_family import build, metrics
from undertow.env_core.content import data_dir
from undertow.env_core.families import FamilyDefinition, FamilyMetrics
from undertow.env_core.prompts import load_preset, presets

FAMILY = FamilyDefinition.of(
    build,
    build.ToySuite,
    FamilyMetrics(metrics.episode_details, metrics.ToyDetails, metrics.summarize, metrics.ToySummary),
    prompt_presets=presets(load_preset(data_dir(__file__) / "prompts" / "toy", protocol="function_calling")),
    description="capitals of countries, one lookup tool",
)
