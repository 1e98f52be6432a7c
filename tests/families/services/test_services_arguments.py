"""Hostile arguments to the simulated services (issue 29): a long email address made the address check backtrack
for half a minute, and refusals repeated a long argument whole. Each is a tool error the model reads, quick and
short."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from simulated_services import episode, step

from undertow.env_core.services import communication, information
from undertow.env_core.services.communication import is_address, resolve_recipients
from undertow.env_core.tools import MAX_STRING, QUOTE_CHARS, ToolExecutionError

FAST = 10.0  # seconds; the 60,000-character address took 12-32 s before
ADDRESS = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")  # the regex the check replaced


@settings(max_examples=500, deadline=None, database=None)
@given(st.text("a@. \t\u00a0", max_size=10))
def test_the_address_check_agrees_with_the_regex_it_replaced(text: str) -> None:
    assert is_address(text) == (ADDRESS.fullmatch(text) is not None)


def test_a_long_address_is_checked_quickly() -> None:
    # the worst case of the regex: a run of dots that fails only at its end (quadratic backtracking)
    address = "a@" + "." * 60_000 + "@"
    started = time.monotonic()
    with pytest.raises(ToolExecutionError) as info:
        resolve_recipients([address], [])
    assert str(info.value) == (
        f"recipient '{address[:QUOTE_CHARS]}… (60,003 characters)' is neither an email address nor a contact name"
    )
    assert time.monotonic() - started < FAST


def test_a_long_recipient_is_a_short_refusal_in_an_episode() -> None:
    env = episode(communication.SERVICES)
    started = time.monotonic()
    under = "a@" + "." * (MAX_STRING - 3) + "@"
    refused = step(env, "gmail_send_email", {"to": [under], "subject": "s", "body": "b"})
    assert refused.error is not None and refused.error.type == "invalid_request"
    assert refused.error.message == (
        f"recipient '{under[:QUOTE_CHARS]}… ({MAX_STRING:,} characters)' is neither an email address nor a contact name"
    )
    over = step(env, "gmail_send_email", {"to": ["a@" + "." * 60_000 + "@"], "subject": "s", "body": "b"})
    assert over.error is not None and over.error.type == "invalid_arguments"
    assert over.error.message.startswith("Invalid arguments for gmail_send_email: a string of ")
    assert over.error.message.endswith(f" characters is longer than the {MAX_STRING} allowed (at 'to.0')")
    assert time.monotonic() - started < FAST
    sent = step(env, "gmail_send_email", {"to": ["priya.nair@example.com"], "subject": "s", "body": "b"})
    assert sent.ok, sent.error  # the episode goes on


def test_an_unknown_id_is_quoted_short() -> None:
    env = episode(information.SERVICES)
    observation = step(env, "yelp_get_business", {"business_id": "b" * 3000})
    assert observation.error is not None
    assert (observation.error.type, observation.error.message) == (
        "not_found",
        f"business '{'b' * QUOTE_CHARS}… (3,000 characters)' not found",
    )
