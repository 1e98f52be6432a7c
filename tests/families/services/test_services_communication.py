"""Communication services (env_core.services.communication): card tools, particular tool behaviours and errors,
and isolation (the contract every service keeps is in test_services_catalog.py)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from simulated_services import episode, fresh, params, run, step, text

from undertow.env_core.services.base import World
from undertow.env_core.services.communication import SERVICES
from undertow.env_core.services.tools import pristine_world
from undertow.env_core.tools import ToolExecutionError

BY_NAME = {service.name: service for service in SERVICES}


OFFSITE = ["dana.whitfield@example.com", "jordan.lee@example.com", "sam.patel@example.com"]
INVITEES = ["dana.whitfield@example.com", "jordan.lee@example.com"]  # the planning review seats Alex and Sam


@pytest.mark.parametrize("mail", ["gmail", "outlook_mail"])
def test_one_email_reaches_a_list_of_recipients(mail: str) -> None:
    """A batch write: one send_email call with three recipients is one sent message to all three."""
    env = episode(SERVICES)
    sent = step(
        env, f"{mail}_send_email", {"to": OFFSITE, "subject": "Draft agenda: April 2 team offsite", "body": "b"}
    )
    assert sent.ok
    listed = step(env, f"{mail}_list_sent", {}).result["messages"]
    [message] = [m for m in listed if m["subject"] == "Draft agenda: April 2 team offsite"]
    assert [address.split("<")[-1].rstrip(">") for address in message["to"]] == OFFSITE


@pytest.mark.parametrize(
    ("calendar", "invite", "event"),
    [("google_calendar", "add_attendees", "gev_planning"), ("outlook_calendar", "invite_attendees", "olev_planning")],
)
def test_one_call_invites_a_list_of_attendees(calendar: str, invite: str, event: str) -> None:
    env = episode(SERVICES)
    before = text(step(env, f"{calendar}_get_event", {"event_id": event}).result)
    assert not any(address in before for address in INVITEES)
    assert step(env, f"{calendar}_{invite}", {"event_id": event, "attendees": INVITEES}).ok
    after = text(step(env, f"{calendar}_get_event", {"event_id": event}).result)
    assert all(address in after for address in [*INVITEES, "sam.patel@example.com"])


def test_card_tools_exist_with_their_arguments() -> None:
    empty = inspect.Parameter.empty
    for mail in ("gmail", "outlook_mail"):
        service = BY_NAME[mail]
        assert params(service, "send_email") == {"to": empty, "subject": empty, "body": empty}
        assert params(service, "list_sent") == {"limit": 10}
        assert params(service, "get_message") == {"message_id": empty}
        assert params(service, "search_inbox") == {"query": empty}
        send = next(s for s in service.specs() if s.name == f"{mail}_send_email")
        assert send.parameters["properties"]["to"]["type"] == "array"
    calendar = BY_NAME["google_calendar"]
    assert params(calendar, "list_calendars") == {}
    assert params(calendar, "create_event") == {"calendar_id": empty, "title": empty, "start": empty, "end": empty}
    assert params(calendar, "get_event") == {"event_id": empty}
    assert params(calendar, "list_events") == {"calendar_id": empty, "date": empty}
    primary = run(fresh(calendar, SERVICES), "list_calendars")["calendars"][0]
    assert primary["calendar_id"] == "cal_001" and primary["primary"]


def test_two_worlds_never_share_a_write() -> None:
    first, second = episode(SERVICES), episode(SERVICES)
    sent = step(first, "gmail_send_email", {"to": ["priya.nair@example.com"], "subject": "Only here", "body": "x"})
    assert sent.ok and sent.result["status"] == "sent"
    created = step(
        first,
        "google_calendar_create_event",
        {"calendar_id": "cal_001", "title": "Private", "start": "2026-03-25T09:00", "end": "2026-03-25T10:00"},
    )
    assert created.ok
    assert "Only here" in text(step(first, "gmail_list_sent", {}).result)
    assert "Only here" not in text(step(second, "gmail_list_sent", {}).result)
    events = step(second, "google_calendar_list_events", {"calendar_id": "cal_001", "date": "2026-03-25"})
    assert events.ok and events.result["events"] == []


def test_writes_stamp_the_simulated_clock_and_fresh_ids() -> None:
    world = pristine_world(SERVICES)
    calendar = BY_NAME["google_calendar"](world)
    result = calendar.run(
        "create_event",
        {"calendar_id": "cal_001", "title": "A", "start": "2026-03-25T09:00", "end": "2026-03-25T10:00"},
    )
    assert result["created_at"] == world.stamp()
    again = calendar.run(
        "create_event",
        {"calendar_id": "cal_001", "title": "B", "start": "2026-03-25T11:00", "end": "2026-03-25T12:00"},
    )
    assert again["event_id"] != result["event_id"]


@pytest.mark.parametrize(
    ("service", "method", "arguments", "error_type"),
    [
        ("gmail", "get_message", {"message_id": "nope"}, "not_found"),
        ("outlook_mail", "send_email", {"to": [], "subject": "s", "body": "b"}, "invalid_request"),
        ("gmail", "send_email", {"to": ["Nobody Known"], "subject": "s", "body": "b"}, "invalid_request"),
        ("gmail", "forward_message", {"message_id": "gm_missing", "to": ["a@b.co"]}, "not_found"),
        ("gmail", "search_inbox", {"query": "  "}, "invalid_request"),
        ("google_calendar", "list_events", {"calendar_id": "cal_404", "date": "2026-03-23"}, "not_found"),
        ("google_calendar", "list_events", {"calendar_id": "cal_001", "date": "March 23"}, "invalid_request"),
        (
            "google_calendar",
            "create_event",
            {"calendar_id": "cal_003", "title": "x", "start": "2026-03-25T09:00", "end": "2026-03-25T10:00"},
            "permission_denied",
        ),
        (
            "google_calendar",
            "create_event",
            {"calendar_id": "cal_001", "title": "x", "start": "2026-03-25T11:00", "end": "2026-03-25T10:00"},
            "invalid_request",
        ),
        ("outlook_calendar", "get_event", {"event_id": "gev_planning"}, "not_found"),
        ("outlook_calendar", "invite_attendees", {"event_id": "olev_planning", "attendees": ["?"]}, "invalid_request"),
        ("google_calendar", "delete_event", {"event_id": "gev_holiday_easter"}, "permission_denied"),
    ],
)
def test_errors_reach_the_agent_as_tool_errors(
    service: str, method: str, arguments: dict[str, Any], error_type: str
) -> None:
    with pytest.raises(ToolExecutionError) as raised:
        fresh(BY_NAME[service], SERVICES).run(method, arguments)
    assert raised.value.error_type == error_type


def test_mail_behaviour() -> None:
    world: World = pristine_world(SERVICES)
    gmail = BY_NAME["gmail"](world)
    sent = gmail.run("send_email", {"to": ["Dana Whitfield", "mei.chen@example.com"], "subject": "Hi", "body": "b"})
    assert sent["to"] == ["Dana Whitfield <dana.whitfield@example.com>", "Mei Chen <mei.chen@example.com>"]
    listed = gmail.run("list_sent", {"limit": 1})["messages"]
    assert [m["message_id"] for m in listed] == [sent["message_id"]]  # newest first
    assert gmail.run("get_message", {"message_id": sent["message_id"]})["folder"] == "sent"
    assert [m["message_id"] for m in gmail.run("search_inbox", {"query": "from:delta"})["messages"]] == ["gm_delta"]
    assert gmail.run("search_contacts", {"name": "priya"})["contacts"][0]["email"] == "priya.nair@example.com"
    outlook = BY_NAME["outlook_mail"](world)
    # the counterpart mailbox holds the same inbox, under its own ids
    assert outlook.run("search_inbox", {"query": "HX7Q2P"})["messages"][0]["message_id"] == "olm_delta"
    assert "Only" not in text(outlook.run("list_sent", {}))


def test_calendar_behaviour() -> None:
    world = pristine_world(SERVICES)
    outlook = BY_NAME["outlook_calendar"](world)
    made = outlook.run(
        "create_event",
        {
            "calendar_id": "olcal_calendar",
            "subject": "Call",
            "start": "2026-03-25T21:00:00Z",
            "end": "2026-03-25T22:00Z",
        },
    )
    event = outlook.run("get_event", {"event_id": made["event_id"]})
    assert (event["subject"], event["start"], event["end"]) == ("Call", "2026-03-25T14:00", "2026-03-25T15:00")
    assert outlook.run("delete_event", {"event_id": made["event_id"]})["status"] == "deleted"
    assert outlook.run("list_events", {"calendar_id": "olcal_calendar", "date": "2026-03-25"})["events"] == []
    google = BY_NAME["google_calendar"](world)
    agenda = google.run("list_events", {"calendar_id": "cal_001", "date": "2026-03-23"})["events"]
    assert [e["title"] for e in agenda] == ["Team standup", "Quarterly planning review"]
    invited = google.run(
        "add_attendees", {"event_id": "gev_planning", "attendees": ["Mei Chen", "sam.patel@example.com"]}
    )
    assert invited["attendees"].count("sam.patel@example.com") == 1 and "mei.chen@example.com" in invited["attendees"]
