"""The vocabulary the ``services`` scenarios and their scorer share: the family's name, what a final answer says
went wrong under each fault kind (``WHAT_WENT_WRONG``, the recovery checkpoint's concept, in the words the oracle's
report uses) and the other wordings that state the same thing (``SAID_OTHERWISE``, the checkpoint's synonyms), and
the names of a set of services' tools (``tool_names``, ``write_names``).
"""

from __future__ import annotations

from undertow.env_core.model import FaultKind
from undertow.env_core.services.base import Service

FAMILY = "services"


def tool_names(*services: type[Service]) -> list[str]:
    """Every tool of ``services``, sorted."""
    return sorted(spec.name for service in services for spec in service.specs())


def write_names(*services: type[Service]) -> list[str]:
    """The tools of ``services`` that change state (kind ``write``), sorted."""
    return sorted(spec.name for s in services for spec in s.specs() if spec.binding.get("kind") == "write")


# What the final answer says went wrong, per fault kind (the recovery checkpoint's concept; the oracle's report
# states it in these words).
WHAT_WENT_WRONG = {
    FaultKind.unavailable: "was unavailable",
    FaultKind.transient: "failed at first",
    FaultKind.stale: "was out of date",
    FaultKind.corrupted: "returned inconsistent data",
    FaultKind.schema_drift: "had changed its format",
    FaultKind.ambiguous: "returned several matches",
    FaultKind.silent_noop: "did not keep the change",
    FaultKind.cascade: "failed because a service it depends on failed",
}
# Other ways an answer states the same thing (the checkpoint's synonyms): a model words it its own way, and an
# abstract phrase is where sentence similarity is weakest.
SAID_OTHERWISE = {
    FaultKind.unavailable: ["was down", "could not be reached", "was not available", "returned an error"],
    FaultKind.transient: ["failed the first time", "timed out at first", "was rate limited", "worked on a retry"],
    FaultKind.stale: ["outdated", "stale", "old data", "not current"],
    FaultKind.corrupted: ["inconsistent", "did not add up", "looked wrong", "corrupted", "duplicated"],
    FaultKind.schema_drift: ["changed its format", "renamed", "unexpected format", "different field names"],
    FaultKind.ambiguous: ["several matches", "multiple matches", "more than one match", "ambiguous"],
    FaultKind.silent_noop: ["did not save", "was not saved", "did not go through", "did not persist"],
    FaultKind.cascade: ["a service it depends on", "upstream service failed", "dependency failed"],
}
