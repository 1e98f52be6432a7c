"""Reading the authors' released FAIL-TaLMs outputs: what each model answered, per query, in each setting.

The layout is the authors' own: ``OUTPUTS/<Setting>/<model>_auto_eval[_qaq]/answers.json``, the setting folders
``Original`` (the paper's Perfect), ``Underspecified``, ``Replaceable``, ``Non-replaceable`` and ``No-tools``; the
model is the folder name without ``_auto_eval`` and ``_qaq``, and ``_qaq`` marks the Ask-and-Help runs. Each file is
a list of entries (``query_id``, ``query``, ``skipped``, ``pass_rate``, by setting ``tool_annotation`` /
``info_annotation``, ``win_rate``, ``interaction_scores``).

Each entry is linked to the scenario the released query files became (:mod:`.released`) by its query text within its
setting (the query id decides between scenarios of the same text). Nothing here raises on bad input: a malformed
entry is listed as ``file[index]`` and skipped, a query id seen twice in one file is one episode (the first entry
kept, the later ones listed), and an entry whose text matches no scenario is kept and listed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from undertow.env_core.model import Scenario
from undertow.env_core.spider import Problem

# the authors' setting folders -> the released settings (released.SETTINGS)
SETTING_FOLDERS: dict[str, str] = {
    "Original": "perfect",
    "Underspecified": "underspecified",
    "Replaceable": "replaceable",
    "Non-replaceable": "non_replaceable",
    "No-tools": "no_tools",
}
RUN_SUFFIX = "_auto_eval"
HELP_SUFFIX = "_qaq"  # the Ask-and-Help runs
ANSWERS = "answers.json"
HELP_SETTING = "{setting}_aah"  # the run setting name of an Ask-and-Help setting
_LABELS = ("yes", "no", "idk")


@dataclass(frozen=True)
class OutputEntry:
    """One entry of an outputs file, read. ``tool_awareness`` / ``info_awareness``: the authors' labels of the
    model's replies to the two awareness questions (None where not asked or not a label); ``win_rate``: No-tools'
    pairwise comparison with the model's own Perfect answer (0 lose, 1 tie, 2 win; None when missing); ``asked``:
    whether the model asked the person (None outside Ask-and-Help); ``scenario_id``: the linked scenario (None:
    no scenario has its text)."""

    model: str
    setting: str  # a released setting: perfect, underspecified, replaceable, non_replaceable, no_tools
    helped: bool  # Ask-and-Help (_qaq)
    where: str  # "Original/gpt_4o_auto_eval/answers.json[3]"
    query_id: int
    query: str
    skipped: bool
    passed: bool  # pass_rate == 1
    tool_awareness: str | None = None
    info_awareness: str | None = None
    win_rate: int | None = None
    asked: bool | None = None
    answer: str = ""
    scenario_id: str | None = None

    @property
    def run_setting(self) -> str:
        """The setting name in a run: the released setting, with ``_aah`` under Ask-and-Help."""
        return HELP_SETTING.format(setting=self.setting) if self.helped else self.setting


@dataclass
class Outputs:
    """What :func:`read_outputs` found: the entries kept, and what was skipped (``problems``: malformed entries and
    unreadable files), ``duplicates`` (later entries of a query id already seen in their file) and ``unlinked``
    (kept entries whose text matches no scenario), each as ``file[index]``."""

    entries: list[OutputEntry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    unlinked: list[str] = field(default_factory=list)

    def models(self) -> list[str]:
        return list(dict.fromkeys(e.model for e in self.entries))


class _Malformed(ValueError):
    pass


def _text(query: str) -> str:
    return " ".join(query.split())


def _label(value: Any) -> str | None:
    text = value.strip().casefold() if isinstance(value, str) else None
    return text if text in _LABELS else None


def _flag(value: Any, name: str) -> bool:
    """A 0/1 or boolean field (``pass_rate``, ``skipped``); raises _Malformed for anything else."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return value == 1
    raise _Malformed(f"'{name}' must be 0/1 or a boolean, got {value!r}")


def _win_rate(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int | float) and value in (0, 1, 2):
        return int(value)
    raise _Malformed(f"'win_rate' must be 0, 1 or 2, got {value!r}")


