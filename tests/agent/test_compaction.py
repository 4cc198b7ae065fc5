"""What a model is sent of a conversation longer than its window: tool results over their
share cut with a note, earlier files named instead of sent, oldest exchanges left out whole;
never a tool call without its result, never an open call, never the latest exchange."""

from __future__ import annotations

import pytest

from agentstream import Agent, RunInput
from agentstream.agent.budget import ContextBudget, ContextLimits, LearnedWindows
from agentstream.agent.compaction import Compactor, placeholder
from agentstream.agent.inputs import Retry
from agentstream.agent.tokens import (
    IMAGE_TOKENS,
    TokenCounter,
    attachment_tokens,
    text_tokens,
)
from agentstream.errors import ContextOverflow
from agentstream.events import RunCompleted
from agentstream.messages import (
    AssistantMessage,
    Message,
    PendingToolCall,
    ToolCall,
    ToolResultPart,
    ToolResultsMessage,
    UserMessage,
)
from agentstream.providers.profiles import ModelProfile, ModelProfiles
from agentstream.providers.scripted import ScriptedProvider
from tests.attachments.samples import IMAGE, PAPER, TABLE


def exchange(n: int, *, size: int = 30, tool: bool = False) -> list[Message]:
    """A user message and its answer, with a tool round when ``tool``."""
    user = UserMessage(content=f"question {n} " + "q" * size)
    if not tool:
        return [user, AssistantMessage(text=f"answer {n} " + "a" * size)]
    call = ToolCall(id=f"c{n}", name="lookup", arguments={"n": n})
    return [
        user,
        AssistantMessage(text="Looking.", tool_calls=(call,)),
        ToolResultsMessage(
            results=(ToolResultPart(tool_call_id=f"c{n}", name="lookup", content="r"),)
        ),
        AssistantMessage(text=f"answer {n}"),
    ]


def history(count: int, **kwargs: bool | int) -> list[Message]:
    return [m for n in range(count) for m in exchange(n, **kwargs)]  # type: ignore[arg-type]


def tool_pairs_match(messages: tuple[Message, ...]) -> bool:
    open_calls: set[str] = set()
    for message in messages:
        if isinstance(message, ToolResultsMessage):
            answered = {r.tool_call_id for r in message.results}
            waiting = {p.call_id for p in message.pending}
            if answered | waiting != open_calls:
                return False
            open_calls = set()
        elif open_calls:
            return False
        if isinstance(message, AssistantMessage):
            open_calls = {c.id for c in message.tool_calls}
    return not open_calls


def test_text_estimates_err_high() -> None:
    assert text_tokens("") == 0
    assert text_tokens("abcd") == 2  # about 4 characters a token in English: counted as 3
    assert text_tokens("a" * 300) == 100
    # Chinese is about a token a character with the vendors' tokenizers: counted as 1.2.
    assert text_tokens("你好" * 50) >= 100
    assert attachment_tokens(IMAGE) == IMAGE_TOKENS
    assert attachment_tokens(PAPER) == IMAGE_TOKENS  # a page costs at least an image
    assert attachment_tokens(TABLE) > TABLE.size // 4


def test_a_history_that_fits_is_sent_as_it_is() -> None:
    messages = history(5)
    count = TokenCounter()
    sent = Compactor(count).compact(messages, budget=10_000, fixed=100, result_limit=1_000)
    assert sent.messages == tuple(messages)
    assert not sent.changed
    assert sent.tokens == 100 + count.total(messages)


def test_oldest_whole_exchanges_go_first_and_tool_pairs_stay_together() -> None:
    messages = history(40, tool=True)
    count = TokenCounter()
    budget = count.total(messages) // 3
    sent = Compactor(count).compact(messages, budget=budget, fixed=0, result_limit=1_000)
    assert sent.dropped > 0 and sent.tokens <= budget
    assert isinstance(sent.messages[0], UserMessage)
    assert tool_pairs_match(sent.messages)
    # What is sent is the newest part of the conversation, in order, untouched.
    assert sent.messages == tuple(messages[-len(sent.messages) :])
    assert len(sent.messages) % 4 == 0


def test_the_latest_exchange_is_sent_whole_even_over_budget() -> None:
    messages = [*history(3), *exchange(9, size=3_000, tool=True)]
    sent = Compactor(TokenCounter()).compact(messages, budget=10, fixed=0, result_limit=10_000)
    assert sent.messages == tuple(messages[-4:])
    assert sent.dropped == 3


