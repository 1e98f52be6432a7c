"""Benchmark families: the one door through which a family comes in, and the registry that finds them.

A family contributes exactly what :class:`Family` lists: its name, the pydantic model of its suite configs, how to
build a suite folder from its source data, the toolbox that runs its tools, the per-episode facts its metrics need,
and a typed summary that renders itself through generic hooks (tables, stacked-bar figures, metrics). Nothing
outside the family's own folder (``env_core/<family>/``), its scoring module (``scoring/<family>.py``) and the
registration names a family: suites, the runner, the report, tracking and the CLI all ask the registry.

Families are found three ways, all loading a ``module:attribute`` reference to a :class:`Family` object:

- the Python entry-point group ``undertow.families`` (the built-in families register themselves there, in
  ``pyproject.toml``; an installed third-party package does the same);
- a ``family: package.module:ATTRIBUTE`` reference in a suite config, as inspect_ai loads tasks;
- :func:`register`, for code that builds a family at run time.

A family object sits above both its builder (``env_core``) and its scorer (``scoring``), so it is only ever loaded
by reference here: this module imports no family.
"""

from __future__ import annotations

import difflib
import importlib
import json
import math
import os
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypedDict, Unpack, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from undertow.env_core.errors import ConfigError, close_match, did_you_mean
from undertow.env_core.faults import Setting
from undertow.env_core.model import EpisodeResult, HelperModel, Scenario, Strict, ToolSpec, Trajectory
from undertow.env_core.prompts import PROTOCOL_TEXTS, PromptPreset
from undertow.env_core.search import ToolAccess

if TYPE_CHECKING:
    from undertow.env_core.tools import ToolBox

ENTRY_POINT_GROUP = "undertow.families"


class FamilyError(ConfigError):
    """A family could not be found, imported or used; the message names the family and the reference."""


# ---------------------------------------------------------------------------------------------------------------
# What a family's suite config looks like


def resolve_path(value: str | None, info: ValidationInfo) -> str | None:
    """A relative path in a config file is relative to that file's folder (the validation context's ``base``);
    without a base (a path typed on the command line, a manifest read back) it is left as it is: the current
    directory's. The rule is written down in docs/configuration.md."""
    if value is None:
        return None
    base = (info.context or {}).get("base")
    path = Path(value).expanduser()
    return str((Path(base) / path).resolve()) if base and not path.is_absolute() else str(path)


def missing_path(path: str | Path, what: str = "folder") -> str:
    """``folder /abs/path not found``, with ``; did you mean 'x'?`` when the parent folder holds a close name:
    a missing path is reported as the absolute path that was looked for, whatever it was written as."""
    absolute = Path(os.path.abspath(Path(path).expanduser()))
    hint = close_name(absolute)
    return f"{what} {absolute} not found" + (f"; {hint}" if hint else "")


def close_name(path: str | Path) -> str:
    """``did you mean 'x'?`` for the entry of ``path``'s parent folder closest to its name, or ""."""
    absolute = Path(os.path.abspath(Path(path).expanduser()))
    try:
        entries = [entry.name for entry in absolute.parent.iterdir()]
    except (OSError, ValueError):  # no parent folder, or a name the OS cannot represent
        return ""
    hint = did_you_mean(absolute.name, entries) if entries else ""
    # only a close name helps; the whole listing of some parent folder would not
    return hint if hint.startswith("did you mean") else ""


class JudgeModel(HelperModel):
    """A grader model (a helper, never the model under test) for the episodes a family cannot check against gold:
    ``k`` votes, each sampled with its own seed, the majority deciding; a reply without a verdict is asked again up
    to ``retries`` times, then counted as a judge error."""

    temperature: float = Field(default=0.7, ge=0, le=2, allow_inf_nan=False, description="votes differ by sampling")
    k: int = Field(default=5, ge=1, le=101, description="votes per episode (5 in FAIL-TaLMs)")
    retries: int = Field(default=1, ge=0, le=10, description="re-asks of a vote whose reply opens with no verdict")


