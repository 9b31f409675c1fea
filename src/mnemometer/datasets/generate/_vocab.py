"""Vocabularies for the procedural generator, in English and Chinese.

The word lists are data and live in ``vocab.json`` next to this module (packaged with the
wheel); this module loads them once and exposes them as tuples.

Keys (topics, objects, actions, relations, scripts) are language-independent, so one seed
gives the same structure in both languages and only the surface text differs. Every object
lists the actions that fit it (no "held a meeting of gold").

Shapes:
    ACTIONS: action key -> (paid?, en forms, zh forms); en forms are (present, past,
        paraphrase past, indirect past, colloquial past), zh forms (verb, past, paraphrase,
        indirect, colloquial).
    TOPICS: topic key -> (en name, zh name, en venues, zh venues).
    OBJECTS: object key -> (topic, actions, (min, max) unit price, en (singular, plural,
        paraphrase plural, indirect description), zh (noun, measure word, paraphrase,
        indirect description)).
    RELATIONS: relation key -> (en, zh); OCCUPATIONS: ((en, zh), ...).
    EN_FAKE_LAST, ZH_FAKE_SURNAMES: never used for real people; negative queries ask
        about these (ZH_FAKE_SURNAMES are not in ZH_SURNAMES).
    SCRIPTS: chains of six steps, one topic each; {n} is the person, {x} the chain's slot
        value. Each is (topic, relation, ((en, zh) step, ...), en slot values, zh slot
        values); relation is "causal" (each step because of the last) or "temporal".
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def _frozen(value: Any) -> Any:
    """JSON lists as tuples, all the way down."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    return value


_DATA: dict[str, Any] = _frozen(
    json.loads(
        resources.files("mnemometer.datasets.generate").joinpath("vocab.json").read_text("utf-8")
    )
)

ACTIONS: dict[str, tuple[bool, tuple[str, ...], tuple[str, ...]]] = _DATA["ACTIONS"]
TOPICS: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]] = _DATA["TOPICS"]
OBJECTS: dict[
    str, tuple[str, tuple[str, ...], tuple[int, int], tuple[str, ...], tuple[str, ...]]
] = _DATA["OBJECTS"]
RELATIONS: dict[str, tuple[str, str]] = _DATA["RELATIONS"]
OCCUPATIONS: tuple[tuple[str, str], ...] = _DATA["OCCUPATIONS"]
SCRIPTS: dict[
    str, tuple[str, str, tuple[tuple[str, str], ...], tuple[str, ...], tuple[str, ...]]
] = _DATA["SCRIPTS"]

EN_FEMALE: tuple[str, ...] = _DATA["EN_FEMALE"]
EN_MALE: tuple[str, ...] = _DATA["EN_MALE"]
EN_LAST: tuple[str, ...] = _DATA["EN_LAST"]
EN_FAKE_LAST: tuple[str, ...] = _DATA["EN_FAKE_LAST"]
ZH_SURNAMES: tuple[str, ...] = _DATA["ZH_SURNAMES"]
ZH_FEMALE: tuple[str, ...] = _DATA["ZH_FEMALE"]
ZH_MALE: tuple[str, ...] = _DATA["ZH_MALE"]
ZH_FAKE_SURNAMES: tuple[str, ...] = _DATA["ZH_FAKE_SURNAMES"]
EN_CITIES: tuple[str, ...] = _DATA["EN_CITIES"]
ZH_CITIES: tuple[str, ...] = _DATA["ZH_CITIES"]
EN_STREETS: tuple[str, ...] = _DATA["EN_STREETS"]
ZH_STREETS: tuple[str, ...] = _DATA["ZH_STREETS"]
EN_WEEKDAYS: tuple[str, ...] = _DATA["EN_WEEKDAYS"]
ZH_WEEKDAYS: tuple[str, ...] = _DATA["ZH_WEEKDAYS"]
EN_MONTHS: tuple[str, ...] = _DATA["EN_MONTHS"]
EN_NUMBERS: tuple[str, ...] = _DATA["EN_NUMBERS"]
ZH_NUMBERS: tuple[str, ...] = _DATA["ZH_NUMBERS"]
