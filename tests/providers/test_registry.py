"""Model ids to providers, and the model list: configured, from the environment, and
discovered from an Ollama server and an OpenAI-compatible server (the fakes)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentstream.messages import UserMessage
from agentstream.providers.anthropic import AnthropicProvider
from agentstream.providers.base import ProviderError, TextChunk
from agentstream.providers.catalog import reload_plugins
from agentstream.providers.google import GoogleProvider
from agentstream.providers.ollama import OllamaProvider
from agentstream.providers.openai import OpenAIProvider
from agentstream.providers.registry import (
    ModelRegistry,
    missing_key,
    model_info,
    parse_model_id,
    resolve_provider,
)

from .fakes import FakeUpstream, Reply
from .helpers import collect, request

PLUGIN_SOURCE = Path(__file__).parent / "plugin_dist"


@pytest.mark.parametrize(
    ("model_id", "cls", "name"),
    [
        ("anthropic:claude-sonnet-4-5", AnthropicProvider, "claude-sonnet-4-5"),
        ("openai:gpt-4.1-mini", OpenAIProvider, "gpt-4.1-mini"),
        ("google:gemini-2.5-flash", GoogleProvider, "gemini-2.5-flash"),
        ("ollama:qwen3:14b", OllamaProvider, "qwen3:14b"),
    ],
)
def test_resolve_provider_by_id(model_id: str, cls: type, name: str) -> None:
    provider = resolve_provider(model_id)
    assert isinstance(provider, cls)
    assert provider.model == name
    assert f"{provider.name}:{provider.model}" == model_id


def test_overrides_reach_the_provider() -> None:
    provider = resolve_provider("openai:qwen3", base_url="http://127.0.0.1:1/v1", api_key="k")
    assert isinstance(provider, OpenAIProvider)
    assert str(provider.client.base_url) == "http://127.0.0.1:1/v1/"


def test_unknown_override_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unsupported option"):
        resolve_provider("anthropic:claude-sonnet-4-5", colour="blue")


def test_a_provider_instance_is_returned_as_is() -> None:
    provider = OllamaProvider("qwen3")
    assert resolve_provider(provider) is provider
    with pytest.raises(ValueError, match="overrides"):
        resolve_provider(provider, api_key="k")


@pytest.mark.parametrize("bad", ["gpt-4.1-mini", "mistral:large", "openai:", "openai: ", ""])
def test_bad_model_ids_say_what_is_accepted(bad: str) -> None:
    with pytest.raises(ValueError, match="provider:model|<provider>:<model>"):
        parse_model_id(bad or "x")


def test_environment_default_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTSTREAM_MODEL", "google:gemini-2.5-pro")
    provider = resolve_provider(None)
    assert isinstance(provider, GoogleProvider)
    assert provider.model == "gemini-2.5-pro"


def test_demo_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTSTREAM_MODEL", raising=False)
    assert resolve_provider("demo").model == "offline-demo"
    assert resolve_provider(None).model == "offline-demo"  # no AGENTSTREAM_MODEL: the demo


def test_scripted_from_a_file(tmp_path: pytest.TempPathFactory) -> None:
    import json
    from pathlib import Path

    path = Path(str(tmp_path)) / "greeting.json"
    path.write_text(json.dumps({"turns": [{"text": "Hello!"}]}))
    provider = resolve_provider(f"scripted:{path}")
    assert provider.name == "scripted"
    assert provider.model == "greeting"


def test_model_info_display_names() -> None:
    assert model_info("openai:gpt-4.1-mini").display_name == "gpt-4.1-mini (OpenAI)"
    custom = model_info("anthropic:claude-sonnet-4-5=Claude Sonnet")
    assert (custom.id, custom.display_name, custom.provider, custom.model) == (
        "anthropic:claude-sonnet-4-5",
        "Claude Sonnet",
        "anthropic",
        "claude-sonnet-4-5",
    )


async def test_configured_models_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "AGENTSTREAM_MODELS", "openai:gpt-4.1-mini=GPT-4.1 mini, anthropic:claude-sonnet-4-5"
    )
    monkeypatch.setenv("AGENTSTREAM_MODEL", "anthropic:claude-sonnet-4-5")
    models = await ModelRegistry(discover=False).list_models()

    assert [(m.id, m.display_name, m.default) for m in models] == [
        ("openai:gpt-4.1-mini", "GPT-4.1 mini", False),
        ("anthropic:claude-sonnet-4-5", "claude-sonnet-4-5 (Anthropic)", True),
    ]


async def test_the_default_is_always_listed() -> None:
    registry = ModelRegistry(["openai:gpt-4.1-mini"], default="ollama:qwen3", discover=False)
    models = await registry.list_models()
    assert [(m.id, m.default) for m in models] == [
        ("ollama:qwen3", True),
        ("openai:gpt-4.1-mini", False),
    ]
    assert (await ModelRegistry([], discover=False).list_models())[0].id == "demo"


def test_a_bad_configured_id_fails_loudly() -> None:
    with pytest.raises(ValueError, match="unknown model id"):
        ModelRegistry(["gpt-4.1-mini"], discover=False)


def _serve_model_lists(upstream: FakeUpstream) -> None:
    upstream.routes["/api/tags"] = Reply.json(
        200,
        {
            "models": [
                {
                    "name": "qwen3:14b",
                    "model": "qwen3:14b",
                    "modified_at": "2025-07-07T20:22:19.10Z",
                    "size": 9276198565,
                    "digest": "bdbd181c33f2",
                    "details": {"format": "gguf", "family": "qwen3", "parameter_size": "14.8B"},
                },
                {"name": "llama3.2:3b", "model": "llama3.2:3b", "size": 2019393189},
            ]
        },
    )
    upstream.routes["/v1/models"] = Reply.json(
        200,
        {
            "object": "list",
            "data": [
                {"id": "gpt-4.1-mini", "object": "model", "created": 0, "owned_by": "vllm"},
                {"id": "qwen3:14b", "object": "model", "created": 0, "owned_by": "vllm"},
            ],
        },
    )


async def test_discovery_from_ollama_and_a_compatible_server(upstream: FakeUpstream) -> None:
    _serve_model_lists(upstream)
    registry = ModelRegistry(
        ["anthropic:claude-sonnet-4-5"],
        ollama_host=upstream.url,
        openai_base_url=f"{upstream.url}/v1",
    )
    models = await registry.list_models()

    assert [(m.id, m.source, m.default) for m in models] == [
        ("anthropic:claude-sonnet-4-5", "configured", True),
        ("ollama:llama3.2:3b", "discovered", False),
        ("ollama:qwen3:14b", "discovered", False),
        ("openai:gpt-4.1-mini", "discovered", False),
        ("openai:qwen3:14b", "discovered", False),
    ]
    # bare names, as the data playground sends them, when they name one model
    resolved = registry.resolve("gpt-4.1-mini")
    assert resolved is not None and resolved.id == "openai:gpt-4.1-mini"
    assert registry.resolve("qwen3:14b") is None  # both Ollama and the other server have it
    assert registry.resolve("ollama:qwen3:14b") is not None
    assert registry.resolve("nope") is None

    # cached: a second listing does not ask again
    asked = len(upstream.requests)
    await registry.list_models()
    assert len(upstream.requests) == asked


async def test_unreachable_servers_are_skipped_quickly() -> None:
    dead = FakeUpstream()  # bound, never started: connections are refused
    dead.stop()
    registry = ModelRegistry(
        ["openai:gpt-4.1-mini"],
        ollama_host=dead.url,
        openai_base_url=f"{dead.url}/v1",
        discovery_timeout=1.0,
    )
    assert [m.id for m in await registry.list_models()] == ["openai:gpt-4.1-mini"]


async def test_a_silent_server_is_given_up_on(upstream: FakeUpstream) -> None:
    upstream.routes["/api/tags"] = Reply(chunks=[], hang=True, content_type="application/json")
    registry = ModelRegistry(["openai:x"], ollama_host=upstream.url, discovery_timeout=0.3)
    assert [m.id for m in await registry.list_models()] == ["openai:x"]


def test_vendor_sdks_load_only_when_asked_for() -> None:
    import subprocess
    import sys

    code = (
        "import sys, agentstream.providers as p\n"
        "p.ModelRegistry(['openai:gpt-4.1-mini'], discover=False)\n"
        "loaded = [m for m in ('anthropic', 'openai', 'google.genai', 'ollama') if m in sys.modules]\n"
        "assert loaded == [], loaded\n"
        "p.resolve_provider('ollama:qwen3')\n"
        "assert 'ollama' in sys.modules and 'anthropic' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- declarations: aliases, keys, plugins ----------------------------------------------------


def test_gemini_is_an_alias_of_google() -> None:
    assert parse_model_id("gemini:gemini-2.5-flash") == ("google", "gemini-2.5-flash")
    provider = resolve_provider("gemini:gemini-2.5-flash")
    assert isinstance(provider, GoogleProvider)
    assert model_info("gemini:gemini-2.5-flash").id == "google:gemini-2.5-flash"


@pytest.mark.parametrize(
    ("model_id", "variable"),
    [
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("openai:gpt-4.1-mini", "OPENAI_API_KEY"),
        ("openai-responses:gpt-5-mini", "OPENAI_API_KEY"),
        ("gemini:gemini-2.5-flash", "GEMINI_API_KEY"),
    ],
)
async def test_a_missing_key_names_the_variable_to_set(
    model_id: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (
        "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL",
        "GEMINI_API_KEY", "GOOGLE_API_KEY",
    ):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    assert missing_key(model_id).endswith(f": no API key: set {variable}")  # type: ignore[union-attr]
    provider = resolve_provider(model_id)
    with pytest.raises(ProviderError) as info:
        await collect(provider, request(UserMessage(content="hi")))
    assert info.value.kind == "auth"
    assert info.value.message.endswith(f"no API key: set {variable}")
    monkeypatch.setenv(variable, "sk-test-present")
    assert missing_key(model_id) is None


def test_no_key_is_needed_for_local_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    assert missing_key("openai:qwen3") is None
    assert missing_key("ollama:qwen3") is None
    assert missing_key("demo") is None


def _install_plugin(target: Path) -> None:
    """The test-only distribution ``agentstream-echo``, installed into ``target`` as pip would
    (the package plus a ``dist-info`` declaring its entry point)."""
    shutil.copytree(PLUGIN_SOURCE / "agentstream_echo", target / "agentstream_echo")
    info = target / "agentstream_echo-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: agentstream-echo\nVersion: 0.1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[agentstream.providers]\necho = agentstream_echo:PROVIDER\n"
        "broken = agentstream_echo:NOT_THERE\n"
    )


@pytest.fixture
def echo_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    _install_plugin(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    reload_plugins()
    yield
    sys.modules.pop("agentstream_echo", None)
    monkeypatch.undo()
    reload_plugins()


@pytest.mark.usefixtures("echo_plugin")
async def test_a_provider_from_an_installed_distribution_is_found_by_its_entry_point(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    provider = resolve_provider("echo:tiny")
    assert type(provider).__module__ == "agentstream_echo"
    events = await collect(provider, request(UserMessage(content="hello")))
    assert [e.text for e in events if isinstance(e, TextChunk)] == ["echo: hello"]
    assert parse_model_id("parrot:tiny") == ("echo", "tiny")
    assert model_info("echo:tiny").display_name == "tiny (Echo)"
    monkeypatch.delenv("ECHO_API_KEY", raising=False)
    assert missing_key("echo:tiny") == "Echo: no API key: set ECHO_API_KEY"
    # the entry point that does not load is skipped with a warning, the others still work
    assert "NOT_THERE" in caplog.text
    assert "echo" in str(pytest.raises(ValueError, parse_model_id, "nope:x").value)


def test_without_the_distribution_the_prefix_is_unknown() -> None:
    reload_plugins()
    with pytest.raises(ValueError, match="unknown model id"):
        parse_model_id("echo:tiny")
