"""The pinned price map (LiteLLM's bundled file, read where it is installed) and overrides."""

from __future__ import annotations

import hashlib
import json

import pytest

from mnemometer.errors import MnemometerError
from mnemometer.llm import load_prices
from mnemometer.llm._prices import price_map_path


@pytest.fixture(scope="module")
def bundled():
    path = price_map_path()
    if path is None:
        pytest.skip("the [cost] extra (LiteLLM's price map) is not installed")
    return path


def test_prices_come_from_the_installed_map_with_its_hash(bundled):
    book = load_prices()
    raw = bundled.read_bytes()
    assert book.sha256 == hashlib.sha256(raw).hexdigest()
    assert book.source.startswith("litellm ") and book.source.endswith(bundled.name)
    entry = json.loads(raw)["gpt-4o-mini"]
    p = book.price("gpt-4o-mini")
    assert p is not None and p.source == "litellm" and p.key == "gpt-4o-mini"
    assert (p.input_per_token, p.output_per_token) == (
        entry["input_cost_per_token"],
        entry["output_cost_per_token"],
    )
    assert book.price("openai/gpt-4o-mini").key == "gpt-4o-mini"  # a provider prefix
    assert book.price("anthropic/gpt-4o-mini") is None  # not that provider's entry
    assert book.price("fake-llm") is None
    assert book.price("sample_spec") is None


def test_an_override_file_prices_a_model_and_wins(tmp_path):
    f = tmp_path / "prices.toml"
    f.write_text(
        '[models."fake-llm"]\ninput_per_million = 0.5\noutput_per_million = 1.5\n'
        '[models."gpt-4o-mini"]\ninput_cost_per_token = 1e-6\noutput_cost_per_token = 2e-6\n'
    )
    book = load_prices(f)
    p = book.price("fake-llm")
    assert p.source == "override" and p.input_per_token == pytest.approx(5e-7)
    assert p.output_per_token == pytest.approx(1.5e-6)
    assert book.price("gpt-4o-mini").input_per_token == 1e-6
    assert book.overrides_sha256 == hashlib.sha256(f.read_bytes()).hexdigest()
    j = tmp_path / "prices.json"
    j.write_text(json.dumps({"models": {"m": {"input_per_million": 1, "output_per_million": 2}}}))
    assert load_prices(j).price("m").output_per_token == pytest.approx(2e-6)


@pytest.mark.parametrize(
    "body, words",
    [
        ("[models.m]\ninput_per_million = 1\n", "output_per_million"),
        (
            "[models.m]\ninput_per_million = 1\ninput_cost_per_token = 1\noutput_per_million = 1\n",
            "exactly one",
        ),
        (
            "[models.m]\ninput_per_milion = 1\noutput_per_million = 1\n",
            "unknown key 'models.m.input_per_milion'",
        ),
        ("[models.m]\ninput_per_million = -1\noutput_per_million = 1\n", "greater than or equal"),
    ],
)
def test_a_bad_override_file_names_the_field(tmp_path, body, words):
    f = tmp_path / "prices.toml"
    f.write_text(body)
    with pytest.raises(MnemometerError, match=words):
        load_prices(f)
