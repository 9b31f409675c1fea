"""Deep queries at a measured semantic distance: the phrasings and their calibration.

A deep query asks where a 1-2-year-old event happened. It can name its subject or describe
them ("a nurse in Leeds"), and say what they did in the memory's own words, a paraphrase
or an indirect description (verb and object separately): 18 phrasings. How far each one
is from the memory it asks about was measured once with the packaged MiniLM
(all-MiniLM-L6-v2) by :mod:`mnemometer.datasets.generate.calibrate`, and the result is
committed as ``data/deep_calibration.json``: generation reads that table, never a model,
so it stays deterministic, offline and fast. For each (action, object) the ``near`` query
is the phrasing measured closest to its memories, ``far`` the farthest and ``mid`` the one
nearest halfway between them.

The model reads English only (Chinese text comes out at about the same similarity
whatever it says), so the table is measured on English and applied to both languages:
the vocabularies are parallel, key by key.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from mnemometer.datasets.generate import _vocab as V

CALIBRATION = Path(__file__).parent / "data" / "deep_calibration.json"
WHO = ("name", "occupation")
"""How the query refers to its subject: by name, or as ``a <occupation> in <city>``."""
FORMS = (1, 2, 3)
"""Wording of the verb and of the object: own words, paraphrase, indirect description."""
PHRASINGS: tuple[tuple[str, int, int], ...] = tuple(
    (who, verb, noun) for who in WHO for verb in FORMS for noun in FORMS
)
"""Every phrasing, in the calibration's column order."""
BUCKETS = ("near", "mid", "far")


def phrasing_id(ph: tuple[str, int, int]) -> str:
    """``name/1/1``: who, verb form, object form."""
    return f"{ph[0]}/{ph[1]}/{ph[2]}"


def deep_text(
    zh: bool,
    ph: tuple[str, int, int],
    name: str,
    occupation: int,
    city: str,
    action: str,
    obj: str,
) -> str:
    """The text of a deep query about ``name`` (occupation index, city of the event)."""
    who, vf, nf = ph
    if zh:
        verb = V.ACTIONS[action][2][vf]
        noun = V.OBJECTS[obj][4][0 if nf == 1 else nf]
        subject = name if who == "name" else f"一位{V.OCCUPATIONS[occupation][1]}在{city}"
        return f"一两年前，{subject}{verb}{noun}，是在哪里？"
    verb = V.ACTIONS[action][1][vf]
    noun = V.OBJECTS[obj][3][nf]  # plural, paraphrase, indirect description
    occ = V.OCCUPATIONS[occupation][0]
    subject = name if who == "name" else f"{'an' if occ[0] in 'aeiou' else 'a'} {occ} in {city}"
    return f"A year or two ago, {subject} {verb} {noun}: where was that?"


@cache
def calibration() -> dict[str, list[float]]:
    """``"action/object" -> similarity per phrasing`` (in :data:`PHRASINGS` order)."""
    data = json.loads(CALIBRATION.read_text("utf-8"))
    if data["phrasings"] != [phrasing_id(p) for p in PHRASINGS]:
        raise RuntimeError(f"{CALIBRATION}: phrasings differ from the generator's")
    return {k: [float(x) for x in v] for k, v in data["pairs"].items()}


@cache
def choose(action: str, obj: str) -> dict[str, tuple[tuple[str, int, int], float | None]]:
    """The phrasing of each bucket for one (action, object), with its measured similarity.

    ``near``: the highest similarity; ``far``: the lowest; ``mid``: the nearest to halfway
    (ties go to the earlier phrasing). A pair missing from the table (none is, a test
    checks) falls back to name/1/1, name/2/2 and occupation/3/3, unmeasured.
    """
    sims = calibration().get(f"{action}/{obj}")
    if not sims:
        return {
            "near": (("name", 1, 1), None),
            "mid": (("name", 2, 2), None),
            "far": (("occupation", 3, 3), None),
        }
    hi, lo = max(sims), min(sims)
    half = (hi + lo) / 2
    pick = {
        "near": sims.index(hi),
        "far": sims.index(lo),
        "mid": min(range(len(sims)), key=lambda i: (abs(sims[i] - half), i)),
    }
    return {b: (PHRASINGS[i], round(sims[i], 3)) for b, i in pick.items()}
