"""Who is asking: the authenticated caller of a run.

Authentication (``agentstream.server.auth``) produces a :class:`Principal`; the run pipeline hands
it to tools (user id and raw bearer token, which the workflow assistant protocol forwards verbatim
to downstream APIs) and to the store (ownership and tenant isolation). ``token`` is a secret: it is
excluded from ``repr`` so it cannot leak into logs by accident.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ANONYMOUS", "Principal"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Principal:
    """Who a run acts for: conversations, runs and tenant data are scoped to it."""

    user_id: str
    tenant_id: str | None = None
    token: str | None = field(default=None, repr=False)
    claims: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def tenant(self) -> str:
        """The tenant as stored: no tenant is the empty one, so ``None`` and ``""`` are the
        same owner everywhere."""
        return self.tenant_id or ""

    @property
    def owner(self) -> str:
        """The one key for "whose is this" (tenant and user together): a conversation or run
        belongs to a caller exactly when their ``owner`` keys are equal. Compare this rather
        than the fields one by one, so every place agrees on what the same owner means."""
        return f"{self.tenant}\x1f{self.user_id}"


ANONYMOUS = Principal(user_id="local")
"""The caller in anonymous local mode (a server bound to loopback with no auth configured)."""
