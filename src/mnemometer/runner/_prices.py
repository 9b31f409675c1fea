"""The prices a run pins when it starts: who asks which model, its tokenizer and price.

The header's ``cost`` (:class:`~mnemometer.log._schema.CostRecord`) names the price map
(LiteLLM's bundled file, by version and SHA-256) and the ``--prices`` file, and for each
model the run asks (the reader or answering agent's model, each judge's, an LLM-backed
store's) the tokenizer that counts its tokens and the price it was found at. The summary
prices the run's tokens with these, so its dollars never change after the fact.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemometer.log._schema import CostRecord, ModelPrice, RunHeader

if TYPE_CHECKING:
    from mnemometer.llm import PriceBook


def roles(header: RunHeader, llm_model: str | None) -> dict[str, str]:
    """Role -> model: ``reader`` (the suite's or the agent's model), ``judge:<name>``, ``ingest``.

    ``ingest`` is the model a store that meters its LLM calls (``ingest_costs``) is given:
    its own ``llm_model`` option, else ``llm_model`` (the run's endpoint's model).
    """
    out: dict[str, str] = {}
    resolved = header.system.options.get("resolved")
    agent_llm = resolved.get("llm") if isinstance(resolved, dict) else None
    if header.llm and header.llm.get("model"):
        out["reader"] = str(header.llm["model"])
    elif isinstance(agent_llm, dict) and agent_llm.get("model"):
        out["reader"] = str(agent_llm["model"])
    if header.scoring is not None:
        for s in header.scoring.scorers:
            if s.name == "judge" and s.args.get("model"):
                out[f"judge:{s.args['judge']}"] = str(s.args["model"])
    store_model = header.system.options.get("llm_model")
    metered = "ingest_costs" in header.system.capabilities
    if metered and (store_model or llm_model):
        out["ingest"] = str(store_model or llm_model)
    return out


def cost_record(header: RunHeader, llm: Any, prices: str | Path | None = None) -> CostRecord | None:
    """The header's ``cost``: the price map, the overrides, and each role's model priced.

    ``None`` for a run that asks no model and names no ``--prices`` file: there is nothing
    to price, and reading the price map (and importing the LLM client) would cost a run
    that never asks a model (a re-scoring that adds a judge prices it then).

    Raises:
        MnemometerError: an unreadable or invalid ``--prices`` file.
    """
    who = roles(header, llm.model if llm is not None else None)
    if not who and prices is None:
        return None
    from mnemometer.llm import load_prices

    return _priced(load_prices(prices), who)


def _priced(book: PriceBook, who: dict[str, str]) -> CostRecord:
    from mnemometer.llm import counter_for

    models: dict[str, ModelPrice] = {}
    for model in dict.fromkeys(who.values()):
        price = book.price(model)
        models[model] = ModelPrice(
            tokenizer=counter_for(model).describe(),
            key=price.key if price else None,
            source=price.source if price else None,
            input_per_token=price.input_per_token if price else None,
            output_per_token=price.output_per_token if price else None,
        )
    return CostRecord(
        price_map=book.source,
        price_map_sha256=book.sha256,
        overrides=book.overrides_path,
        overrides_sha256=book.overrides_sha256,
        roles=who,
        models=models,
    )


def repriced(
    parent: RunHeader, header: RunHeader, llm: Any, prices: str | Path | None = None
) -> tuple[CostRecord, list[str]]:
    """A re-scored run's prices, and notes on any model not priced as the parent pinned.

    The parent's reader and store keep their roles (their tokens are the parent's), and the
    judges are the re-scoring's. Without ``prices`` every model the parent pinned keeps its
    price; a model it did not pin (a new judge's) is priced from the installed map and the
    parent's ``--prices`` file while that file is unchanged. ``prices`` (``mnemometer score
    --prices FILE``) prices every model afresh, as does a parent from before prices were
    pinned.

    Raises:
        MnemometerError: an unreadable or invalid ``prices`` file.
    """
    from mnemometer.llm import load_prices

    pinned = parent.cost
    if pinned is not None:
        kept = pinned.roles
    else:
        kept = roles(parent, (parent.llm or {}).get("model"))
    judging = roles(header, llm.model if llm is not None else None)
    who = {r: m for r, m in kept.items() if not r.startswith("judge:")}
    who |= {r: m for r, m in judging.items() if r.startswith("judge:")}
    if pinned is None or prices is not None:
        return _priced(load_prices(prices), who), []
    same = (
        pinned.overrides is not None
        and price_file_sha256(pinned.overrides) == pinned.overrides_sha256
    )
    new = {r: m for r, m in who.items() if m not in pinned.models}
    book = load_prices(pinned.overrides if same else None)
    fresh = _priced(book, new).models
    models = {m: pinned.models.get(m) or fresh[m] for m in dict.fromkeys(who.values())}
    notes = []
    if fresh and book.sha256 != pinned.price_map_sha256:
        notes.append(
            f"{', '.join(fresh)} priced from {book.source} (sha256 {str(book.sha256)[:12]}), "
            f"not the parent's pinned map (sha256 {str(pinned.price_map_sha256)[:12]})"
        )
    if fresh and pinned.overrides is not None and not same:
        notes.append(
            f"{', '.join(fresh)} priced without the parent's --prices file "
            f"{pinned.overrides} (missing or changed since)"
        )
    return pinned.model_copy(update={"roles": who, "models": models}), notes


def price_file_sha256(path: str | Path) -> str | None:
    """SHA-256 of a ``--prices`` file as it is now (``None``: no such file)."""
    p = Path(path)
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None
