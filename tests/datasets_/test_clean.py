"""`clean`: exact and near duplicates, person balance, query consistency, seed data, CLI."""

from __future__ import annotations

import json
import random
from itertools import combinations

import pytest
from click.testing import CliRunner
from conftest import seed_file
from datasketch import MinHash, MinHashLSH
from datasketch.lsh import _optimal_param  # MinHashLSH's choice of (bands, rows)

from mnemometer.cli.main import cli
from mnemometer.datasets import Dataset, DatasetInfo, Memory, Query, load_dataset
from mnemometer.datasets._minhash import (
    candidate_pairs,
    jaccard,
    lsh_params,
    minhash_signatures,
)
from mnemometer.datasets.clean import (
    LSH_MARGIN,
    CleanConfig,
    clean_dataset,
)
from mnemometer.errors import MnemometerError


def mem(mid, text, person="A", book="B1", event="talk"):
    return Memory(id=mid, text=text, metadata={"person": person, "book": book, "event_type": event})


def ds(memories, queries=(), lang="en"):
    return Dataset(
        info=DatasetInfo(name="t", language=lang), memories=list(memories), queries=list(queries)
    )


def test_exact_duplicates_are_case_and_space_insensitive_and_queries_follow_the_kept_one():
    d = ds(
        [
            mem("m1", "Harry found the Mirror of Erised"),
            mem("m2", "  harry found the   mirror of erised "),
            mem("m3", "Snape brewed a potion"),
        ],
        [
            Query(id="q1", text="mirror", relevant_ids=["m2"]),
            Query(id="q2", text="nothing", relevant_ids=[]),
        ],
    )
    out, r = clean_dataset(d, CleanConfig(key_cap=0))
    assert [m.id for m in out.memories] == ["m1", "m3"]
    assert r.exact_duplicates == 1 and r.ids_remapped == 1
    assert out.queries[0].relevant_ids == ["m1"]
    assert out.queries[1].is_negative  # negatives are kept as they are
    assert out.memories[0].metadata["clean_merged"] == ["m2"]
    assert "1 exact duplicates" in out.info.notes[-1]
    assert out.info.content_hash == out.compute_hash()


def test_near_duplicates_need_different_persons_same_group_and_keep_the_most_detailed():
    base = "hagrid rowed the first years across the black lake toward the lit castle"
    d = ds(
        [
            mem("a", f"Harry remembered that {base}", person="Harry"),
            mem("b", f"Ron later recounted that {base} at night", person="Ron"),
            mem("c", f"Everyone agreed that {base}", person="Harry"),  # same person as a
            mem("d", f"Neville said {base}", person="Neville", book="B2"),  # other group
            mem("e", "Snape brewed a potion in the dungeon", person="Snape"),
        ]
    )
    out, r = clean_dataset(d, CleanConfig(key_cap=0))
    kept = {m.id for m in out.memories}
    # a-b and c-b are cross-person pairs, so a, b, c form one group; b is the most detailed.
    assert kept == {"b", "d", "e"} and r.near_duplicates == 2
    # Same rule with any person allowed, and no grouping: d joins too.
    out2, r2 = clean_dataset(d, CleanConfig(key_cap=0, group_by=(), cross_person_only=False))
    assert {m.id for m in out2.memories} == {"b", "e"} and r2.near_duplicates == 3
    # Threshold 0 disables the pass.
    _, r3 = clean_dataset(d, CleanConfig(key_cap=0, near_dup_threshold=0))
    assert r3.near_duplicates == 0


def test_lsh_finds_every_pair_above_the_threshold_that_brute_force_finds():
    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(60)]
    base = [frozenset(rng.sample(vocab, 12)) for _ in range(40)]
    sets = base + [frozenset(sorted(s)[:-1] + ["x"]) for s in base[:20]]  # Jaccard 11/13
    pairs = candidate_pairs(sets, 0.6 - LSH_MARGIN)  # as clean_dataset asks
    truth = {
        (i, j) for i, j in combinations(range(len(sets)), 2) if jaccard(sets[i], sets[j]) > 0.6
    }
    assert truth and truth <= pairs


@pytest.mark.parametrize("num_perm", [32, 128])
def test_lsh_bands_and_rows_equal_datasketchs(num_perm: int):
    # datasketch (a dev dependency, no longer a core one) is the independent reference.
    for t in [0.05 * k for k in range(1, 20)]:
        assert lsh_params(t, num_perm) == _optimal_param(t, num_perm, 0.5, 0.5), t
    lsh = MinHashLSH(threshold=0.4, num_perm=128)  # what clean asks, through the public API
    assert lsh_params(0.4, 128) == (lsh.b, lsh.r)


def test_signatures_equal_datasketch_minhash():
    sets = [frozenset("the boy who lived".split()), frozenset(), frozenset(["哈利", "魔法"])]
    sigs, rows = minhash_signatures(sets, 64)
    assert list(rows) == [0, 2]
    for k, i in enumerate(rows):
        m = MinHash(num_perm=64, seed=1, scheme="legacy")
        m.update_batch([t.encode() for t in sets[i]])
        assert (m.hashvalues == sigs[k]).all()


