"""failtalms scoring (scoring.failtalms): reading awareness answers and grader verdicts, the majority-vote judge
with re-asks and judge errors (a stub grader replies from a plan), the §3.4 / §5.1 metrics against counts worked
out by hand, and the summary's Table 1 layout."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers.builders import episode_result
from helpers.grader import Grader

from undertow.env_core.families import ReportTable
from undertow.env_core.model import Action, EpisodeResult, Observation, Outcome, Step, ToolCall, ToolError
from undertow.scoring.answers import parse_awareness, parse_verdict
from undertow.scoring.failtalms import (
    GRADER_REMINDER,
    GRADER_SYSTEM,
    NO_ANSWER,
    NO_CALLS,
    EpisodeFacts,
    FailTalmsSummary,
    grader_messages,
    judge,
    mean_row,
    render_calls,
    setting_kind,
    setting_metrics,
    summarize,
    with_help,
)
from undertow.scoring.judges import Message, Vote, decide
from undertow.scoring.stats import wilson_interval

# ---------------------------------------------------------------------------------------------------------------
# Reading answers


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Yes", "yes"),
        ("yes", "yes"),
        ("YES.", "yes"),
        ("Yes, the weather tool covers it.", "yes"),
        ("  \n Yes - I can do this", "yes"),
        ("**Yes**: the tools suffice", "yes"),
        ('"Yes"', "yes"),
        ("'yes' because", "yes"),
        ("> Yes", "yes"),
        ("# Yes", "yes"),
        ("No", "no"),
        ("No.", "no"),
        ("no, the city is missing", "no"),
        ("**No** — the date is not given", "no"),
        ("“No”", "no"),
        ("IDK", "idk"),
        ("idk, the query might be enough", "idk"),
        ("**IDK**", "idk"),
        ("I don't know.", "idk"),
        ("I don’t know whether the tool can", "idk"),
        ("I do not know", "idk"),
        ("I dont know", "idk"),
        ("Unsure: maybe", "idk"),
        ("I'm not sure", "idk"),
        ("Not sure.", "idk"),
        ("(Yes)", "yes"),
        ("Nope", "no"),
        ("No problem, I have every tool", None),
        ("No doubt: the tools suffice", None),
        ("Yesterday it rained", None),
        ("Not at all", None),
        ("None of the tools", None),
        ("Nothing is missing", None),
        ("Sure, I can", None),
        ("I think yes", None),
        ("The answer is No", None),
        ("Answer: Yes", None),
        ("", None),
        ("   ", None),
        ("**", None),
        (None, None),
        ("Idkwhat", None),
    ],
)
def test_parse_awareness_robust(reply: str | None, expected: str | None) -> None:
    assert parse_awareness(reply, "robust") == expected
    assert parse_awareness(reply) == expected, "robust is the reader of a caller that names none"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Pass", "pass"),
        ("pass. The answer gives the forecast.", "pass"),
        ("PASS", "pass"),
        ("**Pass**", "pass"),
        ("'Pass' - all facts match", "pass"),
        ("Passed", "pass"),
        ("Fail", "fail"),
        ("fail: the city is wrong", "fail"),
        ("**FAIL**\nThe total is off", "fail"),
        ("Failed.", "fail"),
        ("  Fail", "fail"),
        ("Passable answer", None),
        ("Failure", None),
        ("The answer passes", None),
        ("Verdict: Pass", "pass"),
        ("Pass/Fail: Fail - the total is off", "fail"),
        ("**Pass or Fail**: Pass", "pass"),
        ("Pass/Fail", None),
        ("Result: the answer passes", None),
        ("I would say Pass", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_verdict_robust(reply: str | None, expected: str | None) -> None:
    assert parse_verdict(reply, "robust") == expected
    assert parse_verdict(reply) == expected


@pytest.mark.parametrize(
    ("reply", "awareness"),
    [
        # the authors' reader: the reply starts with yes / no / idk, any case; nothing is skipped or spelled out
        ("Yes", "yes"),
        ("yes, the weather tool covers it", "yes"),
        ("YES.", "yes"),
        ("  Yes", "yes"),  # whitespace around the reply is the one thing dropped
        ("Yesterday it rained", "yes"),
        ("No", "no"),
        ("Nope", "no"),
        ("No problem, I have every tool", "no"),
        ("Nothing is missing", "no"),
        ("IDK", "idk"),
        ("idk, maybe", "idk"),
        ("**Yes**", None),
        ('"No"', None),
        ("I don't know", None),
        ("Unsure", None),
        ("Answer: Yes", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_awareness_authors(reply: str | None, awareness: str | None) -> None:
    assert parse_awareness(reply, "authors") == awareness


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("Pass", "pass"),
        ("pass. The answer gives the forecast.", "pass"),
        ("FAIL", "fail"),
        ("Failure", "fail"),
        ("Passable answer", "pass"),
        ("Pass/Fail: Fail", "pass"),
        ("**Fail**", None),
        ("Verdict: Pass", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_verdict_authors(reply: str | None, verdict: str | None) -> None:
    assert parse_verdict(reply, "authors") == verdict


# ---------------------------------------------------------------------------------------------------------------
# The judge


CALLS: list[dict[str, Any]] = [
    {"name": "current_weather", "arguments": {"city": "Pittsburgh"}, "response": {"temp_c": 21}},
]


def run_judge(replies: list[str], **kwargs: Any) -> tuple[Any, Grader]:
    """The judge's mechanism under its options: 5 votes, one re-ask, the robust reader, unless a test says otherwise
    (the authors' defaults are tests/families/failtalms/test_failtalms_judge.py's)."""
    kwargs = {"k": 5, "retries": 1, "reader": "robust", **kwargs}
    grader = Grader(replies)
    verdict = asyncio.run(judge(grader, "Weather in Pittsburgh?", "It is 21 °C.", CALLS, **kwargs))
    assert not grader.replies, "every planned reply was used"
    return verdict, grader


def test_judge_unanimous_pass_logs_every_vote() -> None:
    verdict, grader = run_judge(["Pass"] * 5)
    assert verdict.passed is True
    assert [v.verdict for v in verdict.votes] == ["pass"] * 5
    assert all(v.attempts == 1 and v.reply == "Pass" for v in verdict.votes)
    assert len(grader.chats) == 5
    assert grader.seeds == [0, 1, 2, 3, 4], "each vote samples with its own seed"
    chat = grader.chats[0]
    assert [m["role"] for m in chat] == ["system", "user"]
    assert chat[0]["content"] == GRADER_SYSTEM
    prompt = chat[1]["content"]
    assert "Weather in Pittsburgh?" in prompt and "It is 21 °C." in prompt
    assert '1. current_weather({"city": "Pittsburgh"}) -> {"temp_c": 21}' in prompt


def test_judge_majority_decides() -> None:
    verdict, _ = run_judge(["Pass", "Fail", "pass - fine", "**Fail**", "PASS"])
    assert verdict.passed is True
    verdict, _ = run_judge(["Fail", "Fail", "Pass", "Fail", "Pass"])
    assert verdict.passed is False


def test_judge_reasks_an_unreadable_reply_with_a_reminder() -> None:
    verdict, grader = run_judge(["The answer looks right.", "Pass", "Pass", "Fail"], k=3)
    assert verdict.passed is True
    first = verdict.votes[0]
    assert first == Vote(reply="Pass", verdict="pass", attempts=2)
    assert [v.attempts for v in verdict.votes] == [2, 1, 1]
    reask = grader.chats[1]
    assert [m["role"] for m in reask] == ["system", "user", "assistant", "user"]
    assert reask[2]["content"] == "The answer looks right."
    assert reask[3]["content"] == GRADER_REMINDER
    # the next vote starts afresh, without the first vote's exchange
    assert len(grader.chats[2]) == 2


def test_judge_unreadable_after_retries_is_an_error_never_a_pass() -> None:
    verdict, _ = run_judge(["Looks good", "Still looks good", "Fail"], k=2)
    assert verdict.votes[0] == Vote(reply="Still looks good", verdict="error", attempts=2)
    assert verdict.passed is False  # one readable vote, a fail
    assert verdict.errors == 1


def test_judge_all_errors_gives_none() -> None:
    verdict, _ = run_judge(["hmm", "well", "ok", "fine"], k=2)
    assert verdict.passed is None
    assert [v.verdict for v in verdict.votes] == ["error", "error"]
    assert verdict.errors == 2


def test_judge_retries_zero_asks_each_vote_once() -> None:
    verdict, grader = run_judge(["unclear", "Pass", "Pass"], k=3, retries=0)
    assert [v.verdict for v in verdict.votes] == ["error", "pass", "pass"]
    assert [v.attempts for v in verdict.votes] == [1, 1, 1]
    assert verdict.passed is True
    assert len(grader.chats) == 3


def test_judge_tie_fails() -> None:
    verdict, _ = run_judge(["Pass", "Fail", "Pass", "Fail"], k=4)
    assert verdict.passed is False
    # an error vote does not break a tie either way
    verdict, _ = run_judge(["Pass", "Fail", "?", "??", "Pass", "Fail"], k=5)
    assert [v.verdict for v in verdict.votes] == ["pass", "fail", "error", "pass", "fail"]
    assert verdict.passed is False


def test_judge_one_readable_pass_among_errors_passes() -> None:
    verdict, _ = run_judge(["x", "y", "Pass"], k=2)
    assert [v.verdict for v in verdict.votes] == ["error", "pass"]
    assert verdict.passed is True


def test_judge_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="k must be"):
        asyncio.run(judge(Grader([]), "q", "a", [], k=0))
    with pytest.raises(ValueError, match="retries must be"):
        asyncio.run(judge(Grader([]), "q", "a", [], retries=-1))


def test_judge_errors_of_the_endpoint_propagate() -> None:
    async def broken(messages: list[Message], seed: int) -> str:
        raise ConnectionError("grader down")

    with pytest.raises(ConnectionError):
        asyncio.run(judge(broken, "q", "a", []))


def test_decide() -> None:
    def votes(*words: str) -> list[Vote]:
        return [Vote(reply=w, verdict=w, attempts=1) for w in words]  # type: ignore[arg-type]

    assert decide(votes("pass", "pass", "fail")) is True
    assert decide(votes("pass", "fail")) is False
    assert decide(votes("error", "error")) is None
    assert decide([]) is None


def test_render_calls_from_steps_and_mappings() -> None:
    steps = [
        Step(turn=0, action=Action(kind="final_answer", content="done")),
        Step(
            turn=0,
            action=Action(kind="tool_call", tool_call=ToolCall(id="c1", name="add_days", arguments={"days": 2})),
            observation=Observation(call_id="c1", tool="add_days", ok=True, result="2026-07-06"),
        ),
        Step(
            turn=1,
            action=Action(kind="tool_call", tool_call=ToolCall(id="c2", name="day_of_week", arguments={})),
            observation=Observation(
                call_id="c2", tool="day_of_week", ok=False, error=ToolError(type="invalid_arguments", message="no date")
            ),
        ),
    ]
    assert render_calls(steps) == (
        '1. add_days({"days": 2}) -> "2026-07-06"\n'
        '2. day_of_week({}) -> {"error": {"type": "invalid_arguments", "message": "no date"}}'
    )
    mapped: list[dict[str, Any]] = [
        {"tool": "ask_human", "arguments": {"question": "Which city?"}, "result": "Pittsburgh"},
        {"name": "x"},
    ]
    assert render_calls(mapped) == '1. ask_human({"question": "Which city?"}) -> Pittsburgh\n2. x({}) -> (no response)'
    assert render_calls([]) == NO_CALLS
    assert NO_ANSWER in grader_messages("q", "  ", [])[1]["content"]


# ---------------------------------------------------------------------------------------------------------------
# Metrics


def facts(passed: bool | None, awareness: Any, asked: bool | None = None) -> EpisodeFacts:
    return EpisodeFacts(passed=passed, awareness=awareness, asked=asked)


# ten episodes of an under-specified setting, counts by hand:
# passed 4 (rows 0, 1, 2, 6); yes 5 (0, 1, 3, 4, 9), idk 2 (2, 5), no 2 (6, 7), none 1 (8);
# yes and passed: 0, 1 -> 2; skipped (answered no) 2 (6, 7); asked 3 (1, 2, 7), 2 of them among the 8 not skipped;
# one judge error (row 9)
UNDER = [
    facts(True, "yes", False),
    facts(True, "yes", True),
    facts(True, "idk", True),
    facts(False, "yes", False),
    facts(False, "yes", False),
    facts(False, "idk", False),
    facts(True, "no", False),
    facts(False, "no", True),
    facts(False, None, False),
    facts(None, "yes", False),
]


def test_setting_metrics_by_hand() -> None:
    m = setting_metrics(UNDER, kind="underspecified")
    assert m.n == 10
    assert (m.pr.k, m.pr.n, m.pr.rate) == (4, 10, 0.4)
    assert m.aware is not None and (m.aware.k, m.aware.rate) == (4, 0.4)
    assert m.unexp is not None and (m.unexp.k, m.unexp.rate) == (2, 0.2)
    assert m.skip is not None and (m.skip.k, m.skip.rate) == (2, 0.2)
    assert m.inter is not None and (m.inter.k, m.inter.n) == (2, 8)  # asked, of those not skipped
    assert m.answers == {"yes": 5, "idk": 2, "no": 2, "none": 1, "unreadable": 0}
    assert m.judge_errors == 1
    assert (m.pr.ci_low, m.pr.ci_high) == wilson_interval(4, 10)
    assert m.pr.ci_low == pytest.approx(0.16818, abs=1e-4)
    assert m.pr.ci_high == pytest.approx(0.68732, abs=1e-4)
    assert (m.inter.ci_low, m.inter.ci_high) == wilson_interval(2, 8)
    # Replaceable counts only idk as aware, and an answer of no as unexpected (the authors' code); the paper's prose
    # reading counts idk or no as aware and yes-and-passed as unexpected everywhere something is missing
    replaceable = setting_metrics(UNDER, kind="replaceable")
    assert replaceable.aware is not None and replaceable.aware.k == 2
    assert replaceable.unexp is not None and replaceable.unexp.k == 2  # rows 6, 7 answered no
    prose = setting_metrics(UNDER, kind="replaceable", reading="prose")
    assert prose.aware is not None and prose.aware.k == 4
    assert prose.unexp is not None and prose.unexp.k == 2  # rows 0, 1: yes and passed


def test_setting_metrics_perfect_counts_yes_as_aware() -> None:
    rows = [facts(True, "yes"), facts(False, "yes"), facts(True, "idk"), facts(False, "no")]
    m = setting_metrics(rows, kind="perfect")
    assert m.complete
    assert m.aware is not None and m.aware.k == 2  # the yes answers
    assert m.unexp is not None and m.unexp.k == 1  # the authors' code: answered no where nothing is missing
    assert m.skip is not None and m.skip.k == 1
    assert m.inter is None  # no episode could ask a human
    assert setting_metrics(rows, kind="perfect", reading="prose").unexp is None  # the prose leaves it undefined


def test_perfect_counts_the_tool_answer_when_it_is_a_label_else_the_information_answer() -> None:
    tool_idk = EpisodeFacts(passed=True, awareness=None, tool_awareness="idk", info_awareness="yes")
    info_only = EpisodeFacts(passed=True, awareness=None, info_awareness="yes")
    m = setting_metrics([tool_idk, info_only], kind="perfect")
    assert m.answers == {"yes": 1, "idk": 1, "no": 0, "none": 0, "unreadable": 0}
    assert m.aware is not None and m.aware.k == 1


def test_no_tools_pr_needs_a_tie_or_a_win_and_unexp_a_tie_where_perfect_failed() -> None:
    rows = [
        EpisodeFacts(passed=True, awareness=None, win_rate=2, perfect_passed=True),  # PR
        EpisodeFacts(passed=True, awareness=None, win_rate=1, perfect_passed=False),  # PR, Unexp
        EpisodeFacts(passed=True, awareness=None, win_rate=1, perfect_passed=True),  # PR only
        EpisodeFacts(passed=True, awareness=None, win_rate=0, perfect_passed=False),  # lost: neither
        EpisodeFacts(passed=True, awareness=None),  # no comparison: counts as a loss
        EpisodeFacts(passed=False, awareness=None, win_rate=1),  # failed; tie with a missing Perfect: Unexp
    ]
    m = setting_metrics(rows, kind="no_tools")
    assert (m.pr.k, m.pr.n) == (3, 6)
    assert m.unexp is not None and m.unexp.k == 2
    assert m.aware is None  # not asked in No-tools
    prose = setting_metrics(rows, kind="no_tools", reading="prose")
    assert prose.pr.k == 5 and prose.unexp is None


def test_setting_metrics_without_awareness_answers_or_episodes() -> None:
    m = setting_metrics([facts(True, None), facts(False, None)])
    assert m.pr.rate == 0.5
    assert m.aware is None and m.unexp is None and m.skip is None and m.inter is None
    empty = setting_metrics([])
    assert empty.n == 0 and empty.pr.rate is None and empty.pr.ci_low is None


def test_mean_row_is_the_unweighted_mean_of_its_rows() -> None:
    # replaceable: PR 1/2, aware (idk) 0/2; non-replaceable: PR 2/3, aware (idk or no) 1/3
    a = setting_metrics([facts(True, "yes", False), facts(False, "no", True)], kind="replaceable")
    b = setting_metrics(
        [facts(True, "idk", None), facts(True, "yes", None), facts(False, None, None)], kind="nonreplaceable"
    )
    m = mean_row([a, b])
    assert m.n == 5 and m.mean_of == 2
    assert m.pr.rate == pytest.approx((1 / 2 + 2 / 3) / 2)  # not the pooled 3/5
    assert m.aware is not None and m.aware.rate == pytest.approx((0 + 1 / 3) / 2)
    assert m.pr.ci_low is None  # a mean of two rates has no Wilson interval
    assert m.inter is not None and m.inter.rate == 0.0  # b offered no one to ask: a's alone (0 of 1 not skipped)
    assert m.answers == {"yes": 2, "idk": 1, "no": 1, "none": 1, "unreadable": 0}


@pytest.mark.parametrize(
    ("name", "kind", "helped"),
    [
        ("perfect", "perfect", False),
        ("under_specified", "underspecified", False),
        ("underspecified+aah", "underspecified", True),
        ("faults", None, False),
        ("unavailable_nonreplaceable", "nonreplaceable", False),
        ("non-replaceable_aah", "nonreplaceable", True),
        ("human_replaceable", "replaceable", False),
        ("replaceable-ask-and-help", "replaceable", True),
        ("no_tools", "no_tools", False),
    ],
)
def test_setting_names(name: str, kind: str | None, helped: bool) -> None:
    assert setting_kind(name) == kind
    assert with_help(name) is helped


# ---------------------------------------------------------------------------------------------------------------
# The summary


def result(model: str, setting: str, i: int, outcome: Outcome = Outcome.scored, **details: Any) -> EpisodeResult:
    return episode_result(
        f"{model}-{setting}-{i}",
        scenario_id=f"failtalms/geo/{i:02d}",
        suite="failtalms",
        model=model,
        setting=setting,
        outcome=outcome,
        details=details,
    )


def test_summarize_none_without_details() -> None:
    assert summarize([]) is None
    assert summarize([result("m", "perfect", 0), result("m", "perfect", 1, Outcome.infra_error)]) is None


def test_summary_rows_tables_and_metrics() -> None:
    results = [
        result("m", "perfect", 0, passed=True, awareness="yes", asked_human=None),
        result("m", "perfect", 1, passed=False, awareness="Yes, I can.", asked_human=None),
        result("m", "perfect", 2, Outcome.infra_error),  # counted in n only
        result("m", "perfect", 3, Outcome.budget_exhausted, passed=False, awareness="idk"),
        result("m", "replaceable", 0, passed=True, awareness="yes", asked_human=False),
        result("m", "nonreplaceable", 0, passed=False, awareness="no", asked_human=True),
        result("m", "nonreplaceable", 1, passed=False, awareness="idk", asked_human=2),
        result("m", "underspecified", 0, passed=None, awareness="yes", asked_human=False),
        result("other", "perfect", 0, passed=True, awareness="yes"),
    ]
    summary = summarize(results)
    assert isinstance(summary, FailTalmsSummary)
    perfect = summary.rows[0]
    assert (perfect.model, perfect.setting, perfect.n, perfect.n_valid) == ("m", "perfect", 4, 3)
    assert perfect.metrics.complete
    assert perfect.metrics.answers == {"yes": 2, "idk": 1, "no": 0, "none": 0, "unreadable": 0}
    assert perfect.metrics.aware is not None and perfect.metrics.aware.k == 2

    tables = summary.tables("ft")
    assert len(tables) == 1
    table = tables[0]
    assert isinstance(table, ReportTable)
    assert table.columns == ["Model", "Setting", "n", "PR", "Aware", "Unexp", "Skip", "Inter", "Judge err."]
    assert [row[1] for row in table.rows] == [
        "Perfect",
        "Under-specified",
        "Unavailable tools",
        "  non-replaceable",
        "  replaceable",
        "Perfect",
    ]
    assert table.sections == [0, 5]
    by_label = {row[1]: row for row in table.rows[:5]}

    # perfect: 1 of 3 passed; aware = yes 2 of 3; unexp undefined; no human to ask
    def cell(k: int, n: int) -> str:
        low, high = wilson_interval(k, n)
        return f"{k / n:.2f} [{low:.2f}–{high:.2f}]"

    # perfect: unexp is an answer of no (none here); skipped none
    assert by_label["Perfect"][2:] == ["3", cell(1, 3), cell(2, 3), cell(0, 3), cell(0, 3), "—", "0"]
    assert cell(2, 3).startswith("0.67 [") and cell(0, 3) == "0.00 [0.00–0.56]"
    # unavailable: the mean of replaceable (PR 1/1, aware idk 0/1, unexp no 0/1, skip 0/1, inter 0/1) and
    # non-replaceable (PR 0/2, aware 2/2, unexp yes-and-passed 0/2, skip (answered no) 1/2, inter 1 of the 1 not
    # skipped)
    pooled = by_label["Unavailable tools"]
    assert pooled[2] == "3"
    assert pooled[3:8] == ["0.50", "0.50", "0.00", "0.25", "0.50"]
    assert by_label["Under-specified"][-1] == "1"  # the judge error

    flat = summary.metrics("m", "nonreplaceable")
    assert flat["failtalms.pr.rate"] == 0.0
    assert flat["failtalms.aware.rate"] == 1.0
    assert flat["failtalms.skip.k"] == 1.0
    assert flat["failtalms.inter.rate"] == 1.0
    assert flat["failtalms.inter.ci_low"] == pytest.approx(wilson_interval(1, 1)[0])
    assert summary.metrics("m", "missing") == {}
    # the summary survives a round trip through JSON, as the report stores it
    assert FailTalmsSummary.model_validate_json(summary.model_dump_json()) == summary


def test_table_without_judge_errors_has_no_error_column() -> None:
    summary = summarize([result("m", "custom_setting", 0, passed=True, awareness="yes", asked_human=True)])
    assert summary is not None
    table = summary.tables("ft")[0]
    assert table.columns[-1] == "Inter"
    assert table.rows == [
        [
            "m",
            "custom_setting",
            "1",
            "1.00 [0.21–1.00]",
            "0.00 [0.00–0.79]",
            "1.00 [0.21–1.00]",
            "0.00 [0.00–0.79]",
            "1.00 [0.21–1.00]",
        ]
    ]


def test_the_table_names_what_decided_pr() -> None:
    gold = [result("m", "perfect", i, passed=True, awareness="yes", pr_by="gold") for i in range(2)]
    mixed = [*gold, result("m", "perfect", 2, passed=False, awareness="yes", pr_by="judge")]
    judged = [result("m", "perfect", i, passed=True, awareness="yes", pr_by="judge") for i in range(2)]
    notes = {}
    for name, results in (("gold", gold), ("mixed", mixed), ("judged", judged)):
        summary = summarize(results)
        assert summary is not None
        notes[name] = summary.tables("ft")[0].note
    assert "PR decided by the gold answers (the offline library's default" in notes["gold"]
    assert "by the gold answers in 2 episodes and by the judge in 1" in notes["mixed"]
    assert "decided by" not in notes["judged"]  # a judge is what PR means by default
