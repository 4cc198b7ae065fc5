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

__all__ = ["active_path", "answer_again", "edit", "question_at"]


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