def test_person_balance_caps_key_and_other_persons_with_one_per_stratum_and_is_seeded():
    memories = []
    for p, n in (("Harry", 12), ("Ron", 5), ("Luna", 4), ("Dobby", 2), ("Cho", 1)):
        for i in range(n):
            memories.append(
                mem(
                    f"{p}{i}",
                    f"{p} event number {i} unique{p}{i} words{i}",
                    person=p,
                    event=f"e{i % 3}",
                    book=f"b{i % 2}",
                )
            )
    queries = [Query(id=f"q{i}", text="x", relevant_ids=[f"Harry{i}"]) for i in range(12)]
    cfg = CleanConfig(key_cap=6, other_cap=3, near_dup_threshold=0, query_person_cap=0)
    out, r = clean_dataset(ds(memories, queries), cfg)
    by = {}
    for m in out.memories:
        by.setdefault(m.metadata["person"], []).append(m)
    # counts sorted [1, 2, 4, 5, 12]: the 80th percentile is 12, so only Harry is key.
    assert len(by["Harry"]) == 6 and len(by["Ron"]) == 3 and len(by["Luna"]) == 3
    assert len(by["Dobby"]) == 2 and r.capped == (12 - 6) + (5 - 3) + (4 - 3)
    strata = {(m.metadata["event_type"], m.metadata["book"]) for m in by["Harry"]}
    assert len(strata) == 6  # all six event|book strata are represented
    again, _ = clean_dataset(ds(memories, queries), cfg)
    assert [m.id for m in again.memories] == [m.id for m in out.memories]
    kept = {m.id for m in out.memories}
    assert all(set(q.relevant_ids) <= kept for q in out.queries)
    assert len(out.queries) == 6 and r.queries_without_ground_truth == 6


def test_query_person_cap_keeps_the_first_queries_of_each_person():
    memories = [mem(f"m{i}", f"fact {i} alpha{i}", person="P" if i < 4 else "Q") for i in range(6)]
    queries = [Query(id=f"q{i}", text="x", relevant_ids=[f"m{i}"]) for i in range(6)]
    out, r = clean_dataset(
        ds(memories, queries), CleanConfig(near_dup_threshold=0, key_cap=0, query_person_cap=2)
    )
    assert [q.id for q in out.queries] == ["q0", "q1", "q4", "q5"] and r.queries_capped == 2


def test_chinese_near_duplicates_use_word_segmentation():
    d = ds(
        [
            mem("z1", "贾宝玉在大观园里和林黛玉一起读西厢记，两人说笑了半日", person="贾宝玉"),
            mem("z2", "林黛玉在大观园里和贾宝玉一起读西厢记，两人说笑了半日", person="林黛玉"),
            mem("z3", "孙悟空大闹天宫，打败了十万天兵天将", person="孙悟空"),
        ],
        lang="zh",
    )
    out, r = clean_dataset(d, CleanConfig(key_cap=0))
    assert r.near_duplicates == 1 and len(out.memories) == 2
    assert "on zh tokens" in out.info.notes[-1]


def test_bad_parameters_are_user_errors():
    with pytest.raises(MnemometerError, match="threshold"):
        clean_dataset(ds([]), CleanConfig(near_dup_threshold=1.5))
    with pytest.raises(MnemometerError, match="caps"):
        clean_dataset(ds([]), CleanConfig(other_cap=-1))


def test_seed_raw_hp_reproduces_the_seeds_published_counts():
    d = load_dataset(seed_file("memtest", "hp_benchmark_db_raw.json"))
    assert len(d.memories) == 5925
    # The seed's own pass found no cross-perspective duplicates (its file's clean_stats:
    # cross 0); with that pass off, its published 5,925 -> 1,626 must come out exactly.
    out, r = clean_dataset(d, CleanConfig(near_dup_threshold=0))
    assert (r.exact_duplicates, r.capped, r.memories_after) == (626, 3673, 1626)
    # With the pass on, the templated retellings ("Ron later recounted that ...") go too.
    out2, r2 = clean_dataset(d)
    assert r2.exact_duplicates == 626 and r2.near_duplicates > 1000
    assert r2.memories_after < 1626
    kept = {m.id for m in out2.memories}
    assert all(q.relevant_ids and set(q.relevant_ids) <= kept for q in out2.queries)


def test_cli_clean_on_four_novels_writes_a_loadable_dataset(tmp_path):
    src = seed_file("memtest", "four_novels_db.json")
    out = tmp_path / "fn.json"
    res = CliRunner().invoke(cli, ["clean", str(src), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "exact duplicates" in res.output and "near duplicates" in res.output
    d = load_dataset(out)
    assert d.info.language == "zh" and 0 < len(d.memories) < 4058
    assert "mnemometer clean: memories 4058 ->" in d.info.notes[-1]


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"a": 1}', "not a dataset"),
        ("not json", "malformed JSON"),
        ('{"info": {"name": "x"}, "memories": [{"id": ""}]}', "memories.0"),
    ],
)
def test_cli_clean_rejects_what_is_not_a_dataset(tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    res = CliRunner().invoke(cli, ["clean", str(bad), "-o", str(tmp_path / "o.json")])
    assert res.exit_code != 0 and message in str(res.exception or res.output)
    assert not (tmp_path / "o.json").exists()


def test_cli_clean_missing_file_exits_2_without_traceback(tmp_path):
    import subprocess

    from conftest import MNEMOMETER

    p = subprocess.run(
        [MNEMOMETER, "clean", "nope.json", "-o", "o.json"], capture_output=True, text=True
    )
    assert p.returncode == 2 and p.stderr.startswith("error: nope.json")
    assert "Traceback" not in p.stderr
    json.dumps(p.stderr)
