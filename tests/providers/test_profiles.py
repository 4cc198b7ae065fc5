"""The model catalog: lookups by id pattern, a deployment's entries, costs."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentstream import Agent
from agentstream.errors import ConfigurationError
from agentstream.events import Usage
from agentstream.providers.profiles import UNKNOWN, ModelProfile, ModelProfiles, Prices


def test_a_dated_snapshot_id_has_its_familys_profile() -> None:
    profiles = ModelProfiles()
    sonnet = profiles.profile("anthropic:claude-sonnet-4-5-20250929")
    assert sonnet.known
    assert sonnet.context_window == 200_000
    assert sonnet.takes("pdf")
    assert sonnet.prices == Prices(input=3, output=15, cache_read=0.3, cache_write=3.75)


def test_the_longest_matching_pattern_wins() -> None:
    profiles = ModelProfiles()
    assert profiles.profile("openai:gpt-4o-mini").prices == Prices(
        input=0.15, output=0.6, cache_read=0.075
    )
    assert profiles.profile("openai:gpt-4o-2024-08-06").prices == Prices(
        input=2.5, output=10, cache_read=1.25
    )


def test_an_alias_is_read_as_its_provider() -> None:
    assert ModelProfiles().profile("gemini:gemini-2.5-flash") == ModelProfiles().profile(
        "google:gemini-2.5-flash"
    )


def test_a_model_nobody_describes_takes_text_and_images_with_no_window_or_price() -> None:
    profile = ModelProfiles().profile("openai:some-local-model")
    assert profile is UNKNOWN
    assert not profile.known
    assert profile.takes("image")
    assert not profile.takes("pdf")
    assert profile.context_window is None
    assert profile.prices is None


def test_a_text_only_model_refuses_images() -> None:
    assert not ModelProfiles().profile("ollama:qwen3:14b").takes("image")
    assert ModelProfiles().profile("ollama:llava:13b").takes("image")


def test_a_deployment_entry_is_merged_over_the_builtin_profile() -> None:
    profiles = ModelProfiles().with_profiles(
        {"anthropic:claude-sonnet-4*": {"prices": {"input": 2.7, "output": 13.5}}}
    )
    profile = profiles.profile("anthropic:claude-sonnet-4-5")
    assert profile.context_window == 200_000  # kept from the built-in entry
    assert profile.prices == Prices(input=2.7, output=13.5, cache_read=0.3, cache_write=3.75)
    # The catalog it came from is unchanged.
    assert ModelProfiles().profile("anthropic:claude-sonnet-4-5").prices.input == 3  # type: ignore[union-attr]


def test_a_profile_given_whole_replaces_the_entry() -> None:
    own = ModelProfile(inputs=frozenset({"text"}), context_window=8_000)
    profiles = ModelProfiles().with_profiles({"openai:gpt-4.1": own})
    assert profiles.profile("openai:gpt-4.1") is own
    assert profiles.profile("openai:gpt-4.1-2025-04-14").context_window == 1_047_576


def test_the_configuration_file_describes_unknown_models(tmp_path: Path) -> None:
    config = tmp_path / "agentstream.toml"
    config.write_text(
        '[models."openai:my-finetune"]\n'
        "context_window = 32000\n"
        'inputs = ["image"]\n'
        "prices = { input = 1, output = 2 }\n",
        encoding="utf-8",
    )
    profile = ModelProfiles().with_file(config).profile("openai:my-finetune")
    assert profile.known
    assert profile.context_window == 32_000
    assert profile.inputs == frozenset({"text", "image"})
    assert profile.prices == Prices(input=1.0, output=2.0)


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[models."openai:x"]\nwindow = 5\n', "unknown field 'window'"),
        ('[models."openai:x"]\ncontext_window = -1\n', "expected a positive number of tokens"),
        ('[models."openai:x"]\ninputs = ["audio"]\n', "expected a list of image, pdf, text"),
        ('[models."openai:x"]\nprices = { input = 1 }\n', "needs both input and output"),
        ('[models."openai:x"]\nprices = { input = "cheap", output = 1 }\n', "expected a price"),
        ("models = 3\n", "[models] must hold one table per model"),
        ("[models\n", "configuration file"),
    ],
)
def test_a_mistake_in_the_file_names_the_file_and_the_entry(
    tmp_path: Path, toml: str, message: str
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigurationError) as raised:
        ModelProfiles().with_file(config)
    assert str(config) in str(raised.value)
    assert message in str(raised.value)


def test_a_missing_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="nowhere.toml"):
        ModelProfiles().with_file(tmp_path / "nowhere.toml")


def test_cost_prices_cached_and_reasoning_tokens_at_their_own_rates() -> None:
    prices = Prices(input=3, output=15, cache_read=0.3, cache_write=3.75, reasoning=20)
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=200_000,
        cache_read_tokens=400_000,
        cache_write_tokens=100_000,
        reasoning_tokens=50_000,
    )
    # 500k plain input, 400k cache reads, 100k cache writes; 150k plain output, 50k reasoning.
    expected = (500_000 * 3 + 400_000 * 0.3 + 100_000 * 3.75 + 150_000 * 15 + 50_000 * 20) / 1e6
    assert prices.cost(usage) == pytest.approx(expected)


def test_cost_bills_unpriced_kinds_at_the_base_rates() -> None:
    prices = Prices(input=1, output=4)
    usage = Usage(input_tokens=10, output_tokens=10, cache_read_tokens=5, reasoning_tokens=5)
    assert prices.cost(usage) == pytest.approx((10 * 1 + 10 * 4) / 1e6)


def test_an_agent_knows_its_models_profile() -> None:
    agent = Agent(model="openai:gpt-4.1-mini")
    assert agent.profile().context_window == 1_047_576
    assert agent.profile("demo").prices == Prices(input=0, output=0)


def test_the_server_reads_the_file_named_by_agentstream_config(tmp_path: Path) -> None:
    from agentstream.server import create_app
    from agentstream.server.settings import Settings

    config = tmp_path / "agentstream.toml"
    config.write_text('[models."openai:house"]\ncontext_window = 9000\n', encoding="utf-8")
    settings = Settings.from_env({"AGENTSTREAM_CONFIG": str(config)})
    assert settings.config_file == config
    agent = Agent(model="openai:house")
    create_app(agent, settings=settings)
    assert agent.profile().context_window == 9_000

    config.write_text('[models."openai:house"]\ncontext_window = "big"\n', encoding="utf-8")
    with pytest.raises(ConfigurationError, match="context_window"):
        create_app(Agent(model="openai:house"), settings=settings)
