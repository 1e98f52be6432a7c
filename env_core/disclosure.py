"""Staged disclosure: hidden fallback tools join the tool list only after a trigger fires."""

from __future__ import annotations

from undertow.env_core.model import DisclosureRule


class Disclosure:
    """One episode's hidden tools and the rules that reveal them."""

    def __init__(self, hidden: list[str], rules: list[DisclosureRule]):
        self.hidden: set[str] = set(hidden)
        self._pending = list(rules)
        self._calls = 0
        self._calls_of: dict[str, int] = {}
        self._failures_of: dict[str, int] = {}
        self._failures = 0

    def _fires(self, rule: DisclosureRule) -> bool:
        # ``after_calls`` is a count threshold; with a named tool it counts that tool's calls or failures
        needed = rule.after_calls or 1
        if rule.after_failure_of is not None:
            return self._failures_of.get(rule.after_failure_of, 0) >= needed
        if rule.after_call_of is not None:
            return self._calls_of.get(rule.after_call_of, 0) >= needed
        if rule.after_calls is not None:
            return self._calls >= rule.after_calls
        return self._failures >= 1

    def after_call(self, tool: str, failed: bool) -> list[str]:
        """Record one tool call; return the tools this call revealed (in rule order)."""
        self._calls += 1
        self._calls_of[tool] = self._calls_of.get(tool, 0) + 1
        if failed:
            self._failures += 1
            self._failures_of[tool] = self._failures_of.get(tool, 0) + 1
        revealed: list[str] = []
        still_pending = []
        for rule in self._pending:
            if self._fires(rule):
                revealed.extend(t for t in rule.tools if t in self.hidden and t not in revealed)
            else:
                still_pending.append(rule)
        self._pending = still_pending
        self.hidden.difference_update(revealed)
        return revealed
