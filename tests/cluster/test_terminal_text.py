"""Text a model controls never reaches the terminal raw (issue 29, finding 8): :func:`printable` on its own, then
the real commands on a stored run whose results and trajectories carry escape sequences, control characters, bidi
overrides and rich markup where a model's words go (errors and their traces, answers, replies, tool arguments and
results, parse errors, details)."""

from __future__ import annotations

import json
import os
import re
import sys
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import pytest
from helpers.cli import invoke, run_cli
from helpers.runs import policy_sweep, stored_run
from rich.console import Console

from undertow.cluster.report import print_report_table
from undertow.cluster.report.text import printable, printable_json
from undertow.cluster.store import RunStore
from undertow.env_core.families import ReportTable
from undertow.env_core.model import EpisodeResult, Outcome, Trajectory
from undertow.env_core.untrusted import clean_value
from undertow.workers.runner import ShardOutput, ShardSpec

OSC_52 = "\x1b]52;c;cm0gLXJmIH4=\x07"  # writes the clipboard
TITLE = "\x1b]0;owned\x07"  # sets the window title
CSI = "\x1b[2J\x1b[8m"  # clears the screen, then conceals what follows
HOSTILE = (
    f"op {OSC_52}{TITLE}{CSI} over\rwritten\b\x7f \x9b31m \u202egnp.exe\u202c \u2066x\u2069 \u200b\ufeff\u2028"
    " [bold]not bold[/bold] [link=https://evil.example]click[/link] :thumbs_up: <script>alert(1)</script>"
)
# what the printed output must hold where the hostile text was: the escapes, visible
SHOWN = ("\\x1b]52;c;cm0gLXJmIH4=\\x07", "\\x1b]0;owned\\x07", "\\u202egnp.exe\\u202c")
# characters no output may carry: C0 but the newline, DEL, C1, bidi controls and other invisible format characters,
# line and paragraph separators, lone surrogates
FORBIDDEN = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u00ad\u200b\u200e\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff]"
)


def assert_safe(text: str, *, shown: bool = True) -> None:
    found = FORBIDDEN.search(text)
    assert found is None, (
        f"{found.group()!r} at {found.start()}: {text[max(0, found.start() - 80) : found.end() + 80]!r}"
    )
    if shown:
        for escaped in SHOWN:
            assert escaped in text, (escaped, text)


# ---------------------------------------------------------------------------------------------------------------
# printable


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        ("\x00", "\\x00"),
        ("\x07", "\\x07"),  # BEL
        ("\x08", "\\x08"),  # backspace
        ("\r", "\\x0d"),  # a bare carriage return overwrites the line
        ("\x0b", "\\x0b"),
        ("\x1b", "\\x1b"),  # ESC: starts every escape sequence
        ("\x7f", "\\x7f"),  # DEL
        ("\x85", "\\x85"),  # NEL (C1)
        ("\x9b", "\\x9b"),  # CSI (C1): an escape sequence in one byte for some terminals
        ("\x9d", "\\x9d"),  # OSC (C1)
        ("\u00ad", "\\xad"),  # soft hyphen: invisible
        ("\u061c", "\\u061c"),  # Arabic letter mark
        ("\u200b", "\\u200b"),  # zero-width space
        ("\u200e", "\\u200e"),  # left-to-right mark
        ("\u200f", "\\u200f"),
        ("\u202a", "\\u202a"),  # bidi embeddings and overrides
        ("\u202b", "\\u202b"),
        ("\u202c", "\\u202c"),
        ("\u202d", "\\u202d"),
        ("\u202e", "\\u202e"),
        ("\u2066", "\\u2066"),  # bidi isolates
        ("\u2067", "\\u2067"),
        ("\u2068", "\\u2068"),
        ("\u2069", "\\u2069"),
        ("\u2060", "\\u2060"),  # word joiner
        ("\u2028", "\\u2028"),  # line separator
        ("\u2029", "\\u2029"),  # paragraph separator
        ("\ufeff", "\\ufeff"),  # zero-width no-break space
        ("\U000e0041", "\\U000e0041"),  # a tag character: invisible text
        ("\ud800", "\\ud800"),  # lone surrogates
        ("\udfff", "\\udfff"),
    ],
)
@pytest.mark.parametrize("one_line", [False, True])
def test_each_kind_of_control_character_is_shown_escaped(char: str, shown: str, one_line: bool) -> None:
    out = printable(f"a{char}b", one_line=one_line)
    assert out == f"a{shown}b"
    assert char not in out
    out.encode("utf-8")  # even a lone surrogate is gone: the text can be written anywhere


