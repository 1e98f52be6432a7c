"""The toy family's one metric: how many lookups an episode made (its typed details), summarized per model ×
setting with the shared summary kit (``undertow.scoring.family_summary``)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from undertow.env_core.families import Bar, ReportTable, StackedBars
from undertow.env_core.model import EpisodeResult, Scenario, Trajectory
from undertow.scoring.family_summary import (
    ModelSettingSummary,
    StrictModel,
    by_model_then_setting,
    judged,
    result_rows,
)

DETAILS_BUG = "TOY_DETAILS_BUG"  # set: the details of the Peru question raise (a harness bug, not the model's)
DETAILS_SHAPE = "TOY_DETAILS_SHAPE"  # set: the Peru question's details hold a field ToyDetails lacks


class ToyDetails(StrictModel):
    """What each episode's result stores for this family (validated when the result is written)."""

    lookups: int


def episode_details(
    trajectory: Trajectory, scenario: Scenario, *, correct: bool, searched: bool, first_tried: set[str]
) -> dict[str, Any]:
    if os.environ.get(DETAILS_BUG) and "Peru" in scenario.task:  # a scorer bug on one scenario, for the runner's test
        raise KeyError("a deliberate bug in the toy family's details")
    details = {"lookups": sum(1 for step in trajectory.tool_steps() if step.action.tool_call is not None)}
    if os.environ.get(DETAILS_SHAPE) and "Peru" in scenario.task:  # details that do not fit, for the runner's test
        details["capital"] = 1
    return details


class ToySummary(ModelSettingSummary):
    family: Literal["toy"] = "toy"
    mean_lookups: dict[str, dict[str, float]]  # model -> setting -> mean lookups per judged episode

    def tables(self, suite: str) -> list[ReportTable]:
        table = ReportTable(title=f"{suite}: lookups per episode", columns=["Model", "Setting", "lookups"])
        table.right = [False, False, True]
        for model, settings in self.mean_lookups.items():
            table.rows += [[model, setting, f"{mean:.2f}"] for setting, mean in settings.items()]
        return [table]

    def figures(self, suite: str) -> list[StackedBars]:
        bars = [
            Bar(label=f"{model}\n{setting}", shares={"looked up": 100.0} if mean else {"never": 100.0}, n=1)
            for model, settings in self.mean_lookups.items()
            for setting, mean in settings.items()
        ]
        return [
            StackedBars(
                name="lookups",
                title=f"Lookups — {suite}",
                alt=f"Toy lookups, suite {suite}",
                categories=["looked up", "never"],
                bars=bars,
            )
        ]

    def setting_parts(self, model: str, setting: str) -> Iterable[tuple[str, Any]]:
        # MLflow gets toy.mean_lookups for each model × setting (the kit's metrics() flattens these)
        mean = self.mean_lookups.get(model, {}).get(setting)
        return [] if mean is None else [("", {"mean_lookups": mean})]


def summarize(results: Sequence[EpisodeResult]) -> dict[str, Any]:
    """A plain dict on purpose: the registry checks it against ``ToySummary``."""
    groups = by_model_then_setting(row for row in result_rows(results) if judged(row))
    means = {
        model: {setting: sum(int(row["lookups"]) for row in rows) / len(rows) for setting, rows in settings.items()}
        for model, settings in groups.items()
    }
    return {"family": "toy", "mean_lookups": means}
