"""Communication & productivity services: two mail clients (Gmail, Outlook Mail) and two calendars (Google
Calendar, Outlook Calendar).

Counterparts seed from the same records (``data/inbox.jsonl``, ``data/sent.jsonl``, ``data/mail_contacts.jsonl`` and
``data/events.jsonl``, as if the user's accounts were synced), so a task that falls back from one client to the
other reaches the same facts. Ids differ per service, as they would between real providers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Annotated, Any, ClassVar, Protocol
from zoneinfo import ZoneInfo

from pydantic import Field

from undertow.env_core.services.base import Category, Service, peers
from undertow.env_core.services.helpers import invalid, not_found, searched
from undertow.env_core.services.histories import held, histories
from undertow.env_core.services.seeds import TODAY, tables
from undertow.env_core.services.states import (
    CalendarEvent,
    CalendarInfo,
    CalendarState,
    MailContact,
    MailMessage,
    MailState,
)
from undertow.env_core.tools import ToolExecutionError, tool
from undertow.env_core.untrusted import capped

DOMAIN = "communication & productivity"


# -------------------------------------------------------------------------------------------------------------------
# Mail (and the recipients' rules the calendars share)


def words_of(text: str) -> list[str]:
    """The words of a search query, lower case (``from:``, addresses and amounts kept whole)."""
    return [word for word in re.split(r"[^a-z0-9@.:$'-]+", text.lower()) if word]


def is_address(text: str) -> bool:
    """``name@domain.tld``: one @, no whitespace, a dot inside the domain. Checked by splitting, not by the regex
    ``[^@\\s]+@[^@\\s]+\\.[^@\\s]+``, which backtracks quadratically on a long address that fails at its end."""
    local, at, domain = text.partition("@")
    if not (local and at and "@" not in domain) or any(c.isspace() for c in text):
        return False
    return "." in domain[1:-1]


class Addressee(Protocol):
    """Anyone with a name and an address: a seeded contact, a mail account's contact."""

    @property
    def name(self) -> str: ...

    @property
    def email(self) -> str: ...


def resolve_recipients(recipients: list[str], contacts: Sequence[Addressee]) -> list[str]:
    """Addresses for a list of recipients given as addresses or contact names; an unknown name is an error the agent
    reads (a mail client would not guess)."""
    if not recipients:
        raise invalid("at least one recipient is required")
    resolved = []
    for recipient in recipients:
        text = recipient.strip()
        if is_address(text):
            resolved.append(text.lower())
            continue
        match = [c for c in contacts if c.name.lower() == text.lower()]
        if not match:
            raise invalid(f"recipient {capped(recipient)!r} is neither an email address nor a contact name")
        resolved.append(match[0].email)
    return resolved


def _seed_mail(prefix: str, contact_prefix: str, day: date) -> MailState:
    user_name, user_email = "Alex Rivera", "alex.rivera@example.com"
    seeds = tables(day)
    names = {c.email: c.name for c in seeds.correspondents}
    messages = [
        MailMessage(
            message_id=f"{prefix}_{m.key}",
            folder="inbox",
            from_name=m.from_name,
            from_email=m.from_email,
            to=[user_email],
            subject=m.subject,
            body=m.body,
            timestamp=m.received_at,
        )
        for m in seeds.inbox
    ]
    messages += [
        MailMessage(
            message_id=f"{prefix}_{m.key}",
            folder="sent",
            from_name=user_name,
            from_email=user_email,
            to=[f"{names[a]} <{a}>" for a in m.to],
            subject=m.subject,
            body=m.body,
            timestamp=m.sent_at,
        )
        for m in seeds.sent
    ]
    contacts = [
        MailContact(contact_id=f"{contact_prefix}_{c.key}", name=c.name, email=c.email, note=c.note)
        for c in seeds.correspondents
    ]
    return MailState(address=user_email, messages=messages, contacts=contacts)