def _entry(raw: Any, model: str, setting: str, helped: bool, where: str) -> OutputEntry:
    """One entry; raises _Malformed."""
    if not isinstance(raw, dict):
        raise _Malformed(f"expected a JSON object, got {type(raw).__name__}")
    query = raw.get("query")
    if not isinstance(query, str) or not query.strip():
        raise _Malformed("'query' is missing or not text")
    query_id = raw.get("query_id")
    if isinstance(query_id, str) and query_id.strip().isdigit():
        query_id = int(query_id)
    if isinstance(query_id, bool) or not isinstance(query_id, int) or query_id < 0:
        raise _Malformed(f"'query_id' must be a non-negative integer, got {query_id!r}")
    if "pass_rate" not in raw:
        raise _Malformed("'pass_rate' is missing")
    answer = raw.get("model_answer")
    return OutputEntry(
        model=model,
        setting=setting,
        helped=helped,
        where=where,
        query_id=query_id,
        query=_text(query),
        skipped=_flag(raw.get("skipped", False), "skipped"),
        passed=_flag(raw["pass_rate"], "pass_rate"),
        tool_awareness=_label(raw.get("tool_annotation")),
        info_awareness=_label(raw.get("info_annotation")),
        win_rate=_win_rate(raw.get("win_rate")),
        # the authors count an entry as an interaction when it records any exchange with the person
        asked=bool(raw.get("interaction_scores")) if helped else None,
        answer=answer if isinstance(answer, str) else "",
    )


def _link(entry: OutputEntry, by_text: dict[tuple[str, str], list[Scenario]]) -> str | None:
    """The scenario of the entry's setting with its text; of several, the one with its query id (else the first)."""
    found = by_text.get((entry.setting, entry.query), [])
    for scenario in found:
        if scenario.metadata.get("query_id") == entry.query_id:
            return scenario.id
    return found[0].id if found else None


def output_files(folder: Path) -> list[tuple[Path, str, str, bool]]:
    """(file, model, released setting, Ask-and-Help) of every outputs file under ``folder``, in a stable order."""
    found = []
    for setting_folder, setting in SETTING_FOLDERS.items():
        for path in sorted((folder / setting_folder).glob(f"*/{ANSWERS}")):
            name = path.parent.name
            helped = name.endswith(HELP_SUFFIX)
            model = name.removesuffix(HELP_SUFFIX).removesuffix(RUN_SUFFIX)
            found.append((path, model, setting, helped))
    return found


def read_outputs(folder: str | Path, scenarios: list[Scenario]) -> Outputs:
    """Every outputs file under ``folder``, each entry linked to one of ``scenarios`` (the released suite's);
    see the module's docstring for what is skipped and listed."""
    folder = Path(folder)
    by_text: dict[tuple[str, str], list[Scenario]] = {}
    for scenario in scenarios:
        setting = scenario.metadata.get("setting")
        if isinstance(setting, str):
            by_text.setdefault((setting, _text(scenario.task)), []).append(scenario)
    out = Outputs()
    files = output_files(folder)
    if not files:
        out.problems.append(Problem(str(folder), "no outputs", f"no <Setting>/<model>_auto_eval*/{ANSWERS} under it"))
    for path, model, setting, helped in files:
        name = path.relative_to(folder).as_posix()
        try:
            raw = json.loads(path.read_bytes())
        except (OSError, ValueError) as exc:
            out.problems.append(Problem(name, "unreadable file", f"{type(exc).__name__}: {exc}"))
            continue
        if not isinstance(raw, list):
            out.problems.append(Problem(name, "unreadable file", f"expected a JSON list, got {type(raw).__name__}"))
            continue
        seen: set[int] = set()
        for index, item in enumerate(raw):
            where = f"{name}[{index}]"
            try:
                entry = _entry(item, model, setting, helped, where)
            except _Malformed as exc:
                out.problems.append(Problem(where, "malformed entry", str(exc)))
                continue
            if entry.query_id in seen:
                out.duplicates.append(where)
                continue
            seen.add(entry.query_id)
            scenario_id = _link(entry, by_text)
            if scenario_id is None:
                out.unlinked.append(where)
            out.entries.append(replace(entry, scenario_id=scenario_id))
    return out