def test_escape_sequences_are_shown_whole() -> None:
    assert printable(OSC_52) == "\\x1b]52;c;cm0gLXJmIH4=\\x07"
    assert printable(TITLE + CSI) == "\\x1b]0;owned\\x07\\x1b[2J\\x1b[8m"
    assert printable("\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\") == (
        "\\x1b]8;;https://evil.example\\x1b\\link\\x1b]8;;\\x1b\\"
    )


@pytest.mark.parametrize(
    "text",
    [
        "plain ASCII: a-z 0-9 !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
        "Grüße, naïve café, Ærø, Łódź, Ελληνικά, русский",
        "日本語のテキスト、中文文本，한국어",
        "مرحبا بالعالم",  # right-to-left letters are not controls
        "क्‍ष and می‌خواهم",  # ZWJ and ZWNJ inside words
        "😀 👍🏽 👨‍👩‍👧 🇫🇷 ❤️",  # modifiers, ZWJ sequences, flags, variation selectors
        "[bold]markup[/bold] :smile:",  # printable's job is control characters; markup is escaped where printed
        "",
    ],
)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert printable(text) == text
    assert printable(text, one_line=True) == text


def test_newlines_and_tabs_stay_in_multi_line_text_and_show_in_one_line() -> None:
    assert printable("a\nb\tc") == "a\nb\tc"
    assert printable("a\r\nb") == "a\nb"  # a Windows line end is a line end
    assert printable("a\rb") == "a\\x0db"
    assert printable("a\nb\r\nc\td", one_line=True) == "a⏎b⏎c d"


