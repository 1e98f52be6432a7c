"""The FAIL-TaLMs judge as its authors ran it (issue 34): the readers' edge cases under both readers, the vote rules
(3 votes, each re-asked up to 3 times, majority of the readable ones, a tie fails), the suite's judge defaults and
what its endpoint receives (temperature 1.0, a seed per vote), the query as posed, and the No-tools pairwise
comparison recorded as ``win_rate``. Stub graders reply from a plan; the endpoint test runs a scripted server."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, get_args

import pytest
from helpers.builders import trajectory
from helpers.endpoint import Reply, answer, scripted_server
from helpers.grader import Grader
from pydantic import ValidationError

from undertow.env_core.failtalms.build import FailTalmsSuite
from undertow.env_core.failtalms.judge_config import FailTalmsFolder, FailTalmsJudge
from undertow.env_core.families import JudgeModel
from undertow.env_core.model import Action, Gold, Mask, Observation, Scenario, Step, ToolCall
from undertow.env_core.suites import suite_ref
from undertow.scoring.answers import READERS, Reader, parse_awareness, parse_comparison, parse_verdict
from undertow.scoring.failtalms import (
    COMPARE_SYSTEM,
    FAMILY,
    GRADER_REMINDER,
    GRADER_SYSTEM,
    PERFECT_ANSWER,
    PERFECT_SCENARIO,
    compare,
    judge,
    perfect_pair,
    with_perfect_answer,
)
from undertow.workers.clients import HelperClient

# ---------------------------------------------------------------------------------------------------------------
# The readers' edge cases: (reply, what the authors' reader gives, what the robust option gives)


@pytest.mark.parametrize(
    ("reply", "authors", "robust"),
    [
        # "no" begins the reply, so the authors read a no; the words mean nothing is missing, so robust reads none
        ("No problem, I have every tool", "no", None),
        ("Nope", "no", "no"),
        # markup before the word: the authors' reader sees "*", not a yes
        ("**Yes**", None, "yes"),
        # spelled out: the authors' reader knows only the letters idk
        ("I don't know", None, "idk"),
    ],
)
def test_awareness_edge_cases_under_both_readers(reply: str, authors: str | None, robust: str | None) -> None:
    assert parse_awareness(reply, "authors") == authors
    assert parse_awareness(reply, "robust") == robust


def test_a_verdict_after_a_pass_fail_label_is_a_pass_to_the_authors_and_a_fail_to_robust() -> None:
    reply = "Pass/Fail: Fail - the answer names no exchange rate"
    assert parse_verdict(reply, "authors") == "pass"  # it starts with "pass"
    assert parse_verdict(reply, "robust") == "fail"  # the label is skipped, the verdict read after it


@pytest.mark.parametrize(
    ("reply", "authors", "robust"),
    [
        ("lose\n\nAnswer 1 gives fewer details.", "lose", "lose"),
        ("Tie - both name the same city", "tie", "tie"),
        ("WIN", "win", "win"),
        ("**Win**", None, "win"),
        ("It is a tie", None, None),
    ],
)
def test_comparison_replies_under_both_readers(reply: str, authors: str | None, robust: str | None) -> None:
    assert parse_comparison(reply, "authors") == authors
    assert parse_comparison(reply, "robust") == robust


def test_the_config_and_the_readers_name_the_same_readers() -> None:
    field = FailTalmsJudge.model_fields["reader"].annotation
    assert set(get_args(field)) == set(READERS) == set(get_args(Reader)) == {"authors", "robust"}


# ---------------------------------------------------------------------------------------------------------------
# The votes


def run(awaitable: Awaitable[dict[str, Any] | None]) -> dict[str, Any] | None:
    """Run a family judge hook (typed as returning an awaitable) to its end."""

    async def wait() -> dict[str, Any] | None:
        return await awaitable

    return asyncio.run(wait())


def grade(replies: list[str], **kwargs: Any) -> tuple[Any, Grader]:
    grader = Grader(replies)
    verdict = asyncio.run(judge(grader, "Price of ETH?", "2011.5 USD", [], **kwargs))
    assert not grader.replies, "every planned reply was used"
    return verdict, grader


def test_the_authors_judge_is_three_votes_each_asked_up_to_four_times() -> None:
    # pass, then two votes that never open with a verdict: asked once and re-asked 3 times each
    verdict, grader = grade(["Pass"] + ["The answer seems fine."] * 8)
    assert [(v.verdict, v.attempts) for v in verdict.votes] == [("pass", 1), ("error", 4), ("error", 4)]
    assert verdict.passed is True, "the majority of the readable votes: one pass, no fail"
    assert verdict.errors == 2
    assert grader.seeds == [0, 1, 1, 1, 1, 2, 2, 2, 2], "each vote samples with its own seed, its re-asks too"
    last = grader.chats[-1]
    assert [m["role"] for m in last] == ["system", "user"] + ["assistant", "user"] * 3
    assert last[-1]["content"] == GRADER_REMINDER


def test_a_tie_of_readable_votes_fails() -> None:
    verdict, _ = grade(["Pass", "Fail", "?", "?", "?", "?"])
    assert [v.verdict for v in verdict.votes] == ["pass", "fail", "error"]
    assert verdict.passed is False
    verdict, _ = grade(["Pass", "Pass", "Fail", "Fail", "no idea"], k=5, retries=0)
    assert verdict.passed is False


def test_five_votes_are_an_option() -> None:
    verdict, grader = grade(["Fail", "Pass", "Pass", "Fail", "Pass"], k=5)
    assert verdict.passed is True
    assert grader.seeds == [0, 1, 2, 3, 4]


def test_the_reader_decides_a_labelled_verdict() -> None:
    labelled = ["Pass/Fail: Fail"] * 3
    verdict, _ = grade(labelled)
    assert verdict.passed is True, "the authors' reader reads the label's first word"
    verdict, _ = grade(labelled, reader="robust")
    assert verdict.passed is False
    # markup before the verdict: unreadable to the authors' reader (re-asked), read at once by robust
    verdict, _ = grade(["**Pass**", "Pass", "Fail", "Fail"])
    assert [(v.verdict, v.attempts) for v in verdict.votes] == [("pass", 2), ("fail", 1), ("fail", 1)]
    assert verdict.passed is False
    verdict, _ = grade(["**Pass**", "Pass", "Fail"], reader="robust")
    assert verdict.passed is True


# ---------------------------------------------------------------------------------------------------------------
# The suite's judge


URL = "http://127.0.0.2:9/v1"


def test_a_failtalms_suite_judge_defaults_to_the_authors_protocol() -> None:
    suite = FailTalmsSuite.model_validate({"family": "failtalms", "judge": {"url": URL, "name": "grader"}})
    assert isinstance(suite.judge, FailTalmsJudge)
    assert (suite.judge.k, suite.judge.retries, suite.judge.temperature, suite.judge.reader) == (3, 3, 1.0, "authors")
    prose = FailTalmsSuite.model_validate(
        {"family": "failtalms", "judge": {"url": URL, "k": 5, "reader": "robust", "temperature": 0.7}}
    )
    assert prose.judge is not None and (prose.judge.k, prose.judge.reader, prose.judge.temperature) == (
        5,
        "robust",
        0.7,
    )
    with pytest.raises(ValidationError, match="reader"):
        FailTalmsSuite.model_validate({"family": "failtalms", "judge": {"url": URL, "reader": "lenient"}})
    # the shared judge keeps its own defaults: other families are unchanged
    assert (JudgeModel(url=URL).k, JudgeModel(url=URL).retries) == (5, 1)


def test_a_built_failtalms_folder_judge_has_the_same_defaults(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "suite.json").write_text('{"family": "failtalms"}', encoding="utf-8")
    ref = suite_ref({"path": str(folder), "judge": {"url": URL}})
    assert isinstance(ref, FailTalmsFolder) and isinstance(ref.judge, FailTalmsJudge)
    assert (ref.judge.k, ref.judge.retries, ref.judge.temperature, ref.judge.reader) == (3, 3, 1.0, "authors")


def released(setting: str, condition: Any, **metadata: Any) -> Scenario:
    return Scenario(
        id=f"failtalms/released/{setting}/0001",
        family="failtalms",
        task="What is the price of ETH in USD?",
        tools=[],
        gold=Gold(),
        condition=condition,
        metadata={"setting": setting, **metadata},
    )


CALL = Step(
    turn=0,
    action=Action(kind="tool_call", tool_call=ToolCall(id="c1", name="crypto_price", arguments={"symbol": "ETH"})),
    observation=Observation(call_id="c1", tool="crypto_price", ok=True, result={"price_usd": 2011.5}),
)


def test_the_endpoint_gets_temperature_one_and_a_seed_per_vote(tmp_path: Path) -> None:
    def script(body: dict[str, Any]) -> Reply:
        return answer("Pass - the price is the tool's")

    suite = FailTalmsSuite.model_validate({"family": "failtalms", "judge": {"url": URL, "name": "grader"}})
    assert suite.judge is not None
    episode = trajectory(CALL, final="ETH is 2011.5 USD.", setting="perfect")
    with scripted_server(script) as server:
        config = suite.judge.model_copy(update={"url": server.base_url})
        client = HelperClient(config, cache=tmp_path)
        try:
            assert FAMILY.judge is not None
            details = run(FAMILY.judge(episode, released("perfect", "none"), client.ask, config))
        finally:
            client.close()
        requests = server.chat_requests
    assert [(r["temperature"], r["seed"]) for r in requests] == [(1.0, 0), (1.0, 1), (1.0, 2)]
    grader = requests[0]["messages"]
    assert grader[0]["content"] == GRADER_SYSTEM
    assert "What is the price of ETH in USD?" in grader[1]["content"]
    assert "ETH is 2011.5 USD." in grader[1]["content"]
    assert '1. crypto_price({"symbol": "ETH"}) -> {"price_usd": 2011.5}' in grader[1]["content"]
    assert details is not None
    assert details["passed"] is True and details["judge_reader"] == "authors" and details["pr_by"] == "judge"
    assert [v["verdict"] for v in details["judge_votes"]] == ["pass"] * 3
    assert "win_rate" not in details, "only a No-tools episode is compared"


def test_the_grader_sees_the_query_as_posed() -> None:
    library = Scenario(
        id="failtalms/offline/weather-1",
        family="failtalms",
        task="What is the weather in Pittsburgh tomorrow?",
        tools=["forecast"],
        gold=Gold(),
        masks=[Mask(task="What is the weather tomorrow?", tool="forecast", argument="city", value="Pittsburgh")],
    )
    grader = Grader(["Fail"] * 3)
    config = FailTalmsJudge(url=URL)
    assert FAMILY.judge is not None
    run(FAMILY.judge(trajectory(final="Sunny.", setting="underspecified"), library, grader, config))
    assert "What is the weather tomorrow?" in grader.chats[0][1]["content"]
    assert "Pittsburgh" not in grader.chats[0][1]["content"]
    perfect = Grader(["Fail"] * 3)
    run(FAMILY.judge(trajectory(final="Sunny.", setting="perfect"), library, perfect, config))
    assert "What is the weather in Pittsburgh tomorrow?" in perfect.chats[0][1]["content"]


# ---------------------------------------------------------------------------------------------------------------
# The No-tools pairwise comparison

NO_TOOLS_ANSWER = "ETH trades near 2000 USD."
PERFECT = "ETH is 2011.5 USD (crypto_price)."


def judged_no_tools(
    replies: list[str], reader: Reader = "authors", metadata: dict[str, Any] | None = None
) -> tuple[dict[str, Any], Grader]:
    grader = Grader(replies)
    scenario = released("no_tools", "no_tools", **(metadata or {}))
    assert FAMILY.judge is not None
    config = FailTalmsJudge(url=URL, reader=reader)
    details = run(FAMILY.judge(trajectory(final=NO_TOOLS_ANSWER, setting="no_tools"), scenario, grader, config))
    assert details is not None
    assert not grader.replies, "every planned reply was used"
    return details, grader


@pytest.mark.parametrize(("reply", "win_rate"), [("Win: more precise", 2), ("tie", 1), ("Lose. It is vaguer", 0)])
def test_a_passing_no_tools_answer_is_compared_with_the_perfect_one(reply: str, win_rate: int) -> None:
    details, grader = judged_no_tools(["Pass"] * 3 + [reply], metadata={PERFECT_ANSWER: PERFECT})
    assert details["passed"] is True and details["paired"] is True
    assert details["win_rate"] == win_rate and details["win_reply"] == reply and details["win_attempts"] == 1
    comparison = grader.chats[-1]
    assert comparison[0]["content"] == COMPARE_SYSTEM
    prompt = comparison[1]["content"]
    # the No-tools answer is the first one, the Perfect answer the second
    assert prompt.index(NO_TOOLS_ANSWER) < prompt.index(PERFECT)
    assert "What is the price of ETH in USD?" in prompt


def test_a_failing_no_tools_answer_is_not_compared() -> None:
    details, grader = judged_no_tools(["Fail", "Pass", "Fail"], metadata={PERFECT_ANSWER: PERFECT})
    assert details["passed"] is False and details["win_rate"] is None
    assert len(grader.chats) == 3, "the three votes only"


def test_without_a_paired_perfect_answer_nothing_is_compared() -> None:
    details, grader = judged_no_tools(["Pass"] * 3)
    assert details["passed"] is True and details["paired"] is False and details["win_rate"] is None
    assert len(grader.chats) == 3


def test_a_perfect_episode_without_an_answer_is_compared_as_none_given() -> None:
    details, grader = judged_no_tools(["Pass"] * 3 + ["Win"], metadata={PERFECT_ANSWER: None})
    assert details["win_rate"] == 2
    assert "(the assistant gave no final answer)" in grader.chats[-1][1]["content"]


def test_an_unreadable_comparison_is_re_asked_then_recorded_as_none() -> None:
    details, grader = judged_no_tools(["Pass"] * 3 + ["Both are fine."] * 4, metadata={PERFECT_ANSWER: PERFECT})
    assert details["win_rate"] is None and details["win_attempts"] == 4
    assert [m["role"] for m in grader.chats[-1]][-2:] == ["assistant", "user"]
    # the robust reader reads markup the authors' reader does not
    details, _ = judged_no_tools(["Pass"] * 3 + ["**Tie**"], reader="robust", metadata={PERFECT_ANSWER: PERFECT})
    assert details["win_rate"] == 1


def test_compare_uses_seed_zero_and_its_retries() -> None:
    grader = Grader(["?", "tie"])
    found = asyncio.run(compare(grader, "q", "a", "b", retries=1))
    assert (found.result, found.win_rate, found.attempts) == ("tie", 1, 2)
    assert grader.seeds == [0, 0]
    grader = Grader(["?"])
    found = asyncio.run(compare(grader, "q", "a", "b", retries=0))
    assert (found.result, found.win_rate, found.attempts) == (None, None, 1)


def test_a_no_tools_query_pairs_with_the_perfect_query_it_repeats() -> None:
    perfect = released("perfect", "none")
    other = perfect.model_copy(update={"id": "failtalms/released/perfect/0002", "task": "Weather in Oslo?"})
    linked = released("no_tools", "no_tools", intended="Weather in Oslo?")
    unlinked = released("no_tools", "no_tools")  # no "intended": its own text, the same as the first perfect one
    alone = linked.model_copy(update={"task": "Who won?", "metadata": {"setting": "no_tools"}})
    assert perfect_pair(linked, [perfect, other]) == other
    assert perfect_pair(unlinked, [perfect, other]) == perfect
    assert perfect_pair(alone, [perfect, other]) is None
    # the offline library runs No-tools as a setting of the request itself
    library = released("perfect", None)
    assert perfect_pair(library, [perfect]) == library
    paired = with_perfect_answer(unlinked, "ETH is 2011.5 USD.", perfect.id)
    assert paired.metadata[PERFECT_ANSWER] == "ETH is 2011.5 USD." and paired.metadata["setting"] == "no_tools"
    # and whose answer it was: the metrics join the No-tools episode to that Perfect episode
    assert paired.metadata[PERFECT_SCENARIO] == perfect.id