class SuiteConfig(Strict):
    """Fields every suite reference has. A family's own config subclasses it with ``family: Literal["<name>"]``
    and the fields that say which source data to build from; ``source_name`` names what it was built from."""

    family: str
    # set when the family was loaded from a ``module:attribute`` reference, so that workers load it the same way
    family_ref: str | None = Field(default=None, description="module:attribute the family was loaded from")
    scenarios: str | None = Field(default=None, description="another scenario file instead of the suite's own")
    limit: int | None = Field(default=None, ge=1, le=10_000_000, description="run only the first N scenarios")
    skip_invalid: bool = Field(default=False, description="leave out bad scenarios instead of stopping")
    access: ToolAccess = Field(default_factory=ToolAccess)
    alias: str | None = Field(default=None, description="name in reports (default: derived from the source)")
    split: Literal["all", "validation", "test"] = Field(
        default="all",
        description="run only the scenarios of this split (a scenario's metadata 'split', set by the build); all: "
        "every scenario",
    )
    answers: Literal["lenient", "strict"] = Field(
        default="lenient",
        description="answer matching: lenient (the gold values anywhere in the answer, prose included) or strict "
        "(structured records keyed by the original column names; order counts only when the gold is ordered)",
    )
    docs: Literal["template", "model"] = Field(
        default="template",
        description="tool documentation: the family's own (template) or written by docs_model and checked "
        "(families with a documenter only); cached with the build",
    )
    docs_model: HelperModel | None = Field(default=None, description="docs: model: the endpoint that writes them")
    emulator: HelperModel | None = Field(
        default=None,
        description="the model that answers the suite's emulated tools (imported tools whose real API is out of "
        "reach) from their documentation; required when the suite has any",
    )
    judge: JudgeModel | None = Field(
        default=None,
        description="the grader model for episodes without a gold answer (families with a judge); required when "
        "the suite has such scenarios",
    )

    # fields that say how a suite is used, not what is built: the build cache ignores them
    USE_FIELDS: ClassVar[frozenset[str]] = frozenset(
        {
            "family", "family_ref", "scenarios", "limit", "skip_invalid", "access", "alias", "split", "answers",
            "emulator", "judge",
        }
    )  # fmt: skip

    _resolve = field_validator("scenarios")(resolve_path)

    def source_name(self) -> str:
        """The default report name of the suite (before the access label): the family's name."""
        return self.family

    @property
    def label(self) -> str:
        if self.alias:
            return self.alias
        base = self.source_name()
        return base if self.access == ToolAccess() else f"{base}:{self.access.label}"

    def build_fields(self) -> dict[str, Any]:
        """The fields that decide what is built (everything but how the suite is used), JSON-able."""
        return self.model_dump(mode="json", exclude=set(self.USE_FIELDS))

    def agent_overrides(self) -> dict[str, Any]:
        """Agent settings this suite's episodes run under whatever the sweep's ``agent`` says (a suite option that
        picks the protocol, as Live API-Bench's direct and ReAct modes do); {} by default."""
        return {}


class FolderSuite(SuiteConfig):
    """A built suite folder of any family (``undertow build`` writes one); its ``suite.json`` names the family."""

    family: str = ""
    path: str = Field(description="a built suite folder")

    _resolve_folder = field_validator("path")(resolve_path)

    @field_validator("path")
    @classmethod
    def _folder_exists(cls, value: str, info: ValidationInfo) -> str:
        # checked when a config is read (it gives the base); a manifest read back on another machine is not
        if (info.context or {}).get("base") is not None and not Path(value).exists():
            raise ValueError(missing_path(value))
        return value

    def source_name(self) -> str:
        return Path(self.path).name


def folder_family(path: str | Path) -> str | None:
    """The family a built folder's ``suite.json`` names, or None when it cannot be read (the folder is checked,
    with a precise message, when the suite is loaded)."""
    try:
        name = json.loads((Path(path) / "suite.json").read_text()).get("family")
    except (OSError, ValueError, AttributeError):
        return None
    return name if isinstance(name, str) and name else None


