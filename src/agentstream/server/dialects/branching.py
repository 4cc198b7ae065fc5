"""Where a protocol's request branches the stored conversation, in the protocol's own terms.

Clients name the place to branch in their own way: the AI SDK by a message's position in the
list it sends (its ids are its own), AG-UI and the data playground by sending a history that
differs from the stored one, the chat tray, ops agent and workflow assistant by two optional
fields of their own (:class:`BranchingRequest`) that clients written before branches never
send. Each of those readings ends here, as a
:class:`~agentstream.runs.Branch` over the stored conversation's active path as the
conversation API shows it (a user message, then one answer per run), so every protocol
branches the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Annotated

from pydantic import Field, StringConstraints

from agentstream.conversation import DisplayMessage
from agentstream.pending import Answers
from agentstream.principal import Principal
from agentstream.runs import Branch, ConversationNotFound, RunRequest
from agentstream.runs.store import ConversationReader, ConversationStore
from agentstream.server.dialects.approvals import message_or_answers
from agentstream.server.dialects.base import AttachingRequest
from agentstream.server.errors import bad_request

__all__ = [
    "BranchingRequest",
    "active_path",
    "answer_again",
    "diverging",
    "edit",
    "question_at",
    "branched",
]


async def active_path(
    store: ConversationStore | None, principal: Principal, conversation_id: str | None
) -> tuple[DisplayMessage, ...]:
    """The stored conversation's active path as shown (nothing for a conversation not
    started yet, or a server that keeps none)."""
    if conversation_id is None or not isinstance(store, ConversationReader):
        return ()
    try:
        return (await store.get_conversation(principal, conversation_id)).messages
    except ConversationNotFound:
        return ()


def question_at(shown: Sequence[DisplayMessage], number: int) -> int | None:
    """Where the ``number``-th user message (from 1) is in ``shown``; None past the last."""
    seen = 0
    for index, message in enumerate(shown):
        if message.role == "user":
            seen += 1
            if seen == number:
                return index
    return None


def edit(shown: Sequence[DisplayMessage], index: int) -> Branch:
    """A new question in place of the one at ``index``: a sibling of it, after what it
    followed."""
    return Branch(after=shown[index - 1].id if index > 0 else None)


def answer_again(shown: Sequence[DisplayMessage], index: int) -> Branch:
    """A new answer to the question at ``index``, beside the answers it has."""
    return Branch(after=shown[index].id, again=True)


def diverging(shown: Sequence[DisplayMessage], asked: Sequence[str], new: str) -> Branch | None:
    """Where a client that sends its whole history branches the stored conversation:
    ``asked`` are the questions its history holds (oldest first), ``new`` its new message.

    The questions are compared with the stored path's, in order. A client whose history
    agrees with the stored path (or goes beyond it: the store has less) continues it (None).
    One whose history stops short of the stored path asks its next question anew: the same
    question again is a new answer to it (a client that dropped the answer to ask again),
    another text an edit of it. One whose history differs from the stored path's at a
    question branches there: its new message takes the place of that question."""
    stored = [index for index, message in enumerate(shown) if message.role == "user"]
    common = 0
    while common < min(len(asked), len(stored)) and asked[common] == shown[stored[common]].content:
        common += 1
    if common == len(stored):
        return None
    index = stored[common]
    if common == len(asked) and new == shown[index].content:
        return answer_again(shown, index)
    return edit(shown, index)


class BranchingRequest(AttachingRequest):
    """A request that may start a branch: the chat tray's, the ops agent's and the workflow
    assistant's extension of their protocols."""

    parent_message_id: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = (
        Field(
            default=None,
            description="The message the new one follows, as the conversation API shows it: "
            "the message starts a branch there (null: the conversation starts anew), the old "
            "branch is kept (an extension of this protocol)",
        )
    )
    regenerate: bool = Field(
        default=False,
        description="Answer a question again, beside the answers it has: the one "
        "`parent_message_id` names, else the conversation's last; `message` may be left out "
        "(an extension of this protocol)",
    )

    message: str = ""
    """Required unless the request answers the calls the conversation waits on, carries
    files, or regenerates (which asks the stored question)."""

    def new_message(self, given: Answers | None) -> str:
        """The message to send (see
        :func:`~agentstream.server.dialects.approvals.message_or_answers`)."""
        if self.regenerate:
            return ""
        return message_or_answers(self.message, given, attachments=self.attachments)


async def branched(
    body: BranchingRequest, store: ConversationStore | None, request: RunRequest
) -> RunRequest:
    """``request`` on the branch ``body`` asks for, if any."""
    return replace(request, branch=await _requested(body, store, request))


async def _requested(
    body: BranchingRequest, store: ConversationStore | None, request: RunRequest
) -> Branch | None:
    named = "parent_message_id" in body.model_fields_set
    if not named and not body.regenerate:
        return None
    if request.conversation_id is None:
        field = "regenerate" if body.regenerate else "parent_message_id"
        raise bad_request(field, "a branch needs the conversation it branches")
    if body.regenerate and body.parent_message_id is not None:
        return Branch(after=body.parent_message_id, again=True)
    if not body.regenerate:
        return Branch(after=body.parent_message_id)
    shown = await active_path(store, request.principal, request.conversation_id)
    asked = [index for index, message in enumerate(shown) if message.role == "user"]
    if not asked:
        raise bad_request("regenerate", "the conversation has no question to answer again")
    return answer_again(shown, asked[-1])
