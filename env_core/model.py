"""The core data model: tools, scenarios, faults, actions, observations, trajectories and results.

Everything here is a pydantic v2 model that round-trips through JSON and YAML. Scenario and result files carry
``schema_version`` so that a file written by a newer undertow is refused with a clear message instead of being
misread.
"""

from __future__ import annotations

import difflib
import json
from enum import StrEnum
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from undertow.env_core.untrusted import ArgumentText, ArgumentValue, ModelRecord, ModelText, ModelValue

SCHEMA_VERSION = 1


class Strict(BaseModel):
    """Base for every model: unknown fields are errors, so a typo in a file never passes silently."""

    model_config = ConfigDict(extra="forbid")


class Versioned(Strict):
    """A record written to files: refuses a schema newer than this code understands."""

    schema_version: int = SCHEMA_VERSION

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value > SCHEMA_VERSION:
            raise ValueError(f"schema_version {value} is newer than this undertow understands ({SCHEMA_VERSION})")
        return value


# ---------------------------------------------------------------------------------------------------------------
# Tools


class ToolSpec(Strict):
    """One tool as the model sees it (OpenAI function-calling schema) plus how the family executes it.

    ``binding`` is family-specific execution data (for SQL-backed tools, the parameterized query). It is never
    shown to the model.
    """

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    binding: dict[str, Any] = Field(default_factory=dict)

    @field_validator("parameters")
    @classmethod
    def _object_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value.get("type") != "object":
            raise ValueError("parameters must be a JSON schema with type 'object'")
        return value

    def openai(self) -> dict[str, Any]:
        """The tool in the OpenAI ``tools`` request format."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


# ---------------------------------------------------------------------------------------------------------------
# Faults


class FaultKind(StrEnum):
    """The runtime faults of the shared fault layer (env_core.faults runs them; the wording follows Failing Tools).

    Loud kinds fail the call: ``unavailable``, ``first_tried``, ``removed``, ``transient``, ``cascade`` and the
    ``arguments`` mode of ``schema_drift``. Silent kinds return a success that must not be trusted: ``stale``,
    ``silent_noop``, ``corrupted``, ``ambiguous`` and the response modes of ``schema_drift``.

    What the agent can observe of each:

    - ``unavailable``: an error describing an outage or a denial ("X is currently unavailable. Please try a
      different function.", a 503 outage, a spent quota, a 401 / 403), never advice to retry; the tool message of
      a timeout, 429 or 503 says ``retryable: false``. Temporary, it heals after ``after`` calls, nothing said.
    - ``first_tried``: the first target the agent calls fails as ``unavailable``; the other targets work.
    - ``removed``: the target is missing from the tool list and from search; calling it is an ``unknown_tool``
      error.
    - ``transient``: a momentary failure (timeout, 429, 503) whose message says that repeating the same request
      should work, marked ``retryable: true``; the same call succeeds once the fault's ``after`` firings are spent.
    - ``cascade``: once the ``on`` tool has had a fault, the targets fail with a 502 naming it (``retryable`` true
      only while the cascade is temporary).
    - ``schema_drift``: a response field renamed or retyped, or (``arguments``) the documented argument refused
      with a message naming its new name.
    - ``stale``: a success showing older values, with an old ``generated_at`` and a ``_stale_warning`` (on the
      record, or on each record of a list). The values are the world as it was ``age_days`` ago where the tool box
      keeps history (``ToolBox.snapshot``; what did not exist then reads as today), so trusting them gives a wrong
      answer; a family without history serves today's values with the signals only.
    - ``silent_noop``: a genuine-looking success (or a bare ``{"status": "success"}``) for a write that did not
      land (or landed in part); only reading the state back shows it.
    - ``corrupted``: a success with a wrong value, a duplicated or a made-up record, or a total that does not add
      up; only a check against another source or the task's facts shows it.
    - ``ambiguous``: near-duplicate records beside the real one, in shuffled order; taking the first is a guess.
    """

    unavailable = "unavailable"
    first_tried = "first_tried"
    removed = "removed"
    transient = "transient"
    stale = "stale"
    silent_noop = "silent_noop"
    corrupted = "corrupted"
    schema_drift = "schema_drift"
    ambiguous = "ambiguous"
    cascade = "cascade"


class Persistence(Strict):
    """``permanent``, or ``temporary`` with ``after``: the fault fires on the first ``after`` calls, then heals."""

    mode: Literal["permanent", "temporary"] = "permanent"
    after: int | None = Field(default=None, ge=1, le=1000)

    @model_validator(mode="after")
    def _after_matches_mode(self) -> Persistence:
        if self.mode == "temporary" and self.after is None:
            raise ValueError("temporary persistence needs 'after' (the number of calls the fault lasts)")
        if self.mode == "permanent" and self.after is not None:
            raise ValueError("'after' is only meaningful with mode 'temporary'")
        return self


# Symbolic targets, resolved against a scenario when a setting is applied.
TARGET_SOLUTION = "@solution"  # every tool used by any gold plan
TARGET_PRIMARY = "@primary"  # the tools of the first gold plan
SYMBOLIC_TARGETS = (TARGET_SOLUTION, TARGET_PRIMARY)

# The errors a transient fault can return (env_core.faults words each one).
TRANSIENT_ERRORS = ("service_unavailable", "rate_limit", "timeout")
# An unavailable tool says so plainly by default, or fails the way a real service does, auth included (``auth``: a
# 401, an expired token; ``forbidden``: a 403). Whatever it names and however long it lasts, it reads as an outage
# or a denial, never as a momentary failure to retry (that is ``transient``).
UNAVAILABLE_ERRORS = ("unavailable", *TRANSIENT_ERRORS, "auth", "forbidden")
# Error types a client might take as worth retrying: a tool message with one of these (or with any error marked
# retryable) carries ``retryable`` beside the type and the message (Observation.content).
RETRY_SIGNALLED = (*TRANSIENT_ERRORS, "dependency_failed")
CORRUPTION_MODES = ("decimal_shift", "wrong_year", "duplicate", "phantom", "bad_total", "set")
DRIFT_MODES = ("rename", "retype", "arguments")


class ParamRule(NamedTuple):
    """What one fault parameter takes: one of ``choices``, or else a value of ``type`` (an int within
    ``bounds``); ``required`` parameters have no default."""

    choices: tuple[str, ...] = ()
    type: type = str
    bounds: tuple[int, int] = (1, 1000)
    required: bool = False


# The parameters each fault kind takes: name -> rule. A kind not listed takes none. Defaults live in env_core.faults.
FAULT_PARAMS: dict[FaultKind, dict[str, ParamRule]] = {
    FaultKind.unavailable: {"error": ParamRule(UNAVAILABLE_ERRORS)},
    FaultKind.transient: {"error": ParamRule(TRANSIENT_ERRORS)},
    FaultKind.stale: {"age_days": ParamRule(type=int, bounds=(1, 3650))},
    FaultKind.silent_noop: {"returns": ParamRule(("result", "ok")), "apply": ParamRule(("none", "partial"))},
    FaultKind.corrupted: {
        "mode": ParamRule(CORRUPTION_MODES),
        "field": ParamRule(),  # the field a mode alters (default: any it finds); needed by ``set``
        "value": ParamRule(type=object),  # ``set``: the wrong value the field takes in every record
    },
    FaultKind.schema_drift: {
        "mode": ParamRule(DRIFT_MODES),
        "field": ParamRule(),  # the response field (rename / retype) or the argument (arguments) that drifts
        "to": ParamRule(),  # its new name
    },
    FaultKind.ambiguous: {"count": ParamRule(type=int, bounds=(1, 20))},
    FaultKind.cascade: {"on": ParamRule(required=True)},
}


def _check_param(kind: FaultKind, name: str, value: Any) -> None:
    """Raise a readable error, with a did-you-mean hint, for a parameter ``kind`` does not take or a bad value."""
    allowed = FAULT_PARAMS.get(kind, {})
    if name not in allowed:
        takes = f"it takes: {', '.join(allowed)}" if allowed else "it takes none"
        close = difflib.get_close_matches(name, list(allowed), n=1)
        hint = f"did you mean '{close[0]}'?" if close else takes
        raise ValueError(f"params.{name}: unknown parameter of a '{kind.value}' fault; {hint}")
    rule = allowed[name]
    if rule.choices:
        if value not in rule.choices:
            close = difflib.get_close_matches(str(value), list(rule.choices), n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"expected one of: {', '.join(rule.choices)}"
            raise ValueError(f"params.{name}: unknown value {value!r}; {hint}")
    elif rule.type is object:
        if not isinstance(value, str | int | float | bool) or value == "":
            raise ValueError(f"params.{name}: expected a number, text or true/false, got {value!r}")
    elif rule.type is int:
        low, high = rule.bounds
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"params.{name}: expected an integer from {low} to {high}, got {value!r}")
    elif not isinstance(value, str) or not value:
        raise ValueError(f"params.{name}: expected a non-empty name, got {value!r}")


class FaultSpec(Strict):
    """A fault wrapped around one or more tools for one episode.

    ``target`` is a tool name, a list of tool names, or a symbolic target (``@solution``, ``@primary``) that is
    resolved against the scenario's gold plans when the setting is applied. ``params`` tune the kind (see
    ``FAULT_PARAMS``); a ``cascade`` names in ``on`` the upstream tool whose fault makes the targets fail.
    """

    kind: FaultKind
    target: str | list[str]
    persistence: Persistence = Field(default_factory=Persistence)
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _supported(self) -> FaultSpec:
        if self.kind == FaultKind.removed and self.persistence.mode != "permanent":
            raise ValueError("a 'removed' tool is absent for the whole episode; use persistence 'permanent'")
        if self.kind == FaultKind.transient and self.persistence.mode != "temporary":
            raise ValueError("a 'transient' fault heals by definition; give persistence mode 'temporary' with 'after'")
        for name, value in self.params.items():
            _check_param(self.kind, name, value)
        for name, rule in FAULT_PARAMS.get(self.kind, {}).items():
            if rule.required and name not in self.params:
                raise ValueError(f"params.{name}: a '{self.kind.value}' fault needs '{name}'")
        for target in self.targets:
            if target.startswith("@") and target not in SYMBOLIC_TARGETS:
                close = difflib.get_close_matches(target, SYMBOLIC_TARGETS, n=1)
                hint = f"did you mean '{close[0]}'?" if close else f"expected {' or '.join(SYMBOLIC_TARGETS)}"
                raise ValueError(f"target: unknown symbolic target '{target}'; {hint}")
            if not target:
                raise ValueError("target: empty tool name")
        if not self.targets:
            raise ValueError("target: no tool named")
        if self.kind == FaultKind.cascade and self.params["on"] in self.targets:
            raise ValueError("params.on: a cascade's upstream tool cannot be one of its own targets")
        if self.kind == FaultKind.corrupted and self.params.get("mode") == "set":
            missing = [p for p in ("field", "value") if p not in self.params]
            if missing:
                raise ValueError(f"params.{missing[0]}: a corrupted fault with mode 'set' needs 'field' and 'value'")
        if (
            self.kind == FaultKind.schema_drift
            and "to" in self.params
            and self.params["to"] == self.params.get("field")
        ):
            raise ValueError("params.to: the drifted name must differ from the field's own name")
        return self

    @property
    def targets(self) -> list[str]:
        return [self.target] if isinstance(self.target, str) else list(self.target)


# ---------------------------------------------------------------------------------------------------------------
# Scenarios


class ResultCheck(Strict):
    """What a planned call's result must show for its plan to go on: every ``contains`` string and no ``lacks``
    string in its JSON text (case-insensitive), and, when ``equals`` is given, exactly that value. The oracle checks
    it; a silent fault (stale, corrupted, a write that did not land) fails it, and the oracle moves to its next
    plan."""

    contains: list[str] = Field(default_factory=list)
    lacks: list[str] = Field(default_factory=list)
    equals: Any = None

    def passes(self, result: Any) -> bool:
        text = json.dumps(result, ensure_ascii=False, sort_keys=True, default=str).casefold()
        if any(s.casefold() not in text for s in self.contains) or any(s.casefold() in text for s in self.lacks):
            return False
        return self.equals is None or result == self.equals


class ArgRef(Strict):
    """An argument of a planned call that comes from the result of an earlier call of the same plan.

    ``field`` selects one column of the earlier result's rows; ``many`` passes all values as a list, otherwise the
    value of the first row.
    """

    from_call: int = Field(ge=0)
    field: str
    many: bool = False


# An argument value is either a literal or a reference to an earlier call's result (tried first).
ArgValue = Annotated[ArgRef | Any, Field(union_mode="left_to_right")]


class PlannedCall(Strict):
    """One call of a gold plan. ``check``: what its result must show for the plan to go on (see ResultCheck);
    ``verify``: a confirmation step (a readback) that an agent which trusts every success skips (the naive
    policy); ``say``: what the oracle says as it makes the call (what it noticed in the result before, what it does
    now), read by stage checkpoints (``Checkpoint.within``)."""

    tool: str
    arguments: dict[str, ArgValue] = Field(default_factory=dict)
    check: ResultCheck | None = None
    verify: bool = False
    say: str | None = Field(default=None, min_length=1)


RubricTier = Literal["task", "clean", "recovery", "verify"]


class CallPattern(Strict):
    """Matches tool calls by name (one tool, or any of several: "read the state back" with whichever readback tool)
    and, optionally, by a subset of argument values (compared normalized).

    As a required call it is an evidence obligation (Failing Tools, appendix B): ``times`` matching calls must have
    succeeded (or merely been made, with ``attempted``: trying the primary before a fallback; a ``verify`` readback
    also counts when it found nothing, the evidence a lost write leaves), and with ``after`` one of them must come
    no earlier than the turn of the first match of required call number ``after`` (same turn allowed: a parallel
    cross-check). ``tier`` says which rubric enforces it: ``task`` (every rubric),
    ``clean`` (faults off only: the primary plan's own end, which a fault may rightly make impossible, as when a
    corrupted slot must be refused), ``recovery`` (the fallback or retry a fault calls for: relaxed and base, only
    when faults are on) and ``verify`` (readbacks and confirmations: base only). A forbidden call is forbidden under
    the rubrics of its tier."""

    tool: str | list[str]
    arguments: dict[str, Any] = Field(default_factory=dict)
    tier: RubricTier = "task"
    attempted: bool = False
    after: int | None = Field(default=None, ge=0)
    times: int = Field(default=1, ge=1, le=100)
    loose: bool = Field(
        default=False,
        description="the arguments name entities the call must be about, compared loosely: the values as sets "
        "(order apart), and a text value matching when the words of one contain the other's ('Napa Valley' for "
        "'Napa Valley, CA'): a fallback grounded in the task's entities, whatever its wording; calls about part of "
        "a list count only together with calls naming the rest (re-adding the item that did not land)",
    )
    payee: str | None = Field(
        default=None,
        description="forbidden payments only: the argument naming who is paid (a list there names several payees, "
        "each paid the amount); the pattern's one argument, a number, is the amount. Such a pattern matches a call "
        "within max(1%, 1.0) of the amount, and calls to one payee whose amounts add up to it (scoring.trajectory)",
    )

    @field_validator("tool")
    @classmethod
    def _some_tool(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, list) and not value:
            raise ValueError("name at least one tool")
        return value

    @model_validator(mode="after")
    def _payee_has_an_amount(self) -> CallPattern:
        if self.payee is None:
            return self
        amounts = list(self.arguments.values())
        if len(amounts) != 1 or isinstance(amounts[0], bool) or not isinstance(amounts[0], int | float):
            raise ValueError("with payee, arguments name exactly one argument: the amount, a number")
        if not 0 < amounts[0] <= 1_000_000:  # sums are searched over cents: a bound keeps that search small
            raise ValueError(f"with payee, the amount must be positive and at most 1,000,000, got {amounts[0]!r}")
        if self.payee in self.arguments:
            raise ValueError(f"payee {self.payee!r} cannot also be the amount")
        return self

    @property
    def tools(self) -> list[str]:
        return [self.tool] if isinstance(self.tool, str) else list(self.tool)


class Checkpoint(Strict):
    """A recovery checkpoint: after ``trigger`` (a tool name, or ``final``), the assistant text that follows must
    state every concept in ``expect`` (matched as normalized concepts; see the family's scorer). A *stage*
    checkpoint (a tool trigger) reads only the text said within ``within`` calls of the trigger's first call: the
    turns up to and including the one that makes the ``within``-th call after it, and the final answer if it comes
    before that — the paper's penalty for detours. ``weight``: its share of the score. ``tier``: ``task``
    checkpoints hold in every rubric, ``clean`` ones only with faults off, ``recovery`` ones only when faults are on
    (the base rubric)."""

    trigger: str = "final"
    expect: list[str] = Field(min_length=1)
    weight: float = Field(default=1.0, gt=0)
    tier: Literal["task", "clean", "recovery"] = "task"
    within: int = Field(default=2, ge=1, le=100)


class Gold(Strict):
    """What a correct episode looks like.

    ``plans`` are alternative, tool-disjoint ways to reach ``answer``: the first is the primary plan, the rest are
    backups. ``answer`` is the list of records the task asks for.
    """

    answer: Any = None
    ordered: bool = Field(default=False, description="the answer's row order matters (the gold query orders rows)")
    tie_groups: list[int] = Field(
        default_factory=list,
        description="where ordered: per answer row, the number of its run of rows with equal sort keys (rows of one "
        "run may come in any order); empty: every row is its own",
    )
    plans: list[list[PlannedCall]] = Field(default_factory=list)
    required_calls: list[CallPattern] = Field(default_factory=list)
    forbidden_calls: list[CallPattern] = Field(default_factory=list)
    checkpoints: list[Checkpoint] = Field(default_factory=list)
    reports: list[str] = Field(
        default_factory=list,
        description="the final answer to give after each plan (same order as plans; empty: the last result)",
    )
    synonyms: dict[str, list[str]] = Field(
        default_factory=dict, description="per concept, other words that state it (checkpoint matching)"
    )

    @model_validator(mode="after")
    def _reports_match_plans(self) -> Gold:
        if self.reports and len(self.reports) != len(self.plans):
            raise ValueError(f"reports: {len(self.reports)} given for {len(self.plans)} plans; give one per plan")
        return self

    def graded(self) -> bool:
        """Whether an answer can be checked against anything here (an imported dataset may ship no gold at all:
        then a judge model grades the episode)."""
        return self.answer is not None or bool(self.plans or self.checkpoints or self.required_calls)

    def solution_tools(self) -> list[str]:
        seen: dict[str, None] = {}
        for plan in self.plans:
            for call in plan:
                seen.setdefault(call.tool, None)
        return list(seen)


class DisclosureRule(Strict):
    """Hidden tools that join the tool list once a trigger fires (staged disclosure).

    Triggers: ``after_failure_of`` (a call to that tool returned an error), ``after_call_of`` (that tool was called,
    whatever came back), or neither (a failed call of any tool). ``after_calls`` counts: alone, that many tool calls
    of any kind were made in the episode; with a named tool, that many failures (or calls) of it, so "after three
    attempts at the booking API" is ``after_call_of: book, after_calls: 3``.
    """

    tools: list[str]
    after_failure_of: str | None = None
    after_call_of: str | None = None
    after_calls: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _one_named_trigger(self) -> DisclosureRule:
        if self.after_failure_of is not None and self.after_call_of is not None:
            raise ValueError("give after_failure_of or after_call_of, not both")
        return self


ASK_USER = "ask_user"  # the tool through which the agent asks the user (offered when a scenario scripts replies)
ASK_HUMAN = "ask_human"  # FAIL-TaLMs' Ask-and-Help: a simulated person (offered under a setting with ask_human)

# FAIL-TaLMs' settings as transformations of any scenario: the request with a needed value left out, a needed tool
# taken away (one a person could stand in for, or one nobody could), or every tool taken away
Condition = Literal["none", "underspecified", "replaceable", "non_replaceable", "no_tools"]


class HelperModel(Strict):
    """An OpenAI-compatible endpoint that helps run an evaluation and is never the model under test: it writes tool
    documentation, answers emulated tools, plays the person of Ask-and-Help, or judges. Its replies are cached on
    disk (``UNDERTOW_CACHE``/helpers), keyed by the request, so a rerun gets the same ones."""

    url: str = Field(description="base URL, e.g. http://127.0.0.2:8000/v1")
    name: str = Field(default="default", description="the model id it serves")
    temperature: float = Field(default=0.0, ge=0, le=2, allow_inf_nan=False)
    max_tokens: int = Field(default=512, ge=1, le=100_000)
    timeout_s: float = Field(default=120.0, gt=0, le=86_400, allow_inf_nan=False, description="seconds per request")
    max_retries: int = Field(default=3, ge=0, le=100, description="retries of a failed request (with backoff)")
    api_key_env: str = Field(
        default="OPENAI_API_KEY", description='environment variable holding the API key ("EMPTY" if unset)'
    )
    cache: bool = Field(default=True, description="keep replies on disk and reuse them for the same request")


class UserReply(Strict):
    """A scripted user turn: when the agent asks the user (``ask_user``) a question that mentions any of ``about``
    (any question when empty), the user answers ``say``."""

    about: list[str] = Field(default_factory=list)
    say: str = Field(min_length=1)


class Mask(Strict):
    """An under-specified variant of a scenario (FAIL-TaLMs §3.2.2): the task with one value it needs left out,
    and that value, kept as hidden ground truth (what a person asked for it would say)."""

    task: str = Field(min_length=1, description="the task text without the value")
    tool: str = Field(description="the tool whose argument needs the value")
    argument: str = Field(description="that argument's name")
    value: Any = Field(description="the value left out")
    phrase: str = Field(default="", description="how the user says it when asked (default: the value as text)")


class Scenario(Versioned):
    id: str = Field(min_length=1)
    family: str
    task: str = Field(min_length=1)
    tools: list[str] = Field(description="names of the tools visible from the start")
    hidden_tools: list[str] = Field(default_factory=list)
    disclosure: list[DisclosureRule] = Field(default_factory=list)
    faults: list[FaultSpec] = Field(default_factory=list, description="the scenario's own fault plan")
    gold: Gold
    variant_of: str | None = Field(
        default=None, description="the scenario this one was derived from (an augmentation); None: an original"
    )
    hint: str | None = Field(
        default=None,
        description="extra problem-specific information that disambiguates the task; the agent sees it only under "
        "a setting with hints: true (HoHW Table 4)",
    )
    user_replies: list[UserReply] = Field(
        default_factory=list,
        description="scripted answers of the user; when given, the agent can ask the user (the ask_user tool)",
    )
    follow_ups: list[str] = Field(
        default_factory=list, description="user messages that follow the agent's answers, in order (multi-turn)"
    )
    masks: list[Mask] = Field(
        default_factory=list,
        description="hand-written under-specified variants (the first is used by the underspecified setting)",
    )
    replaceable: dict[str, bool] = Field(
        default_factory=dict,
        description="per gold tool: whether an average person could stand in for it with little effort "
        "(the unavailable-tool settings remove a replaceable or a non-replaceable one)",
    )
    condition: Condition | None = Field(
        default=None,
        description="the condition this scenario already is in (an imported dataset ships every setting's variant "
        "of a request): it runs only under settings of that condition ('none' for the perfect one), untransformed",
    )
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _disclosed_tools_are_hidden(self) -> Scenario:
        for rule in self.disclosure:
            unknown = [t for t in rule.tools if t not in self.hidden_tools]
            if unknown:
                raise ValueError(f"disclosure rule reveals tools that are not in hidden_tools: {unknown}")
        return self


# ---------------------------------------------------------------------------------------------------------------
# Episodes


class ToolCall(Strict):
    """A call as the model wrote it: every field is model text, cleaned (env_core.untrusted)."""

    id: ArgumentText
    name: ArgumentText
    arguments: ArgumentValue = Field(default_factory=dict)
    # Set when the model's arguments were not valid JSON: the raw text is kept for the trace.
    unparsed_arguments: ArgumentText | None = None


class Action(Strict):
    """What the agent does in one step: call a tool, run code (CodeAct), answer, or give up (declare the task
    unsolvable). The tool calls a code block makes are recorded as their own ``tool_call`` steps."""

    kind: Literal["tool_call", "code", "final_answer", "give_up"]
    tool_call: ToolCall | None = None
    content: ModelText | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Action:
        if (self.kind == "tool_call") != (self.tool_call is not None):
            raise ValueError("tool_call is required for kind 'tool_call' and only then")
        return self


class ToolError(Strict):
    type: (
        str  # unavailable | timeout | rate_limit | service_unavailable | invalid_arguments | unknown_tool | tool_error
    )
    message: ArgumentText  # may quote the model's arguments
    retryable: bool = False


class FiredFault(Strict):
    kind: FaultKind
    index: int  # position in the episode's fault plan
    detail: str = ""


class Observation(Strict):
    call_id: ArgumentText
    tool: ArgumentText
    ok: bool
    result: ModelValue = None
    error: ToolError | None = None
    fault: FiredFault | None = None
    latency_ms: float = 0.0
    disclosed: list[str] = Field(default_factory=list)
    notes: list[ModelText] = Field(default_factory=list)  # text the tool printed beside its result (hints)
    emulated: bool = False  # a helper model answered for a tool whose real API is out of reach

    def content(self) -> str:
        """The observation as the model reads it (the tool message content)."""
        if self.ok:
            body: Any = self.result
        else:
            assert self.error is not None
            body = {"error": {"type": self.error.type, "message": self.error.message}}
            # an error of a kind a client might retry says whether retrying the same call helps (a transient fault
            # yes, an outage no); other errors read as they always have
            if self.error.retryable or self.error.type in RETRY_SIGNALLED:
                body["error"]["retryable"] = self.error.retryable
        text = json.dumps(body, ensure_ascii=False, default=str)
        if self.notes:
            text += "\n" + "\n".join(self.notes)
        if self.disclosed:
            text += "\n[new tools are now available: " + ", ".join(self.disclosed) + "]"
        return text


class Usage(Strict):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens served from the server's prefix cache


class Step(Strict):
    turn: int
    action: Action
    observation: Observation | None = None


class Turn(Strict):
    """One model reply as received — text, native tool calls, finish reason, usage — with its latency, the hashes
    of the request and the response (replay checks them), and how its text was parsed. The actions it led to are
    the steps with this turn index."""

    # parse_error is set after the turn is recorded: assignments are cleaned too
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    index: int
    content: ModelText | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    latency_ms: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    request_sha256: str = ""
    response_sha256: str = ""
    # which parser stage read the reply: text protocols always; function calling when its calls came as text
    parse_stage: str | None = None
    parse_error: ModelText | None = None  # the reply could not be parsed (fed back to the model)


class Outcome(StrEnum):
    scored = "scored"  # the episode ended with an answer or a give-up and was scored
    model_error = "model_error"  # the model's reply was unusable (empty, truncated, refused by the server)
    parse_error = "parse_error"  # the model kept producing replies that could not be parsed into actions
    infra_error = "infra_error"  # the endpoint or the harness failed: never counted as a model failure; rerunnable
    budget_exhausted = "budget_exhausted"  # the turn budget ran out before an answer
    # the config or the data is wrong (a bad parameter, a missing file): it fails the same way on every attempt, so
    # it is neither retried nor rerunnable, and says nothing about the model
    config_error = "config_error"
    # model-written code hit a limit or a rule of the sandbox (env_core.sandbox): the model's doing, so it is judged
    # (a failure in every rate) and never rerun
    sandbox_violation = "sandbox_violation"

    @property
    def judged(self) -> bool:
        """Whether the episode says something about the model (infrastructure and config errors do not)."""
        return self not in (Outcome.infra_error, Outcome.config_error)


class AwarenessAnswer(Strict):
    """The agent's answer to an awareness question asked before it acted (FAIL-TaLMs §3.4.2)."""

    question: Literal["info", "tool"]
    answer: Literal["yes", "idk", "no"] | None = Field(description="None: the reply began with none of them")
    reply: ModelText = ""


class Trajectory(Versioned):
    # final_answer, answer_result and error are set as the episode goes: assignments are cleaned too
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    episode_id: str
    scenario_id: str
    model: str
    setting: str
    seed: int
    faults: list[FaultSpec] = Field(default_factory=list)
    turns: list[Turn] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)
    final_answer: ModelText | None = None
    gave_up: bool = False
    awareness: AwarenessAnswer | None = None  # the awareness question's answer, under a setting that asks one
    skipped: bool = False  # the agent answered No to the awareness question, so the task was not attempted
    # what the final answer denotes in the episode's environment (ToolBox.answer_result: a query's rows, a
    # variable's entities), worked out when the answer was given; None where the tool box has no reading of it
    answer_result: ModelValue = None
    outcome: Outcome = Outcome.scored
    error: ModelText | None = None  # "Type: message" of what ended the episode early
    error_trace: ModelText | None = None  # the last frames of its traceback, one "file:line in function" per line

    def tool_steps(self) -> list[Step]:
        return [s for s in self.steps if s.action.kind == "tool_call"]


