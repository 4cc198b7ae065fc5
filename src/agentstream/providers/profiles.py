"""What each model takes, holds and costs: model profiles.

:mod:`.catalog` knows the vendors; this module knows their models (not to be confused with
the list of models a deployment offers, :class:`agentstream.server.models.ModelCatalog`). A
:class:`ModelProfile` answers the questions the package asks about a model before it calls it:

* which kinds of input it takes (``text``, ``image``, ``pdf``), so that an attachment the model
  cannot read is refused before the call rather than by a vendor error in mid-stream;
* its context window and output limit, so that what the model is sent fits;
* its prices, so that a run's tokens have a cost.

:class:`ModelProfiles` finds a model's profile by id. Built-in entries describe the vendors'
current models by family (``anthropic:claude-sonnet-4-5*`` matches the dated snapshot ids of
that model too); an entry for the exact id wins, then the longest matching pattern, so a
specific entry beats its family's. A model nobody describes gets :data:`UNKNOWN`
(``known=False``): it takes text and images and has no window or price, and callers rely on
the vendor's own answer (its error, cleanly reported) and on what they learn from it.

A deployment adds or corrects entries in code (:meth:`ModelProfiles.with_profiles`) or in its
configuration file (:meth:`ModelProfiles.with_file`, the ``[models]`` table of the TOML file
named by ``AGENTSTREAM_CONFIG``)::

    [models."openai:my-finetune"]
    context_window = 128000
    max_output_tokens = 16384
    inputs = ["text", "image"]
    prices = { input = 2.0, output = 8.0, cache_read = 0.5 }

An entry given by the deployment is merged over the built-in profile it matches: setting only
``prices`` keeps the built-in window and inputs.

Prices are US dollars per million tokens, as the vendors published them for their standard
tier; long-context and batch rates are not modelled. They change: a deployment that bills from
them should pin its own.
"""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, get_args

from agentstream.attachments.types import AttachmentKind
from agentstream.errors import ConfigurationError
from agentstream.events import Usage

__all__ = [
    "BUILTIN_PROFILES",
    "InputKind",
    "ModelProfile",
    "ModelProfiles",
    "Prices",
    "UNKNOWN",
    "cannot_read",
]

InputKind = AttachmentKind
"""The kinds of input a model reads (the kinds of attachment). ``text`` files (plain,
Markdown, CSV, JSON, source code) reach every model as text; ``image`` and ``pdf`` need the
model's own support."""

INPUT_KINDS: frozenset[InputKind] = frozenset(get_args(InputKind))
_TEXT_AND_IMAGES: frozenset[InputKind] = frozenset({"text", "image"})
_TEXT_ONLY: frozenset[InputKind] = frozenset({"text"})
_DOCUMENTS: frozenset[InputKind] = INPUT_KINDS

