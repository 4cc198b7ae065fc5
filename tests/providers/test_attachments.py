"""Files in each vendor's native form, checked on what its SDK sent to the fake upstream: an
image, a PDF and a text file in the first turn, and the same again in a later turn (history
keeps them), plus images a tool returned."""

from __future__ import annotations

import base64
from types import ModuleType
from typing import Any

import pytest

from agentstream.attachments import Attachment
from agentstream.errors import ProviderError
from agentstream.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultPart,
    ToolResultsMessage,
    UserMessage,
)
from tests.attachments import samples

from .fakes import FakeUpstream, anthropic, google, ollama, openai, openai_responses
from .helpers import collect, request

PNG, CSV = samples.PNG, samples.CSV
IMAGE, PDF, TABLE = samples.IMAGE, samples.PAPER, samples.TABLE
FILES = samples.CONTENT
B64_PNG = base64.b64encode(PNG).decode()
B64_PDF = base64.b64encode(samples.PDF).decode()
FRAMED_CSV = f'<file name="cities.csv" media_type="text/csv">\n{CSV.decode()}\n</file>'
QUESTION = "What do these show?"


def turns(*attachments: Attachment) -> dict[str, tuple[Message, ...]]:
    """The message with files alone (the first turn) and followed by an answer and a new
    question (a later turn, where history resends it)."""
    asked = UserMessage(content=QUESTION, attachments=attachments)
    return {
        "first": (asked,),
        "later": (asked, AssistantMessage(text="A chart."), UserMessage(content="And now?")),
    }


ANTHROPIC_NATIVE = [
    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64_PNG}},
    {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": B64_PDF},
        "title": "paper.pdf",
    },
    {"type": "text", "text": FRAMED_CSV},
    {"type": "text", "text": QUESTION},
]
OPENAI_NATIVE = [
    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64_PNG}"}},
    {
        "type": "file",
        "file": {"filename": "paper.pdf", "file_data": f"data:application/pdf;base64,{B64_PDF}"},
    },
    {"type": "text", "text": FRAMED_CSV},
    {"type": "text", "text": QUESTION},
]
RESPONSES_NATIVE = [
    {"type": "input_image", "image_url": f"data:image/png;base64,{B64_PNG}", "detail": "auto"},
    {
        "type": "input_file",
        "filename": "paper.pdf",
        "file_data": f"data:application/pdf;base64,{B64_PDF}",
    },
    {"type": "input_text", "text": FRAMED_CSV},
    {"type": "input_text", "text": QUESTION},
]
GEMINI_NATIVE = [
    # As google-genai writes a Blob: the part's key in camelCase, the blob's own in snake_case,
    # its bytes in URL-safe base64 (the API reads both spellings of each).
    {"inlineData": {"mime_type": "image/png", "data": base64.urlsafe_b64encode(PNG).decode()}},
    {
        "inlineData": {
            "mime_type": "application/pdf",
            "data": base64.urlsafe_b64encode(samples.PDF).decode(),
        }
    },
    {"text": FRAMED_CSV},
    {"text": QUESTION},
]


def first_user_message(vendor: ModuleType, body: dict[str, Any]) -> Any:
    if vendor is google:
        return body["contents"][0]
    if vendor is openai_responses:
        return body["input"][0]
    return next(m for m in body["messages"] if m["role"] == "user")


EXPECTED: dict[ModuleType, Any] = {
    anthropic: {"role": "user", "content": ANTHROPIC_NATIVE},
    openai: {"role": "user", "content": OPENAI_NATIVE},
    openai_responses: {"role": "user", "content": RESPONSES_NATIVE},
    google: {"role": "user", "parts": GEMINI_NATIVE},
}


@pytest.mark.parametrize("turn", ["first", "later"])
@pytest.mark.parametrize("vendor", list(EXPECTED), ids=lambda v: v.name)
async def test_an_image_a_pdf_and_a_text_file_reach_the_vendor_natively(
    upstream: FakeUpstream, vendor: ModuleType, turn: str
) -> None:
    upstream.queue(vendor.text("ok"))
    provider = vendor.provider(upstream)
    try:
        await collect(provider, request(*turns(IMAGE, PDF, TABLE)[turn], tools=(), files=FILES))
    finally:
        await provider.aclose()
    body = vendor.request_body(upstream.posts[0])
    assert first_user_message(vendor, body) == EXPECTED[vendor]


