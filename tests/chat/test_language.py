from __future__ import annotations

from agentstream import Agent
from agentstream.agent import Retry
from agentstream.chat.language import CJK, CYRILLIC, LanguageGuard
from agentstream.events import TextDelta
from agentstream.messages import UserMessage
from agentstream.providers.scripted import ScriptedProvider

from .helpers import completed, provider_of, run_chat


def test_a_chinese_answer_asks_for_english() -> None:
    retry = LanguageGuard().check("这个工作流程有三个步骤。")
    assert retry == Retry(
        user_message="Please respond in English, not Chinese.",
        notice="[Retrying in English...]",
    )


def test_english_with_a_quoted_chinese_name_passes() -> None:
    assert (
        LanguageGuard().check("The rule is called 库存 in the Chinese UI; it has 3 steps.") is None
    )
    assert LanguageGuard().check("") is None
    assert LanguageGuard().check("12345 !!!") is None


def test_the_guard_is_configurable() -> None:
    guard = LanguageGuard("German", reject=[CYRILLIC, CJK])
    assert guard.detect("Привет, как дела?") is CYRILLIC
    retry = guard.check("Привет, как дела?")
    assert retry is not None
    assert retry.user_message == "Please respond in German, not Russian."
    assert retry.notice == "[Retrying in German...]"
    assert guard.check("Guten Tag!") is None


def _model(answer: str, after_retry: str) -> ScriptedProvider:
    return ScriptedProvider(
        {
            "rules": [
                {"match": "Please respond in English", "turns": [{"text": after_retry}]},
                {"turns": [{"text": answer}]},
            ]
        }
    )


async def test_a_chinese_answer_is_retried_once_in_english_through_the_runner() -> None:
    agent = Agent(
        model=_model("这个工作流程有三个步骤。", "This workflow has three steps."),
        answer_checks=[LanguageGuard()],
    )
    events = await run_chat(agent, None)
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert (
        streamed == "这个工作流程有三个步骤。[Retrying in English...]This workflow has three steps."
    )
    assert completed(events).message == "This workflow has three steps."
    retry = provider_of(agent).requests[1].messages[-1]
    assert retry == UserMessage(content="Please respond in English, not Chinese.")


async def test_the_guard_fires_at_most_once() -> None:
    agent = Agent(model=_model("第一次。", "第二次。"), answer_checks=[LanguageGuard()])
    done = completed(await run_chat(agent, None))
    assert done.message == "第二次。"
    assert len(provider_of(agent).requests) == 2