class EpisodeResult(Versioned):
    """One row of the results table. Flat on purpose: it is written to Parquet as is."""

    episode_id: str
    shard_id: str = ""
    model: str
    suite: str
    family: str
    setting: str
    seed: int
    scenario_id: str
    # Episodes that share a cluster are not independent (seeds and augmentations of one original scenario):
    # clustered intervals resample clusters, not episodes. Empty: the scenario is its own cluster.
    cluster_id: str = ""
    outcome: Outcome
    solved: bool = False  # the answer matched the gold answer
    gave_up: bool = False  # the agent declared the task unsolvable
    expected_give_up: bool = False  # the setting left no working plan, so giving up is the right behaviour
    correct: bool = False  # the right behaviour: solved when solvable, gave up when not, and no safety violation
    safety_violation: bool = False  # a forbidden call was made
    missing_required: int = 0
    checkpoint_score: float | None = None
    score: float = 0.0
    n_turns: int = 0
    n_tool_calls: int = 0
    n_tool_errors: int = 0
    faults_fired: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    n_parse_failures: int = 0  # replies that could not be parsed into actions
    # function calling: replies whose calls came as text, not structured tool_calls (the server's parser or chat
    # template does not match the model)
    n_text_calls: int = 0
    wall_ms: float = 0.0
    model_ms: float = 0.0
    tool_ms: float = 0.0
    error: ModelText | None = None  # "Type: message" of what ended the episode early
    error_trace: ModelText | None = None  # the last frames of its traceback (status shows them)
    worker: str = ""  # host:pid of the process that ran the episode
    details: ModelRecord = Field(default_factory=dict)  # family-specific per-episode facts (error category, ...)
    # how the answer was matched against gold (the suite's ``answers``): strict (records keyed by the original
    # column names) or lenient (the gold values anywhere in the answer, prose included)
    answers: Literal["lenient", "strict"] = "lenient"
    # the suite's tool access (env_core.search.ToolAccess), so that an analysis need not read it from the suite's
    # label; None in results recorded before it was kept
    access_mode: Literal["closed", "open"] | None = None
    access_functions: int | None = None  # closed: how many tools were listed in all (None: not fixed)
    access_distractors: int | None = None  # closed: how many extra tools were listed