def test_an_exchange_with_open_calls_is_kept() -> None:
    call = ToolCall(id="ask", name="confirm")
    waiting = [
        UserMessage(content="Delete it " + "x" * 500),
        AssistantMessage(tool_calls=(call,)),
        ToolResultsMessage(
            results=(),
            pending=(PendingToolCall(call_id="ask", name="confirm", waiting_for="approval"),),
        ),
    ]
    messages = [*history(5), *waiting, *history(5)]
    sent = Compactor(TokenCounter()).compact(messages, budget=50, fixed=0, result_limit=1_000)
    assert all(m in sent.messages for m in waiting)
    assert sent.dropped == 9


def test_a_tool_result_over_its_share_is_cut_with_a_note() -> None:
    long = "line of output\n" * 2_000
    result = ToolResultPart(tool_call_id="c1", name="logs", content=long)
    messages: list[Message] = [
        UserMessage(content="Show the logs"),
        AssistantMessage(tool_calls=(ToolCall(id="c1", name="logs"),)),
        ToolResultsMessage(results=(result,)),
    ]
    compactor = Compactor(TokenCounter())
    sent = compactor.compact(messages, budget=100_000, fixed=0, result_limit=1_000)
    assert sent.cut == 1 and sent.dropped == 0
    last = sent.messages[-1]
    assert isinstance(last, ToolResultsMessage)
    content = last.results[0].content
    assert content.startswith(long[:2_000])
    assert content.endswith("characters are shown.]") and f"of {len(long):,}" in content
    assert text_tokens(content) <= 1_000 + 50
    # The conversation itself keeps the whole result; the cut is made once per run.
    assert messages[-1].results[0].content == long  # type: ignore[union-attr]
    again = compactor.compact(messages, budget=100_000, fixed=0, result_limit=1_000)
    assert again.messages[-1] is last


def test_earlier_files_become_their_names_before_exchanges_are_dropped() -> None:
    with_files = UserMessage(content="See these", attachments=(IMAGE, PAPER))
    messages: list[Message] = [
        with_files,
        AssistantMessage(text="Seen."),
        *history(3),
        UserMessage(content="And this one?", attachments=(IMAGE,)),
    ]
    count = TokenCounter()
    budget = count.total(messages) - IMAGE_TOKENS
    sent = Compactor(count).compact(messages, budget=budget, fixed=0, result_limit=1_000)
    assert (sent.placeholders, sent.dropped) == (2, 0)
    first = sent.messages[0]
    assert isinstance(first, UserMessage) and first.attachments == ()
    assert first.content == "See these\n\n" + placeholder(["error.png", "paper.pdf"])
    assert sent.messages[-1] == messages[-1]  # the latest message keeps its file


def test_files_a_tool_made_are_named_too() -> None:
    result = ToolResultPart(tool_call_id="c1", name="chart", content="drawn", attachments=(IMAGE,))
    messages: list[Message] = [
        UserMessage(content="Chart it"),
        AssistantMessage(tool_calls=(ToolCall(id="c1", name="chart"),)),
        ToolResultsMessage(results=(result,)),
        AssistantMessage(text="Here."),
        UserMessage(content="Thanks"),
    ]
    sent = Compactor(TokenCounter()).compact(messages, budget=200, fixed=0, result_limit=1_000)
    results = sent.messages[2]
    assert isinstance(results, ToolResultsMessage)
    assert results.results[0].attachments == ()
    assert results.results[0].content == "drawn\n\n" + placeholder(["error.png"])


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="margin"):
        ContextLimits(margin=0.6)
    with pytest.raises(ValueError, match="tool_result_share"):
        ContextLimits(tool_result_share=0)


def budget_for(window: int | None, **limits: float) -> ContextBudget:
    profile = ModelProfile(context_window=window)
    return ContextBudget(
        "vendor:model",
        profile,
        ContextLimits(**limits),  # type: ignore[arg-type]
        LearnedWindows(),
        system="Be brief.",
        tools=(),
    )


def test_an_answer_limit_as_large_as_the_window_leaves_room_for_the_conversation() -> None:
    messages = history(100)
    sent = budget_for(4_096).fit(messages, max_tokens=4_096)
    assert 0 < sent.dropped < 100
    assert 1_700 < sent.tokens <= 4_096 - 4_096 // 2 - int(4_096 * 0.05)