class _Mail(Category, domain=DOMAIN, category="email"):
    """The mail tools both clients share; each subclass names itself and its id prefixes."""

    state: MailState
    message_prefix: ClassVar[str]
    contact_prefix: ClassVar[str]
    forward_tag: ClassVar[str]

    @classmethod
    def initial_state(cls, day: date = TODAY) -> MailState:
        return _seed_mail(cls.message_prefix, cls.contact_prefix, day)

    def _message(self, message_id: str) -> MailMessage:
        for message in self.state.messages:
            if message.message_id == message_id:
                return message
        raise not_found("message", message_id)

    def _send(self, to: list[str], subject: str, body: str) -> MailMessage:
        if not subject.strip():
            raise invalid("subject must not be empty")
        addresses = resolve_recipients(to, self.state.contacts)
        # a known contact shows as 'Name <address>', as mail clients display it
        names = {c.email: c.name for c in self.state.contacts}
        addresses = [f"{names[a]} <{a}>" if a in names else a for a in addresses]
        message = MailMessage(
            message_id=self.world.new_id(self.message_prefix),
            folder="sent",
            from_name=self.world.user.name,
            from_email=self.state.address,
            to=addresses,
            subject=subject,
            body=body,
            timestamp=self.world.stamp(),
        )
        self.state.messages.append(message)
        return message

    @tool(
        "write",
        failure_hint="A 'sent' status does not prove delivery to every recipient; confirm with list_sent that the "
        "message and all recipients appear.",
    )
    def send_email(
        self,
        to: Annotated[list[str], Field(description="Recipient email addresses (or exact contact names)")],
        subject: Annotated[str, Field(description="Subject line")],
        body: Annotated[str, Field(description="Plain-text message body")],
    ) -> dict[str, Any]:
        """Send a new email from the user's account to one or more recipients.

        Returns the new message's id and the resolved recipient addresses."""
        message = self._send(to, subject, body)
        return {"message_id": message.message_id, "status": "sent", "to": message.to, "subject": message.subject}

    @tool(
        "write",
        failure_hint="The forward can drop recipients or fail to store; check list_sent for the forwarded subject "
        "and every address.",
    )
    def forward_message(
        self,
        message_id: Annotated[str, Field(description="Id of the message to forward (from search_inbox)")],
        to: Annotated[list[str], Field(description="Recipient email addresses (or exact contact names)")],
        note: Annotated[str, Field(description="Optional text placed above the forwarded message")] = "",
    ) -> dict[str, Any]:
        """Forward an existing message to one or more recipients, optionally with a short note on top."""
        original = self._message(message_id)
        body = (
            f"{note}\n\n---------- Forwarded message ----------\nFrom: {original.from_name} <{original.from_email}>\n"
        )
        body += f"Subject: {original.subject}\n\n{original.body}"
        message = self._send(to, f"{self.forward_tag} {original.subject}", body.lstrip("\n"))
        return {"message_id": message.message_id, "status": "sent", "to": message.to, "subject": message.subject}

    @tool(
        "readback",
        failure_hint="A message missing here was not sent, whatever send_email answered; compare subject and "
        "recipients with what you sent.",
    )
    def list_sent(
        self, limit: Annotated[int, Field(description="How many recent sent messages to list", ge=1, le=50)] = 10
    ) -> dict[str, Any]:
        """List the most recently sent messages, newest first, with recipients, subject and body."""
        sent = [m for m in self.state.messages if m.folder == "sent"]
        sent.sort(key=lambda m: m.timestamp, reverse=True)
        return {"messages": [_sent_view(m) for m in sent[:limit]]}

    @tool(
        "readback",
        failure_hint="An id from another mail provider is not found here; ids are per provider, so search first.",
    )
    def get_message(
        self, message_id: Annotated[str, Field(description="Message id from search_inbox or list_sent")]
    ) -> dict[str, Any]:
        """Get one message (received or sent) in full by its id."""
        return self._message(message_id).model_dump()

    @tool(
        "read",
        failure_hint="An empty result may mean the query words were too specific; retry with fewer words before "
        "concluding the email does not exist.",
    )
    def search_inbox(
        self,
        query: Annotated[
            str,
            Field(
                description="Words that must all appear in sender, subject or body; 'from:word' limits to the sender"
            ),
        ],
    ) -> dict[str, Any]:
        """Search received messages; every word of the query must match. Newest first, bodies included."""
        terms = words_of(query)
        if not terms:
            raise invalid("query must contain at least one word")
        found = []
        for message in self.state.messages:
            if message.folder != "inbox":
                continue
            sender = f"{message.from_name} {message.from_email}".lower()
            text = f"{sender} {message.subject} {message.body}".lower()
            if all(
                (term[5:] in sender) if term.startswith("from:") and len(term) > 5 else (term in text) for term in terms
            ):
                found.append(message)
        found.sort(key=lambda m: m.timestamp, reverse=True)
        return {"query": query, "messages": [_inbox_view(m) for m in found]}

    @tool("read", failure_hint="No match means the name is not a saved contact; ask the user for the address.")
    def search_contacts(
        self, name: Annotated[str, Field(description="Part of the contact's name or email address")]
    ) -> dict[str, Any]:
        """Find saved contacts whose name or email contains the given text."""
        needle = searched(name, "name must not be empty")
        hits = [c.model_dump() for c in self.state.contacts if needle in c.name.lower() or needle in c.email]
        return {"contacts": hits}


