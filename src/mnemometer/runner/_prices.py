"""The prices a run pins when it starts: who asks which model, its tokenizer and price.

The header's ``cost`` (:class:`~mnemometer.log._schema.CostRecord`) names the price map
(LiteLLM's bundled file, by version and SHA-256) and the ``--prices`` file, and for each
model the run asks (the reader or answering agent's model, each judge's, an LLM-backed
store's) the tokenizer that counts its tokens and the price it was found at. The summary
prices the run's tokens with these, so its dollars never change after the fact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mnemometer.log._schema import CostRecord, ModelPrice, RunHeader


def roles(header: RunHeader, llm: Any) -> dict[str, str]:
    """Role -> model: ``reader`` (the suite's or the agent's model), ``judge:<name>``, ``ingest``.

    ``ingest`` is the model a store that meters its LLM calls (``ingest_costs``) is given:
    its own ``llm_model`` option, else the run's endpoint's model.
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
    if metered and (store_model or (llm is not None and llm.model)):
        out["ingest"] = str(store_model or llm.model)
    return out


def cost_record(header: RunHeader, llm: Any, prices: str | Path | None = None) -> CostRecord:
    """The header's ``cost``: the price map, the overrides, and each role's model priced.

    Raises:
        MnemometerError: an unreadable or invalid ``--prices`` file.
    """
    from mnemometer.llm import counter_for, load_prices

    book = load_prices(prices)
    who = roles(header, llm)
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
