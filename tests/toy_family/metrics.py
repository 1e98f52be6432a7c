"""The toy family's one metric: how many lookups an episode made, summarized per model × setting."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal

from undertow.env_core.families import Bar, FamilySummary, ReportTable, StackedBars
from undertow.env_core.model import EpisodeResult, Outcome, Scenario, Trajectory

DETAILS_BUG = "TOY_DETAILS_BUG"  # set: the details of the Peru question raise (a harness bug, not the model's)


def episode_details(
    trajectory: Trajectory, scenario: Scenario, *, correct: bool, searched: bool, first_tried: set[str]
) -> dict[str, Any]:
    if os.environ.get(DETAILS_BUG) and "Peru" in scenario.task:  # a scorer bug on one scenario, for the runner's test
        raise KeyError("a deliberate bug in the toy family's details")
    return {"lookups": sum(1 for step in trajectory.tool_steps() if step.action.tool_call is not None)}


class ToySummary(FamilySummary):
    family: Literal["toy"] = "toy"
    mean_lookups: dict[str, dict[str, float]]  # model -> setting -> mean lookups per valid episode

    def tables(self, suite: str) -> list[ReportTable]:
        table = ReportTable(title=f"{suite}: lookups per episode", columns=["Model", "Setting", "lookups"])
        table.right = [False, False, True]
        for model, settings in self.mean_lookups.items():
            table.rows += [[model, setting, f"{mean:.2f}"] for setting, mean in settings.items()]
        return [table]

    def figures(self, suite: str) -> list[StackedBars]:
        bars = [
            Bar(
                label=f"{model}\n{setting}",
                shares={"looked up": 100.0 if mean else 0.0, "never": 0.0 if mean else 100.0},
                n=1,
            )
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

    def metrics(self, model: str, setting: str) -> dict[str, float]:
        mean = self.mean_lookups.get(model, {}).get(setting)
        return {} if mean is None else {"toy.mean_lookups": mean}


def summarize(results: Sequence[EpisodeResult]) -> dict[str, Any]:
    """A plain dict on purpose: the registry checks it against ``ToySummary``."""
    sums: dict[str, dict[str, list[int]]] = {}
    for r in results:
        if r.outcome != Outcome.infra_error:
            sums.setdefault(r.model, {}).setdefault(r.setting, []).append(int(r.details["lookups"]))
    means = {m: {s: sum(v) / len(v) for s, v in settings.items()} for m, settings in sums.items()}
    return {"family": "toy", "mean_lookups": means}
