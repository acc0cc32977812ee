"""A user tool ``skillshelf chat --tool chat_tools:shout`` imports in the chat flag tests."""

from __future__ import annotations


def shout(text: str) -> str:
    """Say the text loudly."""
    return text.upper() + "!"