def test_a_model_without_a_window_is_sent_everything_until_it_refuses() -> None:
    messages = history(100)
    budget = budget_for(None)
    sent = budget.fit(messages, max_tokens=500)
    assert sent.messages == tuple(messages) and not sent.changed
    # Refused without a size: a window below what was refused.
    assert budget.refused(ContextOverflow("too long"), sent, 500)
    assert budget.window == int((sent.tokens + 500) * 0.75)
    smaller = budget.fit(messages, max_tokens=500)
    assert smaller.dropped > 0 and smaller.tokens < sent.tokens


def test_a_stated_window_is_scaled_by_how_far_the_estimate_fell_short() -> None:
    learned = LearnedWindows()
    refusal = ContextOverflow("too long", window=10_000, requested=12_000)
    assert learned.learn("m", refusal, estimate=9_000, max_tokens=1_000) == 7_500
    # A later refusal never raises what was learned.
    looser = ContextOverflow("too long", window=10_000, requested=10_500)
    assert learned.learn("m", looser, estimate=10_000, max_tokens=1_000) == 7_500
    assert learned.get("m") == 7_500 and learned.get("other") is None


def test_the_tool_result_share_is_of_the_window() -> None:
    result = ToolResultPart(tool_call_id="c1", name="logs", content="x " * 20_000)
    messages: list[Message] = [
        UserMessage(content="Logs?"),
        AssistantMessage(tool_calls=(ToolCall(id="c1", name="logs"),)),
        ToolResultsMessage(results=(result,)),
    ]
    sent = budget_for(100_000, tool_result_share=0.05).fit(messages, max_tokens=1_000)
    assert sent.cut == 1
    assert text_tokens(sent.messages[-1].results[0].content) <= 5_000 + 50  # type: ignore[union-attr]
    assert budget_for(100_000).fit(messages, max_tokens=1_000).cut == 0


def test_the_question_a_run_answers_is_kept_when_the_run_asks_again() -> None:
    question = UserMessage(content="The question " + "q" * 3_000)
    messages = [
        *history(5),
        question,
        AssistantMessage(text="Rejected answer"),
        UserMessage(content="Answer in English, please."),
    ]
    sent = Compactor(TokenCounter()).compact(
        messages, budget=10, fixed=0, result_limit=10_000, current=10
    )
    assert sent.messages == tuple(messages[10:])


class AskAgain:
    def check(self, text: str) -> Retry | None:
        return Retry(user_message="Once more, in English.", notice="Asking again.")


async def test_an_answer_check_does_not_cost_the_model_its_question() -> None:
    provider = ScriptedProvider({"turns": [{"text": "Nein."}, {"text": "No."}]})
    window = ModelProfiles().with_profiles({"scripted:*": {"context_window": 2_000}})
    agent = Agent(model=provider, profiles=window, max_tokens=100, answer_checks=[AskAgain()])
    question = "The question " + "q " * 3_000  # over the budget by itself
    events = [e async for e in agent.run(RunInput(message=question, history=history(30, size=100)))]
    assert isinstance(events[-1], RunCompleted)
    asked_again = provider.requests[-1].messages
    assert [m.content for m in asked_again if isinstance(m, UserMessage)] == [
        question,
        "Once more, in English.",
    ]


def test_a_growing_history_is_compacted_as_if_counted_afresh() -> None:
    """Each call extends the previous call's pass over the history; the answer is the same
    as a fresh pass's, including when the history is replaced rather than grown."""
    with_files = UserMessage(content="See this", attachments=(IMAGE,))
    messages: list[Message] = [with_files, AssistantMessage(text="Seen.")]
    long_result = ToolResultPart(tool_call_id="c", name="logs", content="log line\n" * 3_000)
    for n in range(30):
        messages += exchange(n, size=200, tool=n % 3 == 0)
        if n % 7 == 0:
            messages += [
                UserMessage(content="Logs?"),
                AssistantMessage(tool_calls=(ToolCall(id="c", name="logs"),)),
                ToolResultsMessage(results=(long_result,)),
            ]
    growing = Compactor(TokenCounter())
    for end in range(1, len(messages) + 1):
        prefix = messages[:end]
        for budget in (500, 5_000):
            kwargs = {"budget": budget, "fixed": 50, "result_limit": 800}
            assert growing.compact(prefix, **kwargs) == Compactor(TokenCounter()).compact(
                prefix, **kwargs
            )
    shuffled = [*messages[10:], *messages[:10]]
    assert growing.compact(shuffled, budget=500, fixed=0, result_limit=800) == Compactor(
        TokenCounter()
    ).compact(shuffled, budget=500, fixed=0, result_limit=800)
