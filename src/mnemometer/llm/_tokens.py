"""Token counts: the model's own tokenizer where one is installed, else a labelled estimate.

The one place mnemometer counts tokens (reader budgets, answer caps, context sizes, the
prompt and reply of every LLM call it makes). :func:`counter_for` picks, for a model name:

* OpenAI models: tiktoken with the encoding tiktoken itself names for the model
  (``gpt-4o`` -> ``o200k_base``, ``gpt-4`` -> ``cl100k_base``), its ranks read **by path**
  from the files LiteLLM's wheel ships (``litellm/litellm_core_utils/tokenizers/``, each
  named as tiktoken names its cache entries) and checked against tiktoken's own SHA-256;
* DeepSeek V3/V4 and Claude 2 models: the Hugging Face tokenizer files LiteLLM's wheel ships
  for them (the same selection LiteLLM makes; Claude 3 and later have no public tokenizer);
* anything else, or when the files are not installed: the estimate of four characters per
  token, labelled as such (``estimate:4-chars``) wherever a count is reported.

Nothing is ever fetched: tiktoken would download an encoding it does not find in its cache,
so it is never asked to load one; mnemometer reads the bundled file and hands tiktoken the
ranks. Install the files with ``pip install 'mnemometer[cost]'``.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import math
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

ESTIMATE = "estimate:4-chars"
"""The name of the fallback counter: ``ceil(characters / 4)``."""

_TOKENIZERS = "litellm_core_utils/tokenizers"
_HF_FILES = {"deepseek": "deepseek_tokenizer.json", "anthropic": "anthropic_tokenizer.json"}
# LiteLLM's own rule for its bundled DeepSeek tokenizer (utils.py, _DEEPSEEK_TOKENIZER_MODEL).
_DEEPSEEK = re.compile(
    r"deepseek[-_.](?:chat[-_.])?v[34]|(?:^|/)deepseek-(?:chat|reasoner|flash)(?::free)?$", re.I
)
_CLAUDE_2 = re.compile(r"(?:^|[/.])claude-(?:2|instant)", re.I)
_LOCK = threading.Lock()


@dataclass(frozen=True)
class TokenCounter:
    """Counts tokens of text as one model's tokenizer does (or estimates them).

    Attributes:
        name: ``tiktoken:o200k_base``, ``huggingface:deepseek``, or ``estimate:4-chars``.
        exact: the model's own tokenizer (``False`` for the estimate).
        source: where the tokenizer came from (the file and the package version).
        note: why the estimate serves, when it does.
    """

    name: str
    exact: bool
    source: str = ""
    note: str = ""
    encode: Callable[[str], Sequence[int]] | None = field(default=None, repr=False)

    def count(self, text: str) -> int:
        """Tokens of ``text`` (no chat template: the text alone)."""
        if not text:
            return 0
        if self.encode is None:
            return math.ceil(len(text) / 4)
        return len(self.encode(text))

    def cut(self, text: str, max_tokens: int) -> tuple[str, int, bool]:
        """``text`` cut to ``max_tokens`` at a word boundary.

        Returns the text as kept, the uncut text's tokens, and whether it was cut. The
        longest run of whole words that fits is found by bisection (a few counts).
        """
        tokens = self.count(text)
        if tokens <= max_tokens:
            return text, tokens, False
        words = text.split()
        lo, hi = 0, len(words)  # words[:lo] fits; words[:hi + 1] does not
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.count(" ".join(words[:mid])) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        return " ".join(words[:lo]), tokens, True

    def describe(self) -> str:
        """``tiktoken:o200k_base (litellm 1.110.2 ...)`` or the estimate and why."""
        if self.exact:
            return f"{self.name} ({self.source})" if self.source else self.name
        return f"{self.name} ({self.note})" if self.note else self.name


def litellm_root() -> Path | None:
    """The installed ``litellm`` package's directory, found without importing it."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def litellm_version() -> str:
    """The installed LiteLLM's version (``?`` when its metadata is missing)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("litellm")
    except PackageNotFoundError:
        return "?"


def bundled_dir() -> Path | None:
    """LiteLLM's tokenizer directory (``None``: LiteLLM is not installed)."""
    root = litellm_root()
    path = root / _TOKENIZERS if root is not None else None
    return path if path is not None and path.is_dir() else None


