"""Evaluation protocols: what a published benchmark number depends on, pinned and hashed.

The same memory system scores 35% or 91% on LoCoMo depending on the judge, and moves ten
points with the answer prompt, the number of memories the reader sees and the categories
counted. A protocol fixes all of them (memory formatting, top-k, the reader's prompt and
decoding, the judges and their model, the categories counted) as a pinned record, the way
a judge is pinned (:class:`~mnemometer.scoring.judges.JudgeSpec`), shipped as data in
``protocols/data/``:

* ``mnemometer``: the neutral default (one short-answer prompt, the same for every system);
* ``locomo-official``: LoCoMo's own RAG evaluation and F1 rules;
* ``mem0``: mem0's evaluation (its answer prompt, 30 memories per speaker, the lenient J);
* ``zep``: Zep's LoCoMo evaluation (its answer prompt and grader);
* ``longmemeval`` and ``longmemeval-con``: LongMemEval's official reading, direct and
  Chain-of-Note, with its per-type judge.

``mnemometer run locomo --protocol mem0`` follows one; ``mnemometer list protocols`` lists
them with their sources. See docs/benchmarks.md, "Protocols".
"""

from mnemometer.protocols._spec import (
    DATE_STYLES,
    DEFAULT,
    LAYOUTS,
    PROTOCOL_NAMES,
    ProtocolSpec,
    Source,
    Text,
    for_suite,
    get_protocol,
    protocols,
)

__all__ = [
    "DATE_STYLES",
    "DEFAULT",
    "LAYOUTS",
    "PROTOCOL_NAMES",
    "ProtocolSpec",
    "Source",
    "Text",
    "for_suite",
    "get_protocol",
    "protocols",
]
