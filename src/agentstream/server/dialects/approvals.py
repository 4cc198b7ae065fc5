"""Tool calls waiting for a person's approval, as the chat tray, ops agent and workflow
assistant protocols show and answer them.

A run that stops at a tool needing approval ends with ``run_completed.pending_calls`` (see
:mod:`agentstream.pending`). These protocols were specified without such a stop, so each
shows it additively (an extra field or event on its final frames) and takes the answer in an
additive ``approvals`` request field: one entry per waiting call, ``approved`` true or false
and an optional ``reason`` the model reads with a denial. The entry's id field is named as
its protocol names tool call ids (``call_id``, ``tool_call_id``, ``tool_use_id``). A request
that only answers may leave its message empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import Field, StringConstraints

from agentstream.events import RunCompleted
from agentstream.messages import PendingToolCall
from agentstream.pending import Answers, ApprovalDecision
from agentstream.server.dialects.base import RequestModel
from agentstream.server.errors import bad_request

__all__ = [
    "MAX_APPROVALS",
    "REASON_LENGTH",
    "Approval",
    "CallId",
    "answers",
    "message_or_answers",
    "waiting_for_approval",
]

CALL_ID_LENGTH = 256
REASON_LENGTH = 2000
"""The longest ``reason``: a sentence or two for the model, not a document."""
MAX_APPROVALS = 64
"""More answers than any turn has calls."""

CallId = Annotated[str, StringConstraints(min_length=1, max_length=CALL_ID_LENGTH)]
"""A tool call id as a request names it."""


class Approval(RequestModel):
    """One answer: approve or decline a waiting call. Subclasses add the id field under
    their protocol's name and return it from :meth:`call`."""

    approved: bool
    reason: str | None = Field(default=None, max_length=REASON_LENGTH)

    def call(self) -> str:
        raise NotImplementedError

    def decision(self) -> ApprovalDecision:
        return ApprovalDecision(call_id=self.call(), approved=self.approved, reason=self.reason)


def answers(approvals: Sequence[Approval] | None) -> Answers | None:
    """The run's answers from a request's ``approvals`` (None when it brings none). Whether
    they fit the waiting calls is checked when the run begins: a 400 naming the field."""
    if not approvals:
        return None
    return Answers(decisions=tuple(a.decision() for a in approvals))


def message_or_answers(
    message: str, given: Answers | None, field: str = "message", attachments: Sequence[str] = ()
) -> str:
    """The request's message; a 400 naming ``field`` if it is blank and nothing is answered
    or attached (only a request that answers waiting calls or carries files may leave it
    empty)."""
    if message.strip():
        return message
    if given or attachments:
        return ""
    raise bad_request(field, "must not be empty")


def waiting_for_approval(event: RunCompleted) -> list[PendingToolCall]:
    """The calls ``event``'s run stopped at that wait for a person (not for the client)."""
    return [call for call in event.pending_calls if call.waiting_for == "approval"]