def test_the_escaped_characters_are_exactly_the_unicode_control_format_and_separator_ones() -> None:
    # every character of the categories Cc, Cf, Cs, Zl, Zp of this Python's Unicode is escaped, but ZWNJ and ZWJ;
    # the only others escaped are ones unassigned here (format characters of a later Unicode)
    everything = "".join(map(chr, range(sys.maxunicode + 1)))
    escaped = {c for c in everything if printable(c, one_line=True) != c}
    unsafe = {c for c in everything if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")} - {"\u200c", "\u200d"}
    assert unsafe <= escaped
    assert {unicodedata.category(c) for c in escaped - unsafe} <= {"Cn"}
    assert {c for c in everything if printable(c) != c} == escaped - {"\t", "\n"}


def test_json_text_keeps_its_value_and_loses_what_a_terminal_acts_on() -> None:
    value = {"error": HOSTILE, "é中😀": ["\U000e0041", "\u2028"], "n": 1}
    for text in (json.dumps(value, ensure_ascii=False, indent=2), json.dumps(value, ensure_ascii=False)):
        safe = printable_json(text)
        assert json.loads(safe) == value
        assert_safe(safe, shown=False)
        assert "é中😀" in safe  # readable text stays readable
    assert printable_json('"\ud800"') == '"\\ufffd"'  # a lone surrogate becomes U+FFFD: strict parsers read it


def test_lone_surrogates_leave_json_as_the_replacement_character() -> None:
    text = json.dumps(clean_value({"a\udc80": ["x\ud800", 1, None, ("\udfff",)]}))
    assert json.loads(text) == {"a\ufffd": ["x\ufffd", 1, None, ["\ufffd"]]}
    assert "\\ud" not in text  # no escaped surrogate either: strict parsers refuse one alone


def test_a_family_table_shows_hostile_cells_titles_and_notes_escaped() -> None:
    # a family's tables may quote per-episode details (error categories a scorer took from the model's text)
    table = ReportTable(title=f"t {TITLE}", columns=["what", f"c{OSC_52}"], rows=[[HOSTILE, "1"]], note=HOSTILE)
    out = StringIO()
    print_report_table(table, Console(file=out, width=2000, force_terminal=False))
    assert_safe(out.getvalue())
    assert "[bold]not bold[/bold]" in out.getvalue() and ":thumbs_up:" in out.getvalue()


# ---------------------------------------------------------------------------------------------------------------
# The commands, on a stored run carrying hostile text


@dataclass(frozen=True)
class HostileRun:
    store: Path
    run_id: str
    tampered: str  # an episode whose recorded tool call was changed after the fact: replay reports the difference


def _hostile_result(result: EpisodeResult, outcome: Outcome) -> EpisodeResult:
    data = result.model_dump()
    data.update(
        outcome=outcome,
        error=f"ProtocolError: unknown op '{HOSTILE}'",
        error_trace=f"/sandbox/cell.py:1 in {HOSTILE}\n/sandbox/cell.py:2 in <module>\tx",
        details={"category": HOSTILE, HOSTILE: [HOSTILE]},
    )
    return EpisodeResult.model_validate(data)


# U+2028, U+2029 and NEL break a line of a stored trajectory file (the store splits its JSON lines with
# str.splitlines): left out of the trajectories here, kept in the results
IN_TRACE = HOSTILE.replace("\u2028", "")


def _hostile_trajectory(trajectory: Trajectory) -> Trajectory:
    data = trajectory.model_dump()
    data["final_answer"] = data["error"] = IN_TRACE
    for turn in data["turns"]:
        turn["content"] = turn["parse_error"] = IN_TRACE
        for call in turn["tool_calls"]:
            call["arguments"] = {**call["arguments"], "note": IN_TRACE}
    for step in data["steps"]:
        if step["action"]["tool_call"] is not None:
            step["action"]["tool_call"]["arguments"]["note"] = IN_TRACE
        if step["observation"] is not None:
            step["observation"]["result"] = {"rows": [IN_TRACE], IN_TRACE: 1}
            step["observation"]["notes"] = [IN_TRACE]
    return Trajectory.model_validate(data)


def _tampered_trajectory(trajectory: Trajectory) -> Trajectory:
    """The step's copy of the first tool call gains an argument that the recorded reply does not have."""
    data = trajectory.model_dump()
    call = next(step["action"]["tool_call"] for step in data["steps"] if step["action"]["tool_call"] is not None)
    call["arguments"] = {**call["arguments"], IN_TRACE: IN_TRACE}
    return Trajectory.model_validate(data)


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> HostileRun:
    store = tmp_path_factory.mktemp("hostile")
    config = policy_sweep("hostile", limit=2)
    tampered = ""
    outcomes = iter([Outcome.infra_error, Outcome.config_error, Outcome.sandbox_violation, Outcome.model_error])

    def hostile(shard: ShardSpec, output: ShardOutput) -> ShardOutput:
        nonlocal tampered
        judged = shard.model.name == "oracle"  # its episodes stay scored, to be compared and replayed
        results = [r if judged else _hostile_result(r, next(outcomes, Outcome.infra_error)) for r in output.results]
        if judged:  # a scored episode's error still reaches `undertow episodes`
            results[0] = _hostile_result(results[0], Outcome.scored)
        trajectories = [_hostile_trajectory(t) for t in output.trajectories]
        if judged and not tampered:
            trajectories[-1] = _tampered_trajectory(output.trajectories[-1])
            tampered = trajectories[-1].episode_id
        return ShardOutput(output.shard_id, results, trajectories, output.wall_s)

    manifest = stored_run(store, config, output=hostile)
    return HostileRun(store, manifest.run_id, tampered)


@pytest.fixture(scope="module")
def printed(hostile_run: HostileRun) -> dict[str, tuple[int, str, str]]:
    """What each command printed (exit status, stdout, stderr). ``status`` and ``episodes``, the commands of the
    finding, run as users run them (the installed script, in a process of its own, both at once); the others
    through the same Typer app in this process meanwhile, which is much faster than a process each."""
    store = ["--store", str(hostile_run.store)]
    run = hostile_run.run_id
    html = hostile_run.store / "report.html"

    def one(args: list[str]) -> tuple[int, str, str]:
        # wide, whatever COLUMNS the session has: no table cell is folded across lines or cut short
        done = run_cli(*args, env={**os.environ, "COLUMNS": "2000"}, timeout=120)
        return done.returncode, done.stdout, done.stderr

    with ThreadPoolExecutor(max_workers=2) as pool:
        processes = {name: pool.submit(one, [name, run, *store]) for name in ("status", "episodes")}
        found = {
            "report": invoke("report", run, *store, "--html", str(html)),
            "compare": invoke("compare", run, *store),
            "replay": invoke("replay", run, hostile_run.tampered, *store),
        }
        found.update((name, process.result()) for name, process in processes.items())
    found["html"] = (0, html.read_text(encoding="utf-8"), "")
    return found


@pytest.mark.parametrize(
    ("command", "shown"), [("status", True), ("episodes", True), ("report", False), ("compare", False)]
)
def test_a_command_prints_model_text_escaped(
    printed: dict[str, tuple[int, str, str]], command: str, shown: bool
) -> None:
    code, out, err = printed[command]
    assert code == 0, err
    assert "Traceback" not in err
    assert_safe(out + err, shown=shown)


def test_status_shows_each_error_and_its_frames_on_their_own_lines(printed: dict[str, tuple[int, str, str]]) -> None:
    _, _, err = printed["status"]
    errors = [line for line in err.splitlines() if "ProtocolError" in line]
    assert len(errors) == 3, err  # infra_error, config_error, sandbox_violation: one line each, even with \r
    assert all("\\x1b]52;c;" in line and "\\x0d" in line and "\\u2028" in line for line in errors)
    assert "[bold]not bold[/bold]" in err and "[link=https://evil.example]click[/link]" in err  # markup as written
    assert ":thumbs_up:" in err and "👍" not in err  # and no emoji codes either
    frames = [line for line in err.splitlines() if line.startswith("    /sandbox/cell.py")]
    assert len(frames) == 6 and all(("\\x1b" in f and "\\x0d" in f) or f.endswith("<module> x") for f in frames), err


def test_episodes_keeps_each_row_on_one_line(printed: dict[str, tuple[int, str, str]]) -> None:
    _, out, _ = printed["episodes"]
    rows = [line for line in out.splitlines() if "ProtocolError" in line]
    assert len(rows) == 6, out  # naive's four failed episodes and one scored of each oracle shard: a line each
    assert all("[bold]not bold[/bold]" in row and ":thumbs_up:" in row for row in rows)


def test_episodes_json_is_valid_and_keeps_the_error_exactly(hostile_run: HostileRun) -> None:
    code, out, err = invoke("episodes", hostile_run.run_id, "--store", str(hostile_run.store), "--format", "json")
    assert code == 0, err
    assert_safe(out, shown=False)
    errors = {row["error"] for row in json.loads(out) if row["error"]}
    assert errors == {f"ProtocolError: unknown op '{HOSTILE}'"}


@pytest.mark.parametrize(
    "options",
    [["report", "--format", "json"], ["report", "--format", "json", "--families"], ["compare", "--format", "json"]],
)
def test_json_reports_are_valid_and_safe(hostile_run: HostileRun, options: list[str]) -> None:
    command, *rest = options
    code, out, err = invoke(command, hostile_run.run_id, "--store", str(hostile_run.store), *rest)
    assert code == 0, err
    json.loads(out)
    assert_safe(out, shown=False)


def test_replay_shows_the_difference_escaped(printed: dict[str, tuple[int, str, str]]) -> None:
    code, out, err = printed["replay"]
    assert code == 1 and "replay differs" in err, err
    assert_safe(out + err, shown=False)
    assert "\\x1b]52;c;" in err  # the difference names the argument the step gained: its key is the hostile text


def test_an_error_line_quoting_hostile_text_is_escaped(hostile_run: HostileRun) -> None:
    code, out, err = invoke("episodes", hostile_run.run_id, "--store", str(hostile_run.store), "--model", HOSTILE)
    assert code == 2 and err.startswith("error: "), err
    assert len(err.strip().splitlines()) == 1  # \u2028 and \r do not break the line
    assert_safe(out + err)
    assert "[bold]not bold[/bold]" in err


def test_warnings_notes_errors_and_a_bugs_traceback_are_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    from undertow.cluster.cli import _print_bug
    from undertow.cluster.cli.common import info, warn
    from undertow.cluster.cli.errors import print_error

    warn(HOSTILE)
    info(HOSTILE)
    print_error(ValueError(HOSTILE))
    try:
        raise RuntimeError(HOSTILE)
    except RuntimeError as exc:
        _print_bug(RuntimeError, exc, exc.__traceback__)
    out, err = capsys.readouterr()
    assert_safe(out)
    assert_safe(err)
    assert err.count("[bold]not bold[/bold]") == 3 and "error: op \\x1b]52" in err and "RuntimeError: op" in err


def test_the_html_report_shows_model_text_escaped(printed: dict[str, tuple[int, str, str]]) -> None:
    _, page, _ = printed["html"]
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # in a page a bidi override still reorders what the reader sees: it is shown escaped, as in the terminal
    assert_safe(page.replace("\t", " "))


def test_the_run_carries_the_hostile_text_where_the_commands_read_it(hostile_run: HostileRun) -> None:
    # the stored run holds the raw text (nothing above passes because it was cleaned before it was stored)
    store = RunStore.open(hostile_run.run_id, str(hostile_run.store))
    results = store.results()
    assert any(r.error and OSC_52 in r.error for r in results)
    trajectories = [t for s in store.manifest().shards for t in store.trajectories(s.shard_id)]
    assert any(t.final_answer and "\u202e" in t.final_answer for t in trajectories)