# ---------------------------------------------------------------------------------------------------------------
# How a family's summary renders: generic shapes the report draws without knowing the family


class ReportTable(BaseModel):
    """A table for the terminal and the HTML report: text cells, numbers already formatted. ``sections`` are the
    row indexes before which a separator goes (a new model, say)."""

    model_config = ConfigDict(extra="forbid")

    title: str
    columns: list[str]
    right: list[bool] = Field(default_factory=list, description="per column: right-aligned (numbers)")
    rows: list[list[str]] = Field(default_factory=list)
    sections: list[int] = Field(default_factory=list)
    note: str = ""


class Bar(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str
    shares: dict[str, float]  # category -> percent of the bar (they add up to 100)
    n: int


class StackedBars(BaseModel):
    """A stacked-share bar chart: one bar per label, categories stacked in the given order."""

    model_config = ConfigDict(extra="forbid")

    name: str  # file-name stem: the figure is saved as ``<name>_<suite>.png``
    title: str
    alt: str  # what the figure shows, for the HTML page's alt text
    categories: list[str]
    bars: list[Bar]
    y_label: str = "share (%)"
    x_label: str = ""


class Box(BaseModel):
    """One box of a box plot: a distribution given by its five numbers (and its mean), not its raw values."""

    model_config = ConfigDict(extra="forbid")

    label: str  # the group on the x axis (a setting, a model)
    series: str = ""  # what the colour tells apart within a group (a model, correct / incorrect); "" for one series
    panel: str = ""  # the subplot it is drawn in, titled so (panels in order of first appearance)
    n: int
    low: float
    q1: float
    median: float
    q3: float
    high: float
    mean: float | None = None


class BoxPlots(BaseModel):
    """Distributions side by side: one box per (label, series), grouped by label, a colour per series, in one
    subplot per panel."""

    model_config = ConfigDict(extra="forbid")

    name: str  # file-name stem: the figure is saved as ``<name>_<suite>.png``
    title: str
    alt: str  # what the figure shows, for the HTML page's alt text
    boxes: list[Box]
    y_label: str = ""
    x_label: str = ""


# The figures a family summary can hand over: the report draws each kind without knowing what it counts.
FamilyFigure = StackedBars | BoxPlots


class FamilySummary(BaseModel):
    """A family's typed analysis of one suite's results. Subclasses add their fields and override the hooks."""

    model_config = ConfigDict(extra="forbid")

    family: str

    def tables(self, suite: str) -> list[ReportTable]:
        """Tables for ``undertow report`` and the HTML report."""
        return []

    def figures(self, suite: str) -> Sequence[FamilyFigure]:
        """Figures for the HTML report and MLflow artifacts."""
        return []

    def metrics(self, model: str, setting: str) -> dict[str, float]:
        """Numbers for one model × setting, logged to MLflow beside the shared ones (keys prefixed by the
        family's name)."""
        return {}


def flat_metrics(prefix: str, value: Any, out: dict[str, float] | None = None) -> dict[str, float]:
    """Finite numeric leaves of nested data as dotted metric names (``myfamily.errors.percent.search``); booleans
    count as 0/1, None and NaN are left out."""
    out = {} if out is None else out
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if isinstance(value, bool):
        out[prefix] = float(value)
    elif isinstance(value, int | float):
        if math.isfinite(value):
            out[prefix] = float(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            flat_metrics(f"{prefix}.{key}" if prefix else str(key), item, out)
    return out


# ---------------------------------------------------------------------------------------------------------------
# The protocol


# A family's named report layouts: each turns the family summaries of a run's suites (suite label -> summary, only
# this family's) into tables, e.g. a paper's tables laid out as the paper prints them.
Layouts = Mapping[str, Callable[[Mapping[str, "FamilySummary"]], list["ReportTable"]]]


# A family's options applied to a loaded suite: called as ``adapt(suite, config)`` with an ``env_core.suites.Suite``
# and the suite config (its family's own or its ``folder_config``); returns the suite to run (its scenarios chosen,
# renamed or narrowed as the options say). Typed loosely here: suites.py imports this module.
SuiteAdapter = Callable[[Any, "SuiteConfig"], Any]


# A family's own episode scorer, used instead of the shared safety-gated one (scoring.trajectory.score_trajectory):
# called as ``score(trajectory, scenario, expected_give_up, answers=...)``, it returns the same fields (a dataclass
# like scoring.trajectory.EpisodeScore). A family whose rubric the paper defines differently brings one.
EpisodeScorer = Callable[..., Any]


# A family's judge: called as ``await judge(trajectory, scenario, ask, config)`` after the episode was scored, with
# ``ask(messages, seed)`` an async helper-model call and ``config`` the suite's JudgeModel; returns details to add to
# the episode's (the verdict and every vote), or None when there is nothing to judge. Families judge the episodes
# they cannot check against gold, or read their checkpoints with the model instead of rules; a judge that scores the
# episode again puts the new score fields under ``scoring.trajectory.EPISODE_SCORE``. An exception from ``ask`` is
# the judge's endpoint failing: an infra error, never a fail.
EpisodeJudge = Callable[..., Awaitable[dict[str, Any] | None]]


# A family's checks of a sweep before it is planned: called as ``plan_check(config, index, suite)`` for each suite of
# the family, with the sweep config (a ``cluster.config.SweepConfig``: typed loosely, env_core sits below cluster),
# the suite's index in ``config.suites`` and the loaded ``env_core.suites.Suite``; returns what the family's protocol
# cannot run as asked, each a ConfigError naming its field ([] when nothing). The planner refuses the sweep with the
# first one, before any episode runs.
PlanCheck = Callable[[Any, int, Any], list[ConfigError]]


# A family whose judge reads another episode's answer (FAIL-TaLMs compares a No-tools answer with the same model's
# Perfect one): called as ``pairs_with(scenario, scenarios, setting, settings)`` with a planned episode's scenario,
# its suite's scenarios, the episode's setting and the sweep's settings (in order); returns the (scenario id,
# setting name) of the episode of the same model, suite and seed it is paired with, or None. The scheduler runs a
# shard after the shards its episodes are paired with are committed and hands it their final answers
# (``ShardSpec.paired_answers``); just before the judge, ``attach_pair(scenario, answer, paired_scenario)`` gives the
# scenario the judge is shown, carrying that answer (None: the paired episode gave none) and whose it was.
EpisodePairing = Callable[[Scenario, Sequence[Scenario], Setting, Sequence[Setting]], tuple[str, str] | None]
PairAttacher = Callable[[Scenario, str | None, str], Scenario]  # (scenario, the paired answer, its scenario id)


# A family's reader of a benchmark's published per-episode outputs, for ``undertow import FAMILY PATH --results
# DIR``: called as ``import_results(config, results)`` with the suite config of the released files (its import
# field set) and the outputs folder; returns an ``env_core.reference.ImportedResults`` (typed loosely here, as
# SuiteAdapter is), which the cluster writes into the run store as one reference run.
ResultsImporter = Callable[["SuiteConfig", Path], Any]


class ToolDocumenter(Protocol):
    """What a family offers when a model may write its tools' documentation (``undertow build --docs-model-url``):
    the pure parts; the calling loop is ``undertow.workers.docgen``."""

    def context(self, folder: Path) -> Any:
        """What the model is shown besides each tool (e.g. the database's tables), read from a built folder."""
        ...

    def messages(self, tool: ToolSpec, context: Any) -> list[dict[str, str]]:
        """The chat asking for one tool's documentation."""
        ...

    def problems(self, doc: Any, tool: ToolSpec) -> list[str]:
        """What is wrong with a proposed doc, as messages the model can act on; [] when it passes."""
        ...

    def apply(self, tool: ToolSpec, doc: dict[str, Any]) -> ToolSpec:
        """The tool with a checked doc."""
        ...


@runtime_checkable
class Family(Protocol):
    """Everything a benchmark family contributes, and nothing else. The methods and the first attributes every
    family has; the optional ones are typed attributes that are None (or empty) where a family has no such part.
    :class:`FamilyDefinition` is the usual way to write one."""

    name: str
    description: str
    suite_config: type[SuiteConfig]  # has ``family: Literal[name]``
    summary_model: type[FamilySummary] | None
    # the pydantic model of ``episode_details``' result, validated when an episode's result is written
    details_model: type[BaseModel] | None
    # for ``undertow build --docs-model-url``: how a model may write the family's tools' documentation
    documenter: ToolDocumenter | None
    # ``undertow report --layout NAME``: a paper's tables as the paper prints them ({} when none)
    layouts: Layouts
    # the family's own episode rubric, used instead of the shared safety-gated one
    score: EpisodeScorer | None
    # options a built folder takes (``{path: OUT, formulation: rest}``), and how they apply to the loaded suite
    folder_config: type[FolderSuite] | None
    adapt: SuiteAdapter | None
    # grades answers without gold, run with the suite's ``judge`` model
    judge: EpisodeJudge | None
    # the suite field naming a benchmark's released files, for ``undertow import``
    import_field: str | None
    # reads the authors' published outputs as a reference run (``undertow import --results``; None when none)
    import_results: ResultsImporter | None
    # a paper's prompts ({} when none): agent presets (``agent.prompt: NAME``) and the ``protocol`` texts
    # (env_core.prompts)
    prompt_presets: Mapping[str, PromptPreset]
    # what the family's protocol refuses in a sweep, checked when it is planned (None when nothing)
    plan_check: PlanCheck | None
    # which episode's answer an episode's judge reads, and how the scenario carries it (None when no pairing)
    pairs_with: EpisodePairing | None
    attach_pair: PairAttacher | None

    def source_digest(self, config: SuiteConfig) -> str:
        """A content hash of the source data ``config`` builds from: with the build fields, the cache key."""
        ...

    def build(self, config: SuiteConfig, out: Path) -> list[ReportTable]:
        """Build the suite folder at ``out`` (with :func:`undertow.env_core.suites.write_suite`); returns what the build
        kept and skipped, for ``undertow build``."""
        ...

    def toolbox(self, specs: list[ToolSpec], databases: Mapping[str, Path]) -> ToolBox:
        """The toolbox that runs the suite's tools over per-episode state (each episode gets a fresh state)."""
        ...

    def episode_details(
        self,
        trajectory: Trajectory,
        scenario: Scenario,
        *,
        correct: bool,
        searched: bool,
        first_tried: set[str],
    ) -> dict[str, Any]:
        """Per-episode facts the family's metrics need (stored in ``EpisodeResult.details``); {} if none."""
        ...

    def summarize(self, results: Sequence[EpisodeResult]) -> FamilySummary | dict[str, Any] | None:
        """The family's analysis of one suite's results (validated against ``summary_model``), or None."""
        ...


def no_details(
    trajectory: Trajectory, scenario: Scenario, *, correct: bool, searched: bool, first_tried: set[str]
) -> dict[str, Any]:
    """For families whose metrics need nothing beyond the shared score."""
    return {}


def no_summary(results: Sequence[EpisodeResult]) -> None:
    """For families with no analysis beyond the shared summary rows."""
    return None


class SuiteBuilder(Protocol):
    """A family's build side as its env_core build module already has it: a module with these names satisfies this
    protocol, so a registration hands the module over whole (:meth:`FamilyDefinition.of`)."""

    @property
    def FAMILY(self) -> str:  # the build modules' constant
        """The family name."""
        ...

    def source_digest(self, config: SuiteConfig) -> str:
        """As :meth:`Family.source_digest`."""
        ...

    def build(self, config: SuiteConfig, out: Path) -> list[ReportTable]:
        """As :meth:`Family.build`."""
        ...

    def toolbox(self, specs: list[ToolSpec], databases: Mapping[str, Path]) -> ToolBox:
        """As :meth:`Family.toolbox`."""
        ...


@dataclass(frozen=True)
class FamilyMetrics:
    """A family's own metrics, in this order: the per-episode details and the model that validates them, then the
    suite summary and its model. The default is none beyond the shared score."""

    episode_details: Callable[..., dict[str, Any]] = no_details
    details_model: type[BaseModel] | None = None
    summarize: Callable[[Sequence[EpisodeResult]], FamilySummary | dict[str, Any] | None] = no_summary
    summary_model: type[FamilySummary] | None = None


class FamilyOptions(TypedDict, total=False):
    """The optional parts of a :class:`FamilyDefinition` (see :class:`Family` for each), for
    :meth:`FamilyDefinition.of`."""

    adapt: SuiteAdapter | None
    attach_pair: PairAttacher | None
    documenter: ToolDocumenter | None
    folder_config: type[FolderSuite] | None
    import_field: str | None
    import_results: ResultsImporter | None
    judge: EpisodeJudge | None
    layouts: Layouts
    pairs_with: EpisodePairing | None
    plan_check: PlanCheck | None
    prompt_presets: Mapping[str, PromptPreset]
    score: EpisodeScorer | None


@dataclass(frozen=True)
class FamilyDefinition:
    """A :class:`Family` made of plain functions: what a family module usually exports as ``FAMILY``, most simply
    through :meth:`of`."""

    name: str
    description: str
    suite_config: type[SuiteConfig]
    source_digest: Callable[[SuiteConfig], str]
    build: Callable[[SuiteConfig, Path], list[ReportTable]]
    toolbox: Callable[[list[ToolSpec], Mapping[str, Path]], ToolBox]
    episode_details: Callable[..., dict[str, Any]] = no_details
    summarize: Callable[[Sequence[EpisodeResult]], FamilySummary | dict[str, Any] | None] = no_summary
    summary_model: type[FamilySummary] | None = None
    details_model: type[BaseModel] | None = None
    documenter: ToolDocumenter | None = None
    layouts: Layouts = field(default_factory=dict)
    score: EpisodeScorer | None = None
    folder_config: type[FolderSuite] | None = None
    adapt: SuiteAdapter | None = None
    judge: EpisodeJudge | None = None
    import_field: str | None = None
    import_results: ResultsImporter | None = None
    prompt_presets: Mapping[str, PromptPreset] = field(default_factory=dict)
    plan_check: PlanCheck | None = None
    pairs_with: EpisodePairing | None = None
    attach_pair: PairAttacher | None = None

    @classmethod
    def of(
        cls,
        builder: SuiteBuilder,
        suite_config: type[SuiteConfig],
        metrics: FamilyMetrics = FamilyMetrics(),
        *,
        description: str,
        **options: Unpack[FamilyOptions],
    ) -> FamilyDefinition:
        """The family whose build side is ``builder`` (its env_core build module: name, digest, build, toolbox),
        whose suites are ``suite_config`` and whose own metrics are ``metrics``; ``options`` are the optional parts."""
        # the fields in their declared order: name, description, suite_config, source_digest, build, toolbox
        core = (builder.FAMILY, description, suite_config, builder.source_digest, builder.build, builder.toolbox)
        return cls(*core, **vars(metrics), **options)


# ---------------------------------------------------------------------------------------------------------------
# The registry

_lock = threading.Lock()
_families: dict[str, Family] = {}
_references: dict[str, str] = {}  # family name -> module:attribute it was loaded from
_entry_points_loaded = False


def _check(family: Any, where: str) -> Family:
    if not isinstance(family, Family):
        wanted = ", ".join(Family.__protocol_attrs__) if hasattr(Family, "__protocol_attrs__") else "the protocol"
        raise FamilyError(f"{where}: {type(family).__name__} is not a Family (needs {wanted})")
    config_family = family.suite_config.model_fields.get("family")
    if config_family is None or config_family.annotation != Literal[family.name]:  # type: ignore[comparison-overlap]
        raise FamilyError(f"{where}: family '{family.name}': suite_config needs `family: Literal['{family.name}']`")
    return family


def load_reference(reference: str) -> Family:
    """Import ``module:attribute`` and check it is a :class:`Family`."""
    module_name, sep, attribute = reference.partition(":")
    if not sep or not module_name or not attribute:
        raise FamilyError(f"family reference '{reference}': expected module:attribute, e.g. my_bench.family:FAMILY")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # an import error of any kind in the user's module is reported, not raised raw
        raise FamilyError(f"family reference '{reference}': cannot import {module_name}: {exc}") from exc
    try:
        target = module
        for part in attribute.split("."):
            target = getattr(target, part)
    except AttributeError as exc:
        raise FamilyError(f"family reference '{reference}': {module_name} has no attribute '{attribute}'") from exc
    return _check(target, f"family reference '{reference}'")


def register(family: Family, reference: str | None = None) -> Family:
    """Add a family (idempotent for the same object or reference); a different family under a taken name is refused."""
    _check(family, f"family '{getattr(family, 'name', family)}'")
    with _lock:
        known = _families.get(family.name)
        if known is not None and known is not family and _references.get(family.name) != reference:
            raise FamilyError(
                f"family '{family.name}' is already registered (from {_references.get(family.name) or 'code'})"
            )
        _families[family.name] = family
        if reference:
            _references[family.name] = reference
    return family


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    problems = []
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            family = load_reference(entry.value)
        except FamilyError as exc:
            problems.append(f"entry point '{entry.name}' ({ENTRY_POINT_GROUP}): {exc}")
            continue
        if family.name != entry.name:
            problems.append(f"entry point '{entry.name}' ({ENTRY_POINT_GROUP}) loads family '{family.name}'")
            continue
        register(family, entry.value)
    _entry_points_loaded = True
    if problems:
        raise FamilyError("; ".join(problems))


def family_names() -> list[str]:
    _load_entry_points()
    return sorted(_families)


def families() -> list[Family]:
    return [_families[name] for name in family_names()]


def get_family(name: str, reference: str | None = None) -> Family:
    """A family by registered name or by ``module:attribute`` reference (loaded and registered on first use).
    An unknown name gets the registered ones and a did-you-mean."""
    if ":" in name:
        return register(load_reference(name), name)
    _load_entry_points()
    if name not in _families and reference:
        register(load_reference(reference), reference)
    if name not in _families:
        known = sorted(_families)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise FamilyError(
            f"unknown family '{name}'{hint} (registered: {', '.join(known) or 'none'}; a third-party family is "
            f"named by its module:attribute, or installed under the '{ENTRY_POINT_GROUP}' entry point)"
        )
    return _families[name]


def prompt_presets() -> dict[str, PromptPreset]:
    """Every agent prompt preset the registered families offer, by name (each family's ``protocol`` texts left
    out: they are no ``agent.prompt``). Two families offering one name is a family error naming both."""
    found: dict[str, PromptPreset] = {}
    owner: dict[str, str] = {}
    for family in families():
        for name, preset in family.prompt_presets.items():
            if name == PROTOCOL_TEXTS:
                continue
            if name in found:
                raise FamilyError(f"prompt preset '{name}' is offered by two families: {owner[name]}, {family.name}")
            found[name], owner[name] = preset, family.name
    return found


def prompt_preset(name: str, others: Sequence[str] = ()) -> PromptPreset:
    """The agent prompt preset ``name`` across the registered families; an unknown name is a config error listing
    the known ones (with ``others``, names the caller knows beside them) and the closest."""
    known = prompt_presets()
    if name not in known:
        names = sorted({*others, *known})
        hint = close_match(name, names)
        raise ConfigError(
            f"unknown prompt preset '{name}'" + (f"; {hint}" if hint else "") + f" (known: {', '.join(names)})"
        )
    return known[name]


def protocol_text(part: str, family: str | None = None) -> str:
    """A protocol feature's text (the awareness question, decoupled generation's requests, the error feedback, a
    harness layer): part ``part`` of the ``protocol`` preset of ``family`` (the episode's suite's) when it has that
    part, else of the first registered family, by name, whose ``protocol`` preset has it."""
    for preset in _protocol_presets(family):
        if part in preset.parts:
            return preset.parts[part]
    raise ConfigError(f"no registered family offers the protocol text '{part}'")


def protocol_texts(part: str) -> list[str]:
    """Part ``part`` of every registered family's ``protocol`` preset that has it (by family name)."""
    return [preset.parts[part] for preset in _protocol_presets(None) if part in preset.parts]


def _protocol_presets(family: str | None) -> list[PromptPreset]:
    """The ``protocol`` presets to look in: ``family``'s first (when registered), then every family's by name."""
    order = families()
    if family is not None and family in _families:
        order = [_families[family], *order]
    return [f.prompt_presets[PROTOCOL_TEXTS] for f in order if PROTOCOL_TEXTS in f.prompt_presets]


def reference_of(name: str) -> str | None:
    """The ``module:attribute`` a family was loaded from (None for one registered in code)."""
    return _references.get(name)


def summarize_family(family: Family, results: Sequence[EpisodeResult]) -> FamilySummary | None:
    """The family's summary, checked against its model; a summary that fails it names the family and the field."""
    summary = family.summarize(results)
    if summary is None or family.summary_model is None:
        return None
    try:
        data = summary.model_dump() if isinstance(summary, BaseModel) else summary
        return family.summary_model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise FamilyError(
            f"family '{family.name}': its summary does not match {family.summary_model.__name__}: {field}: "
            f"{first['msg']}" + (f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else "")
        ) from exc


def family_summaries(results: Iterable[EpisodeResult]) -> dict[str, FamilySummary]:
    """Each suite's family summary, keyed by suite label, for suites whose family has one."""
    by_suite: dict[str, list[EpisodeResult]] = {}
    family_of: dict[str, str] = {}
    for result in results:
        by_suite.setdefault(result.suite, []).append(result)
        family_of.setdefault(result.suite, result.family)
    out: dict[str, FamilySummary] = {}
    for suite, rows in by_suite.items():
        if not any(r.outcome.judged for r in rows):
            continue  # only infra or config errors (the suite may not even have loaded): nothing for a family to say
        summary = summarize_family(get_family(family_of[suite]), rows)
        if summary is not None:
            out[suite] = summary
    return out


def suite_config_model(data: Mapping[str, Any]) -> tuple[type[SuiteConfig], dict[str, Any]]:
    """Which config model a suite reference validates against, and the data to validate: a ``path`` is a built
    folder (any family); otherwise ``family`` names a registered family or a ``module:attribute`` reference."""
    values = dict(data)
    name = values.get("family")
    if "path" in values:
        if isinstance(name, str) and ":" in name:  # a built folder of a family loaded by reference
            values["family"], values["family_ref"] = get_family(name).name, name
        # a family whose folders take options (with their defaults when none is given): the family named, or the
        # one the folder holds
        found = values.get("family") or (folder_family(values["path"]) if isinstance(values["path"], str) else None)
        try:
            family = get_family(found, values.get("family_ref")) if isinstance(found, str) and found else None
        except FamilyError:
            family = None  # reported when the folder is loaded, with the file it came from
        model = family.folder_config if family is not None else None
        if family is not None and model is not None:
            values["family"] = family.name
            return model, values
        return FolderSuite, values
    if not isinstance(name, str) or not name:
        known = ", ".join(family_names())
        raise FamilyError(
            f"a suite needs 'family' (one of: {known}, or module:attribute) or 'path' (a built suite folder)"
        )
    if ":" in name:
        family = get_family(name)
        values["family"], values["family_ref"] = family.name, name
    else:
        family = get_family(name, values.get("family_ref"))
    return family.suite_config, values
