"""Drafts: a workflow built one action at a time, kept per conversation.

A model that builds a long workflow in one ``preview_workflow`` call often gets one detail
wrong and must resend everything; a draft lets it add and remove actions step by step and
preview when the flow is complete. Drafts live in this process, keyed by the caller and the
conversation (a request without a conversation has its own run's draft), and the oldest are
forgotten beyond a limit.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from agentstream.tools import ToolContext
from examples.workflows.shapes import ActionSpec, WorkflowSpec

__all__ = ["Draft", "DraftStore"]


@dataclass
class Draft:
    name: str
    entity: str
    trigger_type: str
    description: str = ""
    actions: list[ActionSpec] = field(default_factory=list)

    def workflow(self) -> WorkflowSpec:
        return WorkflowSpec(
            name=self.name,
            description=self.description,
            entity=self.entity,
            trigger_type=self.trigger_type,
            actions=list(self.actions),
        )

    def outline(self) -> dict[str, object]:
        return {
            "name": self.name,
            "entity": self.entity,
            "trigger_type": self.trigger_type,
            "actions": [
                {"name": a.name, "action_type": a.action_type, "after": a.after}
                for a in self.actions
            ],
        }


class DraftStore:
    def __init__(self, limit: int = 1000) -> None:
        self.limit = limit
        self._drafts: OrderedDict[tuple[str | None, str, str], Draft] = OrderedDict()

    @staticmethod
    def _key(ctx: ToolContext) -> tuple[str | None, str, str]:
        return (ctx.principal.tenant_id, ctx.principal.user_id, ctx.conversation_id or ctx.run_id)

    def start(self, ctx: ToolContext, draft: Draft) -> Draft:
        key = self._key(ctx)
        self._drafts.pop(key, None)
        self._drafts[key] = draft
        while len(self._drafts) > self.limit:
            self._drafts.popitem(last=False)
        return draft

    def get(self, ctx: ToolContext) -> Draft:
        draft = self._drafts.get(self._key(ctx))
        if draft is None:
            raise LookupError("there is no draft in this conversation; call start_draft first")
        return draft