def _base_model(model: str) -> str:
    """``openai/gpt-4o-mini`` -> ``gpt-4o-mini`` (a provider prefix is not the model)."""
    return model.rsplit("/", 1)[-1]


def _estimate(note: str) -> TokenCounter:
    return TokenCounter(ESTIMATE, False, note=note)


@cache
def counter_for(model: str | None) -> TokenCounter:
    """The token counter for ``model`` (see the module docstring); cached per name."""
    if not model:
        return _estimate("no model named")
    directory = bundled_dir()
    if directory is None:
        return _estimate(
            f"no offline tokenizer installed for {model!r}: pip install 'mnemometer[cost]'"
        )
    base = _base_model(model)
    name = _tiktoken_name(base)
    if name is not None:
        enc = _tiktoken_encoding(name, directory)
        if enc is not None:
            source = f"litellm {litellm_version()} bundled {name} ranks"
            return TokenCounter(f"tiktoken:{name}", True, source, encode=enc.encode_ordinary)
    kind = (
        "deepseek" if _DEEPSEEK.search(model) else "anthropic" if _CLAUDE_2.search(base) else None
    )
    if kind is not None:
        tok = _hf_tokenizer(directory / _HF_FILES[kind])
        if tok is not None:
            source = f"litellm {litellm_version()} bundled {_HF_FILES[kind]}"
            return TokenCounter(
                f"huggingface:{kind}",
                True,
                source,
                encode=lambda text: tok.encode(text, add_special_tokens=False).ids,
            )
    return _estimate(f"no offline tokenizer known for {model!r}")


def _tiktoken_name(model: str) -> str | None:
    """The encoding tiktoken itself assigns to ``model`` (``None``: not an OpenAI model)."""
    try:
        from tiktoken.model import encoding_name_for_model
    except ImportError:
        return None
    try:
        return encoding_name_for_model(model)
    except KeyError:
        return None


@cache
def _tiktoken_encoding(name: str, directory: Path) -> Any:
    """The encoding ``name`` as tiktoken builds it, from the bundled ranks (``None``: absent).

    tiktoken's own constructor supplies the pattern and the special tokens; its rank loader
    is swapped, for that one call, for one that reads the bundled file (named, as tiktoken
    names its cache entries, by the SHA-1 of the URL) and checks tiktoken's expected
    SHA-256. A URL with no bundled file is never fetched: the encoding is not built.
    """
    import tiktoken
    from tiktoken_ext import openai_public

    build = openai_public.ENCODING_CONSTRUCTORS.get(name)
    if build is None:
        return None
    original = openai_public.load_tiktoken_bpe
    missing: list[str] = []

    def bundled(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        path = directory / hashlib.sha1(url.encode()).hexdigest()
        if not path.is_file():
            missing.append(url)
            return {}
        data = path.read_bytes()
        if expected_hash is not None and hashlib.sha256(data).hexdigest() != expected_hash:
            from mnemometer.errors import MnemometerError

            raise MnemometerError(f"{path}: not the {name} ranks tiktoken expects (SHA-256)")
        return {
            base64.b64decode(token): int(rank)
            for token, rank in (line.split() for line in data.splitlines() if line)
        }

    with _LOCK:
        openai_public.load_tiktoken_bpe = bundled
        try:
            params = build()
        finally:
            openai_public.load_tiktoken_bpe = original
    if missing:
        return None
    return tiktoken.Encoding(**params)


@cache
def _hf_tokenizer(path: Path) -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        return None
    return Tokenizer.from_file(str(path)) if path.is_file() else None


def count_tokens(text: str, model: str | None = None) -> int:
    """Tokens of ``text`` for ``model`` (the estimate when no tokenizer is known)."""
    return counter_for(model).count(text)


__all__ = [
    "ESTIMATE",
    "TokenCounter",
    "bundled_dir",
    "count_tokens",
    "counter_for",
    "litellm_root",
    "litellm_version",
]
