"""The loop hands each model request the content of the files its history carries, read
once per run, and fails the run before the call when the model cannot read a kind of file."""

from __future__ import annotations

from agentstream import Agent, RunInput
from agentstream.attachments import Attachment
from agentstream.events import RunCompleted, RunFailed, ToolCallFinished
from agentstream.messages import AssistantMessage, UserMessage
from agentstream.providers.profiles import ModelProfile, ModelProfiles
from agentstream.tools import ToolContext, ToolResult, tool
from tests.attachments import samples
from tests.attachments.samples import IMAGE, PNG
from tests.attachments.samples import PAPER as PDF

from .helpers import collect, of_type, scripted
from .test_loop import add


class Kept:
    """Attachments' content held in memory (an :class:`AttachmentContent`), counting reads."""

    def __init__(self) -> None:
        self.content_of = {IMAGE.sha256: PNG, PDF.sha256: samples.PDF}
        self.reads: list[str] = []

    async def content(self, attachment: Attachment) -> bytes:
        self.reads.append(attachment.id)
        return self.content_of[attachment.sha256]


async def test_every_turn_gets_the_files_of_its_history_read_once_per_run() -> None:
    provider = scripted(
        {"tool_calls": [{"id": "t1", "name": "add", "arguments": {"a": 1, "b": 2}}]},
        {"text": "A chart, and 3."},
    )
    kept = Kept()
    history = [UserMessage(content="Earlier", attachments=(PDF,)), AssistantMessage(text="Seen.")]
    events = await collect(
        Agent(model=provider, tools=[add]),
        RunInput(message="Look", attachments=(IMAGE,), history=history, files=kept),
    )
    assert isinstance(events[-1], RunCompleted)
    assert len(provider.requests) == 2
    for request in provider.requests:
        assert request.files == {IMAGE.sha256: PNG, PDF.sha256: samples.PDF}
        assert request.messages[2] == UserMessage(content="Look", attachments=(IMAGE,))
    assert sorted(kept.reads) == sorted([IMAGE.id, PDF.id])


async def test_a_model_that_cannot_read_a_kind_is_not_called() -> None:
    provider = scripted({"text": "never"})
    text_only = ModelProfiles().with_profiles(
        {"scripted:*": ModelProfile(inputs=frozenset({"text"}))}
    )
    agent = Agent(model=provider, profiles=text_only)
    history = [UserMessage(content="Earlier", attachments=(IMAGE,)), AssistantMessage(text="Ok.")]
    events = await collect(agent, RunInput(message="And now?", history=history, files=Kept()))
    failed = events[-1]
    assert isinstance(failed, RunFailed)
    assert (failed.kind, failed.message) == (
        "bad_request",
        "the model scripted:script cannot read images; send them to a model that can, "
        "or leave them out",
    )
    assert provider.requests == []


async def test_files_without_anywhere_to_read_them_fail_the_run() -> None:
    provider = scripted({"text": "never"})
    events = await collect(Agent(model=provider), RunInput(message="Look", attachments=(IMAGE,)))
    failed = events[-1]
    assert isinstance(failed, RunFailed) and "keeps no attachments" in failed.message
    assert provider.requests == []


async def test_a_tool_cannot_attach_a_file_where_the_run_keeps_none() -> None:
    @tool
    async def chart(ctx: ToolContext) -> ToolResult:
        """Draw a chart."""
        drawn = await ctx.attach(PNG, name="chart.png")
        return ToolResult(text="Drawn.", attachments=(drawn,))

    provider = scripted(
        {"tool_calls": [{"id": "c1", "name": "chart", "arguments": {}}]}, {"text": "Sorry."}
    )
    events = await collect(Agent(model=provider, tools=[chart]), "Draw it")
    (finished,) = of_type(events, ToolCallFinished)
    assert finished.is_error
    assert "keeps no attachments" in finished.result
