"""Where a protocol's request branches the stored conversation, in the protocol's own terms.

Clients name the place to branch in their own way: the AI SDK by a message's position in the
list it sends (its ids are its own), AG-UI and the data playground by sending a history that
differs from the stored one. Each of those readings ends here, as a
:class:`~agentstream.runs.Branch` over the stored conversation's active path as the
conversation API shows it (a user message, then one answer per run), so every protocol
branches the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentstream.conversation import DisplayMessage
from agentstream.principal import Principal
from agentstream.runs import Branch, ConversationNotFound
from agentstream.runs.store import ConversationReader, ConversationStore

__all__ = ["active_path", "answer_again", "diverging", "edit", "question_at"]


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
