"""Model adapters behind one protocol.

Messages are in the OpenAI chat shape (``role``, ``content``, ``tool_calls``, ``tool_call_id``)
everywhere in skillshelf; each adapter translates them for its provider. The provider SDKs are
optional extras (``skillshelf[openai]``, ``skillshelf[anthropic]``) imported only when an
adapter is built.

Errors are normalised: :class:`ModelAuthError` (the key was rejected — retrying cannot help),
:class:`TransientModelError` (HTTP 5xx/429 or a connection failure — the agent retries with
backoff) and :class:`ModelError` for everything else.
"""

from __future__ import annotations

import os

from skillshelf.errors import ConfigError
from skillshelf.models.base import (
    Message,
    Model,
    ModelAuthError,
    ModelError,
    ModelRequest,
    ModelResponse,
    TextSink,
    ToolCall,
    TransientModelError,
    Usage,
)

__all__ = [
    "Message",
    "Model",
    "ModelAuthError",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "TextSink",
    "ToolCall",
    "TransientModelError",
    "Usage",
    "open_model",
]


def open_model(
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    stream: bool = False,
) -> Model:
    """Build a model from ``openai:NAME``, ``anthropic:NAME``, ``scripted:FILE`` or
    ``baseline:search``.

    ``scripted:FILE`` reads a JSON list of replies (see :class:`skillshelf.testing.ScriptedModel`);
    ``baseline:search[?min_score=X]`` is the offline lexical baseline
    (:class:`skillshelf.models.baseline.SearchBaselineModel`).

    Raises:
        ConfigError: An unknown provider, a malformed spec, or an unreadable script file.
        MissingExtraError: The provider's SDK extra (``openai``, ``anthropic``) is missing.
        ModelAuthError: No API key where one is needed.
    """
    provider, _, name = spec.partition(":")
    if not name:
        raise ConfigError(
            f"Model {spec!r} must look like openai:NAME, anthropic:NAME, scripted:FILE or "
            "baseline:search"
        )
    if provider == "openai":
        from skillshelf.models.openai_chat import OpenAIChatModel

        key = _api_key(api_key_env or "OPENAI_API_KEY", required=base_url is None)
        return OpenAIChatModel(name, api_key=key, base_url=base_url, stream=stream)
    if provider == "anthropic":
        from skillshelf.models.anthropic_messages import AnthropicModel

        key = _api_key(api_key_env or "ANTHROPIC_API_KEY", required=base_url is None)
        return AnthropicModel(name, api_key=key, base_url=base_url, stream=stream)
    if provider == "scripted":
        from skillshelf.models.scripted import ScriptedModel

        return ScriptedModel.from_file(name)
    if provider == "baseline":
        from skillshelf.models.baseline import SearchBaselineModel

        return SearchBaselineModel.from_spec(name)
    raise ConfigError(
        f"Unknown model provider {provider!r}; use openai, anthropic, scripted or baseline"
    )


def _api_key(variable: str, *, required: bool) -> str:
    value = os.environ.get(variable, "")
    if value:
        return value
    if required:
        raise ModelAuthError(f"No API key: set the environment variable {variable}.")
    # Local OpenAI-compatible servers (vLLM, llama.cpp, Ollama) ignore the key, but the SDKs
    # insist on one.
    return "not-needed"
