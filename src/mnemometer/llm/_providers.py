"""Which models go through LiteLLM: ``--llm-model PROVIDER/MODEL`` with a provider it knows.

The OpenAI-compatible client is the core and needs nothing more; a model whose first path
segment names a LiteLLM provider (``anthropic/claude-haiku-4-5``, ``gemini/gemini-2.5-flash``,
``bedrock/...``, ``azure/...``, ``ollama_chat/...``, ``hosted_vllm/...``) is asked through
LiteLLM instead, from the optional ``[providers]`` extra (:mod:`mnemometer.llm._litellm`).
Deciding which is which imports nothing: the names below are LiteLLM's own
(``litellm.provider_list`` of the pinned version; a test keeps them in step).

``openai/`` is not among them: ``openai/gpt-oss-20b`` is a model id that vLLM and llama.cpp
serve under that name, and OpenAI itself is the core's protocol. Any other name with a slash
(``Qwen/Qwen2.5-0.5B-Instruct``) is sent as it is to the OpenAI-compatible base URL.
"""

from __future__ import annotations

from mnemometer.errors import did_you_mean

EXTRA = "providers"
"""The extra that installs LiteLLM."""

PROVIDERS = frozenset(
    """
    ai21 ai21_chat aiohttp_openai anthropic anthropic_text azure azure_ai azure_text
    baseten bedrock cerebras clarifai cloudflare codestral cohere cohere_chat custom_openai
    databricks datarobot deepinfra deepseek docker_model_runner featherless_ai fireworks_ai
    friendliai galadriel gemini github github_copilot gradient_ai groq heroku hosted_vllm
    huggingface hyperbolic inception lambda_ai litellm_proxy llamafile lm_studio meta_llama
    mistral moonshot nebius novita nscale nvidia_nim ollama ollama_chat oobabooga openai_like
    openrouter perplexity predibase replicate sagemaker sagemaker_chat sambanova snowflake
    text-completion-codestral together_ai triton v0 vertex_ai vertex_ai_beta vllm volcengine
    watsonx watsonx_text xai xinference
    """.split()
)
"""Chat providers of LiteLLM routed through it (``openai`` stays with the core client)."""

ALIASES = {"vllm": "hosted_vllm"}
"""Prefixes renamed before LiteLLM sees them: LiteLLM's own ``vllm/`` runs the vllm library
in this process; here ``vllm/MODEL`` means a vLLM server, which LiteLLM calls ``hosted_vllm``."""


def provider_of(model: str | None) -> str | None:
    """The LiteLLM provider ``model`` names (``anthropic`` for ``anthropic/claude-...``), or ``None``."""
    head, slash, rest = (model or "").partition("/")
    if not (slash and rest):
        return None
    head = ALIASES.get(head, head)
    return head if head in PROVIDERS else None


def litellm_model(model: str) -> str:
    """``model`` as LiteLLM names it (an alias's prefix renamed)."""
    head, _, rest = model.partition("/")
    return f"{ALIASES[head]}/{rest}" if head in ALIASES else model


def no_endpoint(model: str | None, default: str) -> str:
    """The message for a model with no base URL: ``default``, or what its prefix gets wrong.

    ``antropic/claude-haiku-4-5`` with no ``--llm-base-url`` is a misspelt provider, not a
    model an OpenAI-compatible server was meant to serve: say so, with the closest name.
    """
    head, slash, rest = (model or "").partition("/")
    if not (slash and rest) or provider_of(model) is not None:
        return default
    return (
        f"unknown LLM provider {head!r} in --llm-model {model}"
        f"{did_you_mean(head, sorted(PROVIDERS))}: name one LiteLLM knows (anthropic/..., "
        "gemini/..., bedrock/..., azure/..., ollama_chat/...) or pass --llm-base-url for an "
        "OpenAI-compatible server that serves that model"
    )
