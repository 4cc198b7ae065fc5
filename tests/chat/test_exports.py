from __future__ import annotations

import agentstream.chat as chat


def test_the_public_surface_is_sorted_and_importable() -> None:
    assert chat.__all__ == sorted(chat.__all__, key=lambda name: (not name.isupper(), name))
    for name in chat.__all__:
        assert getattr(chat, name) is not None, name


def test_the_serve_command_finds_default_hooks() -> None:
    from agentstream.cli.loading import load_hooks

    assert isinstance(load_hooks(None), chat.ChatHooks)
