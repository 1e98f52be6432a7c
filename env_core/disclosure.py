"""Staged disclosure: hidden fallback tools join the tool list only after a trigger fires."""

from __future__ import annotations

from env_core.model import DisclosureRule


class Disclosure:
    """One episode's hidden tools and the rules that reveal them."""

    def __init__(self, hidden: list[str], rules: list[DisclosureRule]):
        self.hidden: set[str] = set(hidden)
        self._pending = list(rules)
        self._calls = 0

    def after_call(self, tool: str, failed: bool) -> list[str]:
        """Record one tool call; return the tools this call revealed (in rule order)."""
        self._calls += 1
        revealed: list[str] = []
        still_pending = []
        for rule in self._pending:
            if rule.after_calls is not None:
                fires = self._calls >= rule.after_calls
            elif rule.after_failure_of is not None:
                fires = failed and tool == rule.after_failure_of
            else:
                fires = failed
            if fires:
                revealed.extend(t for t in rule.tools if t in self.hidden and t not in revealed)
            else:
                still_pending.append(rule)
        self._pending = still_pending
        self.hidden.difference_update(revealed)
        return revealed