def _inbox_view(message: MailMessage) -> dict[str, Any]:
    return {
        "message_id": message.message_id,
        "from_name": message.from_name,
        "from_email": message.from_email,
        "subject": message.subject,
        "received_at": message.timestamp,
        "body": message.body,
    }


def _sent_view(message: MailMessage) -> dict[str, Any]:
    return {
        "message_id": message.message_id,
        "to": message.to,
        "subject": message.subject,
        "body": message.body,
        "sent_at": message.timestamp,
    }


class Gmail(_Mail, name="gmail", title="Gmail"):
    message_prefix = "gm"
    contact_prefix = "gc"
    forward_tag = "Fwd:"


class OutlookMail(_Mail, name="outlook_mail", title="Outlook Mail"):
    message_prefix = "olm"
    contact_prefix = "olp"
    forward_tag = "FW:"


# -------------------------------------------------------------------------------------------------------------------
# Calendars


LOCAL_ZONE = ZoneInfo("America/Los_Angeles")  # the user's zone (UserProfile.timezone); calendars show local time


def _local_time(text: str, what: str) -> datetime:
    """A start/end argument as local wall time; an offset, if given, is converted to the user's zone."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise invalid(f"{what} {text!r} is not an ISO 8601 date-time such as 2026-03-25T14:00") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(LOCAL_ZONE).replace(tzinfo=None)
    return moment.replace(second=0, microsecond=0)


def _check_date(date: str) -> str:
    try:
        return datetime.strptime(date.strip(), "%Y-%m-%d").strftime("%Y-%m-%d")
    except ValueError:
        raise invalid(f"date {date!r} is not a date such as 2026-03-23") from None


CalendarId = Annotated[str, Field(description="Calendar id from list_calendars")]
LocalDate = Annotated[str, Field(description="Local date, YYYY-MM-DD")]


class _Calendar(Category, domain=DOMAIN, category="calendar"):
    """Calendar tools shared by both providers; each names its ids, its calendars and the title field its own way;
    the templates are Google Calendar's."""

    state: CalendarState
    event_prefix: ClassVar[str]

    @classmethod
    def primary_id(cls) -> str:
        return next(c.calendar_id for c in held(histories().calendars, cls.name, CalendarInfo) if c.primary)

    @classmethod
    def initial_state(cls, day: date = TODAY) -> CalendarState:
        past = histories(day)
        events = [
            CalendarEvent(
                event_id=f"{cls.event_prefix}_{e.key}",
                calendar_id=cls.primary_id(),
                title=e.title,
                start=e.start,
                end=e.end,
                location=e.location,
                attendees=list(e.attendees),
            )
            for e in tables(day).events
        ]
        # the provider's own calendars' events: a holiday on the read-only one, so that a write to it is refused
        events += held(past.calendar_events, cls.name, CalendarEvent)
        return CalendarState(calendars=held(past.calendars, cls.name, CalendarInfo), events=events)

    def _calendar(self, calendar_id: str) -> CalendarInfo:
        for calendar in self.state.calendars:
            if calendar.calendar_id == calendar_id:
                return calendar
        raise not_found("calendar", calendar_id)

    def _event(self, event_id: str) -> CalendarEvent:
        for event in self.state.events:
            if event.event_id == event_id:
                return event
        raise not_found("event", event_id)

    def _event_view(self, event: CalendarEvent) -> dict[str, Any]:
        return event.model_dump()

    @tool(
        "write",
        failure_hint="A 'confirmed' status does not prove the event was stored as asked; read it back with "
        "list_events or get_event, and never create events from dates that are in the past or look corrupted.",
    )
    def create_event(
        self,
        calendar_id: Annotated[str, Field(description="Calendar id from list_calendars (primary: cal_001)")],
        title: Annotated[str, Field(description="Event title")],
        start: Annotated[str, Field(description="Start, local ISO date-time such as 2026-03-25T14:00")],
        end: Annotated[str, Field(description="End, local ISO date-time such as 2026-03-25T16:00")],
        location: Annotated[str, Field(description="Optional place or meeting link")] = "",
    ) -> dict[str, Any]:
        """Create an event on a calendar (times in the user's local time zone, America/Los_Angeles)."""
        calendar = self._calendar(calendar_id)
        if calendar.read_only:
            raise ToolExecutionError(f"calendar {calendar_id!r} ({calendar.name}) is read-only", "permission_denied")
        if not title.strip():
            raise invalid("the event needs a title")
        begin, finish = _local_time(start, "start"), _local_time(end, "end")
        if finish <= begin:
            raise invalid("end must be after start")
        event = CalendarEvent(
            event_id=self.world.new_id(self.event_prefix),
            calendar_id=calendar_id,
            title=title.strip(),
            start=begin.strftime("%Y-%m-%dT%H:%M"),
            end=finish.strftime("%Y-%m-%dT%H:%M"),
            location=location,
            attendees=[self.world.user.email],
            created_at=self.world.stamp(),
        )
        self.state.events.append(event)
        return self._created(event)

    def _created(self, event: CalendarEvent) -> dict[str, Any]:
        return {
            "event_id": event.event_id,
            "status": "confirmed",
            "calendar_id": event.calendar_id,
            "title": event.title,
            "start": event.start,
            "end": event.end,
            "created_at": event.created_at,
        }

    @tool(
        "write",
        failure_hint="Some invitations may not be saved; confirm with get_event that every attendee is listed.",
    )
    def add_attendees(
        self,
        event_id: Annotated[str, Field(description="Event id")],
        attendees: Annotated[list[str], Field(description="Email addresses (or exact contact names) to invite")],
    ) -> dict[str, Any]:
        """Invite people to an existing event; each gets an invitation email."""
        event = self._event(event_id)
        if self._calendar(event.calendar_id).read_only:
            raise ToolExecutionError("events on a read-only calendar cannot be changed", "permission_denied")
        for address in resolve_recipients(attendees, tables(self.world.as_of).correspondents):
            if address not in event.attendees:
                event.attendees.append(address)
        return self._invited(event, attendees)

    def _invited(self, event: CalendarEvent, attendees: list[str]) -> dict[str, Any]:
        return {"event_id": event.event_id, "status": "invitations_sent", "attendees": event.attendees}

    @tool("read", failure_hint="If the calendar you expect is missing, the account may be wrong; do not guess ids.")
    def list_calendars(self) -> dict[str, Any]:
        """List the user's calendars with their ids; the primary calendar is where new events normally go."""
        return {"calendars": [c.model_dump() for c in self.state.calendars]}

    @tool(
        "readback",
        failure_hint="Use this to confirm a created event landed on the right day and calendar; an event missing "
        "here was not saved.",
    )
    def list_events(
        self,
        calendar_id: CalendarId,
        date: LocalDate,
    ) -> dict[str, Any]:
        """List the events of one calendar that start on a given local date, earliest first."""
        self._calendar(calendar_id)
        day = _check_date(date)
        events = [e for e in self.state.events if e.calendar_id == calendar_id and e.start.startswith(day)]
        events.sort(key=lambda e: e.start)
        return {"calendar_id": calendar_id, "date": day, "events": [self._event_view(e) for e in events]}

    @tool("read", failure_hint="No match may mean different wording; try one distinctive word before giving up.")
    def search_events(
        self, query: Annotated[str, Field(description="Words to find in event titles or locations")]
    ) -> dict[str, Any]:
        """Search events on all calendars by words in the title or location (all words must match)."""
        terms = words_of(query)
        if not terms:
            raise invalid("query must contain at least one word")
        hits = [e for e in self.state.events if all(t in f"{e.title} {e.location}".lower() for t in terms)]
        hits.sort(key=lambda e: e.start)
        return {"query": query, "events": [self._event_view(e) for e in hits]}

    @tool(
        "readback",
        failure_hint="Compare start, end and attendees with what you asked for; a write can report success but "
        "store something else.",
    )
    def get_event(self, event_id: Annotated[str, Field(description="Event id")]) -> dict[str, Any]:
        """Get one event in full by its id."""
        return self._event_view(self._event(event_id))

    @tool(
        "write",
        failure_hint="A 'deleted' status may not stick; confirm with list_events for that day that the event is gone.",
    )
    def delete_event(self, event_id: Annotated[str, Field(description="Event id to delete")]) -> dict[str, Any]:
        """Delete an event from its calendar."""
        event = self._event(event_id)
        if self._calendar(event.calendar_id).read_only:
            raise ToolExecutionError("events on a read-only calendar cannot be deleted", "permission_denied")
        self.state.events.remove(event)
        return {"event_id": event_id, "status": "deleted"}


