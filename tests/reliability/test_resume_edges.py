"""Resume at the awkward moments: between a build sequence's step lines, after a retried
failure, between the summary and the header, while ``experiment.json`` was written."""

from __future__ import annotations

import json
from pathlib import Path

from mnemometer.log import read_header, read_items
from mnemometer.runner import resume_experiment
from mnemometer.workflows import run_suite

SUITE = Path(__file__).resolve().parents[2] / "examples" / "suites" / "build-site"
SHELL = {"allow_shell": True}


def _view(run_dir: Path) -> list[tuple]:
    return [(r.item_id, r.step, r.status, r.success) for r in read_items(run_dir)]


def _running(run_dir: Path) -> None:
    header = json.loads((run_dir / "header.json").read_text())
    header["status"] = "running"
    (run_dir / "header.json").write_text(json.dumps(header))


def _lines(run_dir: Path) -> list[bytes]:
    return (run_dir / "items.jsonl").read_bytes().splitlines(keepends=True)


def test_a_sequence_cut_between_its_steps_is_run_again(tmp_path: Path) -> None:
    exp = run_suite(SUITE, out=tmp_path / "exp", conditions=["lexical"], suite_options=SHELL)
    run_dir = exp.runs[-1].path
    full = _view(run_dir)
    lines = _lines(run_dir)
    steps = [json.loads(x) for x in lines if json.loads(x).get("step")]
    assert len(steps) == 3 and all(s["steps"] == 3 for s in steps)
    # A kill after the first step's line reached the file, before the others did.
    kept = [x for x in lines if json.loads(x).get("step") in (None, "hero")]
    (run_dir / "items.jsonl").write_bytes(b"".join(kept))
    _running(run_dir)
    (run_dir / "summary.json").unlink()
    assert [r.step for r in read_items(run_dir)] == [None]  # the cut sequence is not read
    resume_experiment(tmp_path / "exp", suite_options=SHELL)  # consent is given again
    assert _view(run_dir) == full


def test_a_retried_failure_leaves_no_stale_error_behind(tmp_path: Path) -> None:
    exp = run_suite(SUITE, out=tmp_path / "exp", conditions=["lexical"], suite_options=SHELL)
    run_dir = exp.runs[-1].path
    full = _view(run_dir)
    lines = [json.loads(x) for x in _lines(run_dir)]
    seq = next(x for x in lines if x.get("step"))
    # The sequence timed out the first time: one failure line, no steps.
    failure = {"item_id": seq["item_id"], "index": seq["index"], "status": "timeout"}
    failure |= {"error": "timed out after 1 s", "success": False}
    kept = [x for x in lines if not x.get("step")] + [failure]
    (run_dir / "items.jsonl").write_text("".join(json.dumps(x) + "\n" for x in kept))
    _running(run_dir)
    resume_experiment(tmp_path / "exp", suite_options=SHELL)  # consent is given again
    assert _view(run_dir) == full
    assert read_header(run_dir).status == "finished"
    # The file says what the numbers say: the stale failure line is gone from it too.
    on_disk = [json.loads(x) for x in _lines(run_dir)]
    assert not any(x.get("status") == "timeout" for x in on_disk)
    assert len(on_disk) == len(lines)


def test_a_run_killed_between_its_summary_and_its_header_is_finished_on_resume(
    tmp_path: Path,
) -> None:
    from mnemometer import Experiment, SystemSpec, run_experiment

    exp = Experiment("retrieval", [SystemSpec.store("bm25", condition="lex")], dataset="demo-en")
    run_experiment(exp, tmp_path / "exp")
    run_dir = tmp_path / "exp" / "lex-r0"
    (run_dir / "summary.json").unlink()  # a kill before the summary: the header says so
    resumed = resume_experiment(tmp_path / "exp")
    assert (run_dir / "summary.json").exists()
    assert resumed.runs[0].summary.source == "suite"


def test_an_experiment_plan_is_written_whole(tmp_path: Path) -> None:
    from mnemometer import Experiment, SystemSpec, run_experiment

    out = tmp_path / "exp"
    out.mkdir()
    (out / "experiment.json.tmp").write_text('{"schema_ver')  # a kill mid-write, last time
    exp = Experiment("retrieval", [SystemSpec.store("bm25", condition="lex")], dataset="demo-en")
    res = run_experiment(exp, out)
    assert json.loads((out / "experiment.json").read_text())["suite"] == "retrieval"
    assert not (out / "experiment.json.tmp").exists() and res.runs[0].summary.counts


def test_a_resumed_memtest_reads_its_replay_checkpoint_instead_of_replaying(tmp_path: Path):
    from wrapped import WrappedBM25

    from mnemometer.datasets import load_dataset
    from mnemometer.datasets.generate import write_generated
    from mnemometer.suites import create_suite
    from mnemometer.suites._base import RunContext
    from mnemometer.systems import SystemSpec

    class Counting(WrappedBM25):
        searches = 0

        def search(self, query: str, top_k: int):
            Counting.searches += 1
            return self.inner.search(query, top_k)

    write_generated(tmp_path / "g.jsonl", 300, "en", seed=3)  # 60 has no forgetting probes
    ds = load_dataset(tmp_path / "g.jsonl")
    spec = SystemSpec.store("bm25")

    def session(pending):
        suite = create_suite("memtest")
        items = suite.plan(ds)
        Counting.searches = 0
        suite.setup(Counting(), ds, RunContext(tmp_path, spec, pending=pending))
        forget = [it for it in items if it.id.startswith("forget/")]
        return Counting.searches, [suite.run_item(None, it) for it in forget], items

    first, outcomes, items = session(None)
    assert first > 0 and outcomes, "the first session replays the access schedule"
    assert (tmp_path / "memtest-replay.json").is_file()
    left = frozenset(it.id for it in items[len(items) // 2 :])
    again, resumed, _ = session(left)
    assert again == 0, f"the resume searched {again} times before its items"
    assert resumed == outcomes
    (tmp_path / "memtest-replay.json").write_text("{torn")
    redo, replayed, _ = session(left)  # an unreadable checkpoint: the replay runs again

    def found(rs):
        return [[(m["name"], m["value"]) for m in r["metrics"]] for r in rs]  # latency differs

    assert redo == first and found(replayed) == found(outcomes)
