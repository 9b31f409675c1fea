"""One token counter: tiktoken's own encodings read by path from LiteLLM's wheel, or the estimate.

The counts must equal tiktoken's for the encoding tiktoken names for the model, loaded by
tiktoken itself from the same bundled directory (its cache layout): no network, no copy.
"""

from __future__ import annotations

import math
import os

import pytest
from conftest import needs

from mnemometer.llm import ESTIMATE, _tokens, count_tokens, counter_for

pytestmark = needs("tiktoken", "litellm", extras="[cost]")

TEXTS = [
    "What did Caroline research after the LGBTQ support group?",
    "- [8 May 2023] Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "梅尔文说：我昨天去了支持小组。天龙八部 第一回",
    "Emoji 🎉🏳️‍🌈 and accents: café naïve façade — “quotes” ‘too’",
    "def f(x):\n    return x ** 2  # code\n\n\n\ttabs\r\nand CRLF",
    "<|endoftext|> <|fim_prefix|> special-token text is ordinary text here",
    "1234567890 3.14159 1,000,000 2023-05-08T13:56:00Z",
    "",
]


@pytest.fixture(scope="module")
def bundled():
    directory = _tokens.bundled_dir()
    if directory is None:
        pytest.skip("the [cost] extra (LiteLLM's bundled tokenizer files) is not installed")
    return directory


@pytest.mark.parametrize(
    "model",
    ["gpt-4o-mini", "gpt-4o", "gpt-4.1", "gpt-4", "gpt-3.5-turbo", "openai/gpt-4o-mini"],
)
def test_counts_equal_tiktoken_for_the_models_encoding(model, bundled, monkeypatch):
    # tiktoken loads from its cache directory; pointed at the bundled files it never fetches.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(bundled))
    import tiktoken

    reference = tiktoken.encoding_for_model(model.split("/")[-1])
    counter = counter_for(model)
    assert counter.exact and counter.name == f"tiktoken:{reference.name}"
    for text in TEXTS:
        assert counter.count(text) == len(reference.encode_ordinary(text)), text
        assert count_tokens(text, model) == counter.count(text)


def test_the_counter_reads_the_files_by_path_and_leaves_tiktoken_alone(bundled, monkeypatch):
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    _tokens._tiktoken_encoding.cache_clear()
    counter_for.cache_clear()
    from tiktoken_ext import openai_public

    before = openai_public.load_tiktoken_bpe
    assert counter_for("gpt-4").count("hello world") == 2
    assert openai_public.load_tiktoken_bpe is before  # the swap lasted one call
    assert "TIKTOKEN_CACHE_DIR" not in os.environ


def test_a_file_that_is_not_tiktokens_is_refused(tmp_path, bundled, monkeypatch):
    import hashlib

    from mnemometer.errors import MnemometerError

    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_text("aGk= 0\n")
    with pytest.raises(MnemometerError, match="SHA-256"):
        _tokens._tiktoken_encoding.__wrapped__("cl100k_base", tmp_path)


def test_unknown_models_get_the_labelled_estimate():
    c = counter_for("fake-llm")
    assert c.name == ESTIMATE and not c.exact
    assert "no offline tokenizer known for 'fake-llm'" in c.describe()
    assert c.count("x" * 9) == math.ceil(9 / 4) == 3
    assert counter_for(None).name == ESTIMATE


def test_without_the_files_every_model_is_estimated_and_says_how_to_fix_it(monkeypatch):
    monkeypatch.setattr(_tokens, "bundled_dir", lambda: None)
    counter_for.cache_clear()
    try:
        c = counter_for("gpt-4o-mini")
        assert c.name == ESTIMATE
        assert "pip install 'mnemometer[cost]'" in c.describe()
    finally:
        counter_for.cache_clear()


def test_deepseek_and_claude_2_use_litellms_bundled_tokenizers(bundled):
    from tokenizers import Tokenizer

    for model, name, file in (
        ("deepseek-chat", "huggingface:deepseek", "deepseek_tokenizer.json"),
        ("claude-2.1", "huggingface:anthropic", "anthropic_tokenizer.json"),
    ):
        c = counter_for(model)
        assert c.name == name and c.exact
        ref = Tokenizer.from_file(str(bundled / file))
        for text in TEXTS:
            assert c.count(text) == len(ref.encode(text, add_special_tokens=False).ids)
    assert counter_for("claude-sonnet-4-5").name == ESTIMATE  # no public tokenizer


@pytest.mark.parametrize("model", ["fake-llm", "gpt-4o-mini"])
def test_cut_keeps_whole_words_within_the_cap(model):
    c = counter_for(model)
    assert c.cut("Paris", 64) == ("Paris", c.count("Paris"), False)
    text = " ".join(f"w{i:03d}" for i in range(200))
    kept, tokens, cut = c.cut(text, 64)
    assert cut and tokens == c.count(text) and text.startswith(kept)
    words = kept.split()
    assert c.count(kept) <= 64 < c.count(" ".join(text.split()[: len(words) + 1]))