class GoogleCalendar(_Calendar, name="google_calendar", title="Google Calendar"):
    event_prefix = "gev"
    arg_names: ClassVar[Mapping[str, str | None]] = {"location": None}


class OutlookCalendar(_Calendar, name="outlook_calendar", title="Outlook Calendar"):
    event_prefix = "olev"
    renames: ClassVar[dict[str, str]] = {"add_attendees": "invite_attendees"}
    arg_names: ClassVar[Mapping[str, str | None]] = {"title": "subject"}
    arg_types: ClassVar[dict[str, Any]] = {
        "create_event.calendar_id": Annotated[
            str, Field(description="Calendar id from list_calendars (default: olcal_calendar)")
        ],
        "subject": Annotated[str, Field(description="Event subject (its title)")],
    }
    docs: ClassVar[dict[str, str]] = {
        "invite_attendees": "Send meeting invitations for an existing event to additional people."
    }
    hints: ClassVar[dict[str, str]] = {
        "create_event": "A success response does not prove the event was stored as asked; read it back with "
        "list_events or get_event before telling the user it is booked."
    }

    def _event_view(self, event: CalendarEvent) -> dict[str, Any]:
        # Outlook calls an event's title its subject
        return {("subject" if key == "title" else key): value for key, value in event.model_dump().items()}

    def _created(self, event: CalendarEvent) -> dict[str, Any]:
        return {
            "event_id": event.event_id,
            "status": "created",
            "calendar_id": event.calendar_id,
            "subject": event.title,
        }

    def _invited(self, event: CalendarEvent, attendees: list[str]) -> dict[str, Any]:
        return {"event_id": event.event_id, "status": "sent", "invited": len(attendees), "attendees": event.attendees}


SERVICES: list[type[Service]] = [*peers(Gmail, OutlookMail), *peers(GoogleCalendar, OutlookCalendar)]
