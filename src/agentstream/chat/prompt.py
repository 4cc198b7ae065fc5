"""The system prompt, assembled from named sections in a configurable order.

The chat tray builds its prompt as IDENTITY, CONTEXT, PAYLOAD MANIFEST, CAPABILITIES, CUSTOM
INSTRUCTIONS, GUIDELINES (:data:`DEFAULT_LAYOUT`, which also has room for the workflow
assistant's tool guidance after the identity). The workflow assistant puts its fixed blocks
first and the context last: role block, tool
guidance, response guidance, then the context (:data:`CONTEXT_LAST_LAYOUT`). A section with
nothing to say is left out, so a bare agent's prompt is its instructions plus what the request
adds. :class:`SystemPrompt` keeps the sections by name, so tests and diagnostics can see which
parts a prompt was made of.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from agentstream.chat.actions import ClientAction, ServerAction
from agentstream.tools import Tool

__all__ = [
    "CONTEXT_LAST_LAYOUT",
    "DEFAULT_LAYOUT",
    "SECTION_NAMES",
    "PromptSection",
    "SystemPrompt",
    "build_system_prompt",
    "render_capabilities",
]

SECTION_NAMES = (
    "identity",
    "tool_guidance",
    "context",
    "payload_manifest",
    "capabilities",
    "custom_instructions",
    "guidelines",
)
"""Every section a layout may name."""

DEFAULT_LAYOUT = SECTION_NAMES
"""The tray's order, with the workflow assistant's tool guidance (empty unless configured)
after the identity."""

CONTEXT_LAST_LAYOUT = ("identity", "tool_guidance", "guidelines", "context")
"""The workflow assistant's order: role block, tool guidance, response guidance, context."""

_HEADINGS = {
    "payload_manifest": "## Payloads in this conversation",
    "capabilities": "## Capabilities",
    "custom_instructions": "## Instructions",
}
"""Headings for the sections we assemble; texts the application writes are used verbatim."""


def check_layout(layout: Sequence[str]) -> tuple[str, ...]:
    unknown = [name for name in layout if name not in SECTION_NAMES]
    if unknown:
        raise ValueError(
            f"unknown prompt section(s) {unknown}; the sections are {list(SECTION_NAMES)}"
        )
    if len(set(layout)) != len(layout):
        raise ValueError(f"prompt layout names a section twice: {list(layout)}")
    return tuple(layout)


@dataclass(frozen=True, slots=True)
class PromptSection:
    name: str
    text: str


@dataclass(frozen=True, slots=True)
class SystemPrompt:
    """A built system prompt, kept as named sections so diagnostics and tests can see each one."""

    sections: tuple[PromptSection, ...]

    @property
    def text(self) -> str:
        return "\n\n".join(section.text for section in self.sections)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(section.name for section in self.sections)

    def section(self, name: str) -> str | None:
        return next((s.text for s in self.sections if s.name == name), None)

    def __str__(self) -> str:
        return self.text


def build_system_prompt(
    parts: Mapping[str, str | None], layout: Sequence[str] = DEFAULT_LAYOUT
) -> SystemPrompt:
    """The sections of ``layout`` that ``parts`` has text for, in layout order."""
    sections: list[PromptSection] = []
    for name in check_layout(layout):
        body = (parts.get(name) or "").strip()
        if not body:
            continue
        heading = _HEADINGS.get(name)
        sections.append(PromptSection(name, f"{heading}\n{body}" if heading else body))
    return SystemPrompt(tuple(sections))


def render_capabilities(
    *,
    tools: Iterable[Tool] = (),
    payload_types: str | None = None,
    client_actions: Iterable[ClientAction] = (),
    server_actions: Iterable[ServerAction] = (),
    suggestions: str | None = None,
) -> str | None:
    """The capabilities section: the tools, the payloads the model may write, the actions it may
    suggest, and how to write suggestions."""
    blocks: list[str] = []
    tool_lines = [f"- `{t.name}`: {_first_line(t.description)}" for t in tools]
    if tool_lines:
        blocks.append("Tools you can call:\n" + "\n".join(tool_lines))
    if payload_types:
        blocks.append(payload_types)
    action_lines = [
        f'- `{a.name}` (handler "client")' + (f": {a.description}" if a.description else "")
        for a in client_actions
    ] + [
        f'- `{a.name}` (handler "server")' + (f": {a.description}" if a.description else "")
        for a in server_actions
    ]
    if action_lines:
        blocks.append("Actions you can offer the user:\n" + "\n".join(action_lines))
    if suggestions:
        blocks.append(suggestions)
    return "\n\n".join(blocks) or None


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