@pytest.mark.parametrize("turn", ["first", "later"])
async def test_ollama_takes_images_in_images_and_text_files_in_the_content(
    upstream: FakeUpstream, turn: str
) -> None:
    upstream.queue(ollama.text("ok"))
    provider = ollama.provider(upstream)
    try:
        await collect(provider, request(*turns(IMAGE, TABLE)[turn], tools=(), files=FILES))
    finally:
        await provider.aclose()
    body = ollama.request_body(upstream.posts[0])
    assert first_user_message(ollama, body) == {
        "role": "user",
        "content": f"{FRAMED_CSV}\n\n{QUESTION}",
        "images": [B64_PNG],
    }


async def test_ollama_refuses_a_pdf_before_calling(upstream: FakeUpstream) -> None:
    provider = ollama.provider(upstream)
    try:
        with pytest.raises(ProviderError, match="PDF"):
            await collect(provider, request(*turns(PDF)["first"], tools=(), files=FILES))
    finally:
        await provider.aclose()
    assert upstream.posts == []


def with_a_tool_image() -> tuple[Message, ...]:
    call = ToolCall(id="call_1", name="screenshot", arguments={})
    return (
        UserMessage(content="Show me the page."),
        AssistantMessage(tool_calls=(call,)),
        ToolResultsMessage(
            results=(
                ToolResultPart(
                    tool_call_id="call_1", name="screenshot", content="Taken.", attachments=(IMAGE,)
                ),
            )
        ),
    )


async def sent_with_a_tool_image(upstream: FakeUpstream, vendor: ModuleType) -> Any:
    upstream.queue(vendor.text("A login page."))
    provider = vendor.provider(upstream)
    try:
        await collect(provider, request(*with_a_tool_image(), tools=(), files=FILES))
    finally:
        await provider.aclose()
    return vendor.request_body(upstream.posts[0])


async def test_an_image_a_tool_returned_goes_inside_anthropics_tool_result(
    upstream: FakeUpstream,
) -> None:
    messages = (await sent_with_a_tool_image(upstream, anthropic))["messages"]
    assert messages[2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "call_1",
                "content": [{"type": "text", "text": "Taken."}, ANTHROPIC_NATIVE[0]],
                "is_error": False,
            }
        ],
    }


async def test_an_image_a_tool_returned_follows_the_tool_message_in_chat_completions(
    upstream: FakeUpstream,
) -> None:
    messages = (await sent_with_a_tool_image(upstream, openai))["messages"]
    assert messages[-2:] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "Taken."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Images from the screenshot call call_1:"},
                OPENAI_NATIVE[0],
            ],
        },
    ]


async def test_content_missing_from_the_request_is_a_bad_request(upstream: FakeUpstream) -> None:
    provider = anthropic.provider(upstream)
    try:
        with pytest.raises(ProviderError, match="'error.png' is missing") as failed:
            await collect(provider, request(*turns(IMAGE)["first"], tools=()))
    finally:
        await provider.aclose()
    assert failed.value.kind == "bad_request"
    assert upstream.posts == []


async def test_an_image_a_tool_returned_is_part_of_the_responses_function_output(
    upstream: FakeUpstream,
) -> None:
    body = await sent_with_a_tool_image(upstream, openai_responses)
    (output,) = [item for item in body["input"] if item.get("type") == "function_call_output"]
    assert output == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": [{"type": "input_text", "text": "Taken."}, RESPONSES_NATIVE[0]],
    }


async def test_an_image_a_tool_returned_follows_the_function_response_in_gemini(
    upstream: FakeUpstream,
) -> None:
    body = await sent_with_a_tool_image(upstream, google)
    parts = body["contents"][-1]["parts"]
    assert [next(iter(part)) for part in parts] == ["functionResponse", "inlineData"]
    assert parts[1] == GEMINI_NATIVE[0]


async def test_an_image_a_tool_returned_is_in_the_ollama_tool_messages_images(
    upstream: FakeUpstream,
) -> None:
    body = await sent_with_a_tool_image(upstream, ollama)
    assert body["messages"][-1] == {
        "role": "tool",
        "tool_name": "screenshot",
        "content": "Taken.",
        "images": [B64_PNG],
    }