MILLION = 1_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class Prices:
    """US dollars per million tokens. A price left ``None`` is billed at the rate it is a
    kind of: cache reads and writes as input, reasoning as output."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None
    reasoning: float | None = None

    def cost(self, usage: Usage) -> float:
        """What ``usage`` costs. ``input_tokens`` counts every prompt token, cached or not (as
        :class:`~agentstream.events.Usage` reports it), and ``output_tokens`` every generated
        one, reasoning included; the cached and reasoning shares are priced at their own
        rates and the rest at the base rates."""
        cache_read = min(usage.cache_read_tokens, usage.input_tokens)
        cache_write = min(usage.cache_write_tokens, usage.input_tokens - cache_read)
        plain_input = usage.input_tokens - cache_read - cache_write
        reasoning = min(usage.reasoning_tokens, usage.output_tokens)
        plain_output = usage.output_tokens - reasoning
        total = (
            plain_input * self.input
            + cache_read * _or(self.cache_read, self.input)
            + cache_write * _or(self.cache_write, self.input)
            + plain_output * self.output
            + reasoning * _or(self.reasoning, self.output)
        )
        return total / MILLION


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelProfile:
    """What is known of one model. ``None`` means not known (no window to budget against, no
    price to charge); ``known`` says whether anybody described the model at all."""

    inputs: frozenset[InputKind] = _TEXT_AND_IMAGES
    context_window: int | None = None
    max_output_tokens: int | None = None
    prices: Prices | None = None
    known: bool = True

    def takes(self, kind: InputKind) -> bool:
        return kind in self.inputs

    def unreadable(self, kinds: Iterable[InputKind]) -> InputKind | None:
        """The first of ``kinds`` the model cannot read (text it always can), or ``None``."""
        return next((k for k in kinds if k != "text" and k not in self.inputs), None)


def cannot_read(model: str, kind: InputKind) -> str:
    """Why a model is not called: it cannot read a kind of file it was given."""
    what = {"image": "images", "pdf": "PDF documents", "text": "text"}[kind]
    return f"the model {model} cannot read {what}; send them to a model that can, or leave them out"


UNKNOWN = ModelProfile(known=False)
"""The profile of a model nobody described: text and images, no window, no price."""


def _p(
    input: float,  # noqa: A002 - the vendors' own word
    output: float,
    cache_read: float | None = None,
    cache_write: float | None = None,
) -> Prices:
    return Prices(input=input, output=output, cache_read=cache_read, cache_write=cache_write)


def _model(
    window: int, output: int, prices: Prices, inputs: frozenset[InputKind] = _DOCUMENTS
) -> ModelProfile:
    return ModelProfile(
        inputs=inputs, context_window=window, max_output_tokens=output, prices=prices
    )


# The vendors' published figures (standard tier). Ids are patterns over canonical model ids
# (``provider:model``); an exact id wins, then the longest match.
BUILTIN_PROFILES: Mapping[str, ModelProfile] = {
    # Anthropic: every current model reads images and PDFs.
    "anthropic:claude-opus-5*": _model(1_000_000, 128_000, _p(5, 25, 0.5, 6.25)),
    "anthropic:claude-sonnet-5*": _model(1_000_000, 128_000, _p(2, 10, 0.2, 2.5)),
    "anthropic:claude-opus-4-5*": _model(200_000, 64_000, _p(5, 25, 0.5, 6.25)),
    "anthropic:claude-opus-4-6*": _model(200_000, 128_000, _p(5, 25, 0.5, 6.25)),
    "anthropic:claude-opus-4-1*": _model(200_000, 32_000, _p(15, 75, 1.5, 18.75)),
    "anthropic:claude-opus-4-0*": _model(200_000, 32_000, _p(15, 75, 1.5, 18.75)),
    "anthropic:claude-opus-4-2025*": _model(200_000, 32_000, _p(15, 75, 1.5, 18.75)),
    "anthropic:claude-sonnet-4*": _model(200_000, 64_000, _p(3, 15, 0.3, 3.75)),
    "anthropic:claude-3-7-sonnet*": _model(200_000, 64_000, _p(3, 15, 0.3, 3.75)),
    "anthropic:claude-haiku-4-5*": _model(200_000, 64_000, _p(1, 5, 0.1, 1.25)),
    "anthropic:claude-3-5-haiku*": _model(200_000, 8_192, _p(0.8, 4, 0.08, 1)),
    # OpenAI (Chat Completions and Responses take the same models).
    "openai:gpt-5*": _model(400_000, 128_000, _p(1.25, 10, 0.125)),
    "openai:gpt-5-mini*": _model(400_000, 128_000, _p(0.25, 2, 0.025)),
    "openai:gpt-5-nano*": _model(400_000, 128_000, _p(0.05, 0.4, 0.005)),
    "openai:gpt-4.1*": _model(1_047_576, 32_768, _p(2, 8, 0.5)),
    "openai:gpt-4.1-mini*": _model(1_047_576, 32_768, _p(0.4, 1.6, 0.1)),
    "openai:gpt-4.1-nano*": _model(1_047_576, 32_768, _p(0.1, 0.4, 0.025)),
    "openai:gpt-4o*": _model(128_000, 16_384, _p(2.5, 10, 1.25)),
    "openai:gpt-4o-mini*": _model(128_000, 16_384, _p(0.15, 0.6, 0.075)),
    "openai:o3*": _model(200_000, 100_000, _p(2, 8, 0.5)),
    "openai:o3-mini*": _model(200_000, 100_000, _p(1.1, 4.4, 0.55), _TEXT_ONLY),
    "openai:o4-mini*": _model(200_000, 100_000, _p(1.1, 4.4, 0.275)),
    "openai:gpt-3.5-turbo*": _model(16_385, 4_096, _p(0.5, 1.5), _TEXT_ONLY),
    # Google Gemini: images, PDFs (and audio and video, which agentstream does not send).
    "google:gemini-2.5-pro*": _model(1_048_576, 65_536, _p(1.25, 10, 0.125)),
    "google:gemini-2.5-flash*": _model(1_048_576, 65_536, _p(0.3, 2.5, 0.03)),
    "google:gemini-2.5-flash-lite*": _model(1_048_576, 65_536, _p(0.1, 0.4, 0.01)),
    "google:gemini-2.0-flash*": _model(1_048_576, 8_192, _p(0.1, 0.4, 0.025)),
    "google:gemini-2.0-flash-lite*": _model(1_048_576, 8_192, _p(0.075, 0.3)),
    # Ollama runs models locally (no price); its server's default context is 4,096 tokens
    # unless the model or the server says otherwise. Vision models take images.
    "ollama:*": ModelProfile(inputs=_TEXT_ONLY, context_window=4_096, prices=_p(0, 0)),
    "ollama:llava*": ModelProfile(inputs=_TEXT_AND_IMAGES, context_window=4_096, prices=_p(0, 0)),
    "ollama:llama3.2-vision*": ModelProfile(
        inputs=_TEXT_AND_IMAGES, context_window=4_096, prices=_p(0, 0)
    ),
    "ollama:gemma3*": ModelProfile(inputs=_TEXT_AND_IMAGES, context_window=4_096, prices=_p(0, 0)),
    "ollama:qwen2.5vl*": ModelProfile(
        inputs=_TEXT_AND_IMAGES, context_window=4_096, prices=_p(0, 0)
    ),
    # The offline models cost nothing and read everything they are given.
    "demo": ModelProfile(inputs=_DOCUMENTS, prices=_p(0, 0)),
    "scripted:*": ModelProfile(inputs=_DOCUMENTS, prices=_p(0, 0)),
}


@dataclass(frozen=True, slots=True)
class ModelProfiles:
    """Profiles by model-id pattern: the built-in catalog, with a deployment's entries merged
    over it. Immutable: :meth:`with_profiles` and :meth:`with_file` return a new catalog."""

    entries: Mapping[str, ModelProfile] = field(default_factory=lambda: dict(BUILTIN_PROFILES))
    _found: dict[str, ModelProfile] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    """Profiles looked up so far, by id: every run asks for its model's (to price it), and
    matching the patterns costs far more than a dictionary."""

    def profile(self, model_id: str) -> ModelProfile:
        """The profile of ``model_id`` (``provider:model``; an alias such as ``gemini:`` is
        read as its provider): its own entry's, else the longest matching pattern's, else
        :data:`UNKNOWN`."""
        found = self._found.get(model_id)
        if found is None:
            found = self._found[model_id] = self._match(model_id)
        return found

    def _match(self, model_id: str) -> ModelProfile:
        canonical = _canonical(model_id)
        exact = self.entries.get(canonical)
        if exact is not None:
            return exact
        best: tuple[int, ModelProfile] | None = None
        for pattern, profile in self.entries.items():
            if _matches(canonical, pattern) and (best is None or len(pattern) > best[0]):
                best = (len(pattern), profile)
        return UNKNOWN if best is None else best[1]

    def with_profiles(
        self, profiles: Mapping[str, ModelProfile | Mapping[str, Any]]
    ) -> ModelProfiles:
        """A catalog with these entries added. A mapping of fields (as in the configuration
        file) is merged over the profile its pattern matches today; a :class:`ModelProfile`
        replaces it whole."""
        entries = dict(self.entries)
        for pattern, given in profiles.items():
            if isinstance(given, ModelProfile):
                entries[pattern] = given
                continue
            base = self.profile(pattern.rstrip("*"))
            entries[pattern] = _merged(replace(base, known=True), given, where=pattern)
        return ModelProfiles(entries)

    def with_file(self, path: str | Path | None) -> ModelProfiles:
        """A catalog with the ``[models]`` table of the TOML file at ``path`` merged in
        (``None``: this catalog). A mistake in the file is a :class:`ConfigurationError`
        naming the file and the entry."""
        if path is None:
            return self
        try:
            with open(path, "rb") as file:
                document = tomllib.load(file)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigurationError(f"configuration file {str(path)!r}: {exc}") from None
        models = document.get("models", {})
        if not isinstance(models, dict) or not all(isinstance(v, dict) for v in models.values()):
            raise ConfigurationError(
                f"configuration file {str(path)!r}: [models] must hold one table per model, "
                'e.g. [models."openai:gpt-4.1"]'
            )
        try:
            return self.with_profiles(models)
        except ConfigurationError as exc:
            raise ConfigurationError(f"configuration file {str(path)!r}: {exc}") from None


_PROFILE_FIELDS = {f.name for f in fields(ModelProfile)} - {"known"}
_PRICE_FIELDS = {f.name for f in fields(Prices)}


def _merged(base: ModelProfile, given: Mapping[str, Any], *, where: str) -> ModelProfile:
    unknown = set(given) - _PROFILE_FIELDS
    if unknown:
        raise ConfigurationError(
            f"models.{where!r}: unknown field {sorted(unknown)[0]!r} "
            f"(expected {', '.join(sorted(_PROFILE_FIELDS))})"
        )
    changes: dict[str, Any] = {}
    if "inputs" in given:
        changes["inputs"] = _inputs(given["inputs"], where)
    for name in ("context_window", "max_output_tokens"):
        if name in given:
            changes[name] = _positive(given[name], f"models.{where!r}.{name}")
    if "prices" in given:
        changes["prices"] = _prices(given["prices"], base.prices, where)
    return replace(base, **changes)


def _inputs(value: Any, where: str) -> frozenset[InputKind]:
    if not isinstance(value, list | tuple) or not all(v in INPUT_KINDS for v in value):
        raise ConfigurationError(
            f"models.{where!r}.inputs: expected a list of {', '.join(sorted(INPUT_KINDS))}"
        )
    return frozenset({"text", *value})


def _positive(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigurationError(f"{name}: expected a positive number of tokens, not {value!r}")
    return value


def _prices(value: Any, base: Prices | None, where: str) -> Prices:
    if not isinstance(value, Mapping) or set(value) - _PRICE_FIELDS:
        raise ConfigurationError(
            f"models.{where!r}.prices: expected a table of {', '.join(sorted(_PRICE_FIELDS))} "
            "(US dollars per million tokens)"
        )
    for name, price in value.items():
        if isinstance(price, bool) or not isinstance(price, int | float) or price < 0:
            raise ConfigurationError(
                f"models.{where!r}.prices.{name}: expected a price of 0 or more, not {price!r}"
            )
    merged = {f: getattr(base, f) for f in _PRICE_FIELDS} if base is not None else {}
    merged.update({name: float(price) for name, price in value.items()})
    if "input" not in merged or "output" not in merged:
        raise ConfigurationError(
            f"models.{where!r}.prices: a model nobody priced needs both input and output"
        )
    return Prices(**merged)


def _canonical(model_id: str) -> str:
    from agentstream.providers.registry import parse_model_id

    try:
        prefix, name = parse_model_id(model_id)
    except ValueError:
        return model_id.strip()
    return "demo" if prefix == "demo" else f"{prefix}:{name}"


def _matches(model_id: str, pattern: str) -> bool:
    return any(c in pattern for c in "*?[") and fnmatch.fnmatchcase(model_id, pattern)
