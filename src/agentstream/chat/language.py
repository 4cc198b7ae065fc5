"""Keeping answers in the language the application expects.

Some models (the workflow assistant runs qwen3 locally) drift into another language.
:class:`LanguageGuard` is an :class:`~agentstream.agent.AnswerCheck`: when a final answer is written
mostly in a script the agent must not answer in, the loop streams a notice to the client
(``[Retrying in English...]``), asks once more with a corrective user message ("Please respond in
English, not Chinese.") and keeps only the new answer. It fires at most once per run, so a model
that insists still gets its answer delivered::

    agent = Agent(model=..., answer_checks=[LanguageGuard()])  # English, not Chinese
    agent = Agent(model=..., answer_checks=[LanguageGuard("German", reject=[CYRILLIC])])
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agentstream.agent import Retry

__all__ = ["ARABIC", "CJK", "CYRILLIC", "LanguageGuard", "WritingSystem"]


@dataclass(frozen=True, slots=True)
class WritingSystem:
    """A writing system to detect: ``language`` names it in the corrective message."""

    language: str
    pattern: re.Pattern[str]


CJK = WritingSystem(
    "Chinese",
    re.compile(
        "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\u3000-\u303f\uff00-\uffef"
        "\U00020000-\U0002a6df]"
    ),
)
"""Han ideographs, kana and CJK punctuation: the characters a CJK scan looks for."""

CYRILLIC = WritingSystem("Russian", re.compile("[\u0400-\u04ff]"))
ARABIC = WritingSystem("Arabic", re.compile("[\u0600-\u06ff\u0750-\u077f]"))

Script = WritingSystem
"""The former name of :class:`WritingSystem`, kept so existing imports work (a *script* is
also what the scripted provider plays, hence the rename)."""

_LETTER = re.compile(r"[^\W\d_]")


@dataclass(frozen=True)
class LanguageGuard:
    """Retries once when an answer is written in a rejected script.

    ``min_share`` is the share of the answer's letters that must be in a rejected script: a
    Chinese name quoted in an English answer is not a reason to retry, an answer in Chinese is.
    """

    language: str = "English"
    reject: Sequence[WritingSystem] = (CJK,)
    min_share: float = 0.3
    user_message: str = "Please respond in {language}, not {rejected}."
    notice: str = "[Retrying in {language}...]"

    def detect(self, text: str) -> WritingSystem | None:
        """The rejected script ``text`` is written in, if any."""
        letters = len(_LETTER.findall(text))
        if letters == 0:
            return None
        for script in self.reject:
            if len(script.pattern.findall(text)) / letters >= self.min_share:
                return script
        return None

    def check(self, text: str) -> Retry | None:
        script = self.detect(text)
        if script is None:
            return None
        return Retry(
            user_message=self.user_message.format(language=self.language, rejected=script.language),
            notice=self.notice.format(language=self.language),
        )
