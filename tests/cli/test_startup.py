"""What keeps start-up and loading fast keeps behaviour identical (no timings here).

The timings live in ``benchmarks/bench_startup.py`` and ``benchmarks/bench_loading.py``;
these tests pin the equivalences those speed-ups rely on.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from conftest import invoke_cli, seed_file
from pydantic import Field

from mnemometer.datasets import load_dataset, save_dataset


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys; print(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return set(out)


# --- the command line ----------------------------------------------------------------


def test_help_lists_every_command_with_its_own_summary() -> None:
    from mnemometer.cli.main import COMMANDS, _short, cli

    for name, (_, _, summary) in COMMANDS.items():
        cmd = cli.get_command(None, name)  # type: ignore[arg-type]
        assert cmd is not None, name
        for limit in (45, 60, 200):
            assert _short(summary, limit) == cmd.get_short_help_str(limit), name
    r = invoke_cli("--help")
    assert r.exit_code == 0
    assert all(f"  {name} " in r.output for name in COMMANDS)


def test_help_and_import_load_no_command_and_no_heavy_library() -> None:
    mods = _modules_after(
        "from mnemometer.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass"
    )
    assert not {m for m in mods if m.startswith("mnemometer.cli.") and m != "mnemometer.cli.main"}
    assert not {"pydantic", "numpy", "httpx", "rich", "jieba"} & mods
    assert not {"pydantic", "numpy", "click"} & _modules_after("import mnemometer")


def test_a_run_without_suite_flags_imports_no_other_suite(tmp_path: Path) -> None:
    code = (
        "from mnemometer.cli.main import main\n"
        "try:\n"
        f"    main(['run', 'retrieval', '-d', 'demo-en', '-s', 'keyword', '-o', {str(tmp_path / 'r')!r},"
        " '--format', 'none'])\n"
        "except SystemExit as e:\n"
        "    assert e.code == 0, e.code"
    )
    mods = _modules_after(code)
    assert "mnemometer.suites.retrieval" in mods
    assert not {"mnemometer.suites.scenarios", "mnemometer.suites.items"} & mods


def test_a_text_report_loads_no_html_and_every_format_is_still_listed(tmp_path: Path) -> None:
    run = tmp_path / "r"
    assert (
        invoke_cli("run", "retrieval", "-d", "demo-en", "-s", "keyword", "-o", str(run)).exit_code
        == 0
    )
    render = (
        f"from mnemometer.report import report\nassert 'recall' in report({str(run)!r}).lower()\n"
    )
    mods = _modules_after(render)
    assert "mnemometer.report._run" in mods
    assert not {"mnemometer.report._html_run", "mnemometer.report._charts"} & mods
    mods = _modules_after(render + f"assert report({str(run)!r}, 'html').lstrip().startswith('<!')")
    assert "mnemometer.report._html_run" in mods
    listed = _modules_after(
        "from mnemometer.report import formats, kind_of\n"
        "assert formats('run') == ['html', 'json', 'md', 'text']\n"
        "assert formats('leaderboard') == ['csv', 'html', 'json', 'md', 'text']\n"
        "from mnemometer.comparison import Comparison\n"
        "assert kind_of(Comparison.model_construct()) == 'comparison'"
    )
    assert not {m for m in listed if m.startswith("mnemometer.report._html")}
    assert not {"mnemometer.report._comparison", "mnemometer.report._leaderboard"} & listed


def test_a_format_loads_only_its_module_even_for_a_kind_not_loaded_yet() -> None:
    code = (
        "from mnemometer.report import render\n"
        "try:\n    render(object(), 'text', kind='comparison')\n"
        "except Exception:\n    pass  # not a comparison: only the modules loaded matter"
    )
    mods = _modules_after(code)
    assert "mnemometer.report._comparison" in mods
    assert "mnemometer.report._html_comparison" not in mods


def test_a_memtest_run_imports_no_scipy_quantiles_nor_sklearn(tmp_path: Path) -> None:
    # scipy.stats cost 0.45 s of CPU per process, scipy.special 0.2 s; the intervals' quantiles
    # are computed in mnemometer.stats._quantiles (checked against scipy there).
    code = (
        "from mnemometer.cli.main import main\n"
        "try:\n"
        f"    main(['run', 'memtest', '-d', 'demo-en', '-s', 'tfidf', '-o', {str(tmp_path / 'r')!r},"
        " '--format', 'none'])\n"
        "except SystemExit as e:\n"
        "    assert e.code == 0, e.code"
    )
    mods = _modules_after(code)
    assert "mnemometer.stats._intervals" in mods and "scipy.sparse" in mods  # tfidf's
    assert not {"scipy.stats", "scipy.special", "sklearn", "datasketch"} & mods


def test_the_command_line_lets_blas_threads_sleep_unless_the_user_says_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mnemometer.cli.main import main

    for user, expected in ((None, "4"), ("30", "30")):
        if user is None:
            monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT", raising=False)
        else:
            monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", user)
        with pytest.raises(SystemExit) as done:
            main(["--version"])
        assert done.value.code == 0
        assert os.environ["OPENBLAS_THREAD_TIMEOUT"] == expected


def test_suite_flags_still_parse_from_arguments_and_environment(tmp_path: Path) -> None:
    r = invoke_cli("run", "--help")
    assert "--noise" in r.output and "--top-k" in r.output and "--allow-shell" in r.output
    keyword = ("run", "retrieval", "-d", "demo-en", "-s", "keyword")
    r = invoke_cli(*keyword, "--top-k=3", "-o", tmp_path / "a", "--format", "none")
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "a" / "header.json").read_text())["suite_options"]["top_k"] == 3
    r = invoke_cli(*keyword, "--noise", "0.1")
    assert r.exit_code == 2 and "--noise applies to scenarios" in r.output


# --- schemas -----------------------------------------------------------------------------


def test_field_docstrings_become_descriptions_when_a_schema_is_asked_for() -> None:
    from mnemometer.config import StrictModel

    class Parent(StrictModel):
        a: int
        """Doc of a."""
        b: str = "x"
        """Doc of b."""
        c: int = Field(0, description="explicit")
        """Ignored: the explicit description wins."""

    class Child(Parent):
        b: str = "y"
        d: int = 1
        """Doc of d."""

    props = Child.model_json_schema()["properties"]
    assert props["a"]["description"] == "Doc of a."  # inherited
    assert "description" not in props["b"]  # overridden without a docstring, as pydantic does
    assert props["c"]["description"] == "explicit"
    assert props["d"]["description"] == "Doc of d."
    assert Parent.model_json_schema()["properties"]["b"]["description"] == "Doc of b."


def test_log_schema_documents_every_field() -> None:
    from mnemometer.log import log_json_schema

    schema = log_json_schema()
    for part in schema.values():
        for name, model in {"": part, **part.get("$defs", {})}.items():
            for field, prop in model.get("properties", {}).items():
                assert prop.get("description"), f"{name}.{field}"


# --- datasets ----------------------------------------------------------------------------


def test_native_jsonl_reads_the_same_by_batch_and_line_by_line(tmp_path: Path) -> None:
    from mnemometer.datasets._io import _read_native_jsonl_fast, _read_native_jsonl_lines

    for name in ("demo-en", "demo-zh"):
        path = save_dataset(load_dataset(name), tmp_path / f"{name}.jsonl")
        fast = _read_native_jsonl_fast(path)
        assert fast is not None
        assert fast == _read_native_jsonl_lines(path)
        assert fast.compute_hash() == load_dataset(name).compute_hash()


def test_a_bad_record_in_native_jsonl_still_names_its_line(tmp_path: Path) -> None:
    from mnemometer.errors import DatasetError

    path = save_dataset(load_dataset("demo-en"), tmp_path / "d.jsonl")
    lines = path.read_text("utf-8").splitlines()
    lines[3] = lines[3].replace('"text":', '"txet":', 1)
    path.write_text("\n".join(lines) + "\n", "utf-8")
    with pytest.raises(DatasetError, match=r"d\.jsonl:4: text: Field required"):
        load_dataset(path)


def test_memtest_times_parse_as_strptime_would() -> None:
    from mnemometer.datasets._memtest import _TIME_FORMATS, _parse_time

    def reference(v: str) -> datetime | None:
        for fmt in _TIME_FORMATS:
            try:
                return datetime.strptime(v.strip(), fmt)
            except ValueError:
                continue
        return None

    for v in [
        "2026-05-25 21:21:12",
        "2026-05-25",
        " 2026-05-25 ",
        "1991-1998",
        "Winter 1993",
        "31 July 1991",
        "July 31, 1991",
        "1994",
        "2026-13-01",
        "2026-02-30 10:00:00",
        "2026-5-1",
        "2026-05-25 7:05:09",
        "",
    ]:
        assert _parse_time(v) == reference(v), v


def test_gc_pause_nests_and_restores() -> None:
    from mnemometer._gc import paused

    assert gc.isenabled()
    with paused():
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()


def test_what_a_pause_built_skips_the_young_generations_unless_frozen() -> None:
    from mnemometer._gc import frozen, paused

    def generation(obj: object) -> int | None:
        return next((g for g in range(3) if any(o is obj for o in gc.get_objects(g))), None)

    with paused():
        built = [object()]
    assert generation(built) == 2  # oldest: no young collection walks it again
    before = [object()]
    with frozen():
        with paused():
            inside = [object()]
        assert generation(before) is None  # still frozen: the pause thawed nothing
        assert generation(inside) is not None
    assert generation(before) is not None and gc.get_freeze_count() == 0


def test_gc_freeze_nests_and_returns_the_objects() -> None:
    from mnemometer._gc import frozen

    def collected(obj: object) -> bool:  # is obj seen by the cyclic collector?
        return any(o is obj for o in gc.get_objects())

    before = [object()]  # a container alive before the block
    assert gc.get_freeze_count() == 0 and collected(before)
    with frozen():
        assert not collected(before)
        after = [object()]
        with frozen():
            pass
        assert not collected(before) and collected(after)  # the inner block thawed nothing
    assert gc.get_freeze_count() == 0 and collected(before)


# --- jieba -------------------------------------------------------------------------------


def test_lazy_jieba_dictionary_cuts_exactly_as_jieba(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jieba

    from mnemometer import _zhdict

    monkeypatch.setenv("MNEMOMETER_CACHE", str(tmp_path / "cache"))
    texts = [m.text for m in load_dataset("demo-zh").memories]
    texts += [q.text for q in load_dataset("demo-zh").queries]
    novels = Path(__file__).resolve().parents[3] / "shared/seed-data/memtest/four_novels_db.json"
    if novels.exists():
        texts += [m["content"] for m in json.loads(novels.read_text("utf-8"))["memories"][:400]]
    first = _zhdict.jieba_cutter()  # builds the cache
    path = _zhdict.cache_file()
    assert path is not None and path.exists() and str(tmp_path) in str(path)
    lazy = _zhdict.jieba_cutter()  # reads it
    jieba.initialize()
    for text in texts:
        want = jieba.lcut_for_search(text)
        assert lazy(text) == want, text
        assert first(text) == want, text


def test_a_corrupt_jieba_cache_falls_back_to_jieba(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mnemometer import _zhdict

    monkeypatch.setenv("MNEMOMETER_CACHE", str(tmp_path))
    path = _zhdict.cache_file()
    assert path is not None
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a cache")
    cut = _zhdict.jieba_cutter()
    assert cut("我们在北京见面") == ["我们", "在", "北京", "见面"]
    assert path.read_bytes().startswith(b"mnemometer-jieba-2")  # rewritten
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])  # torn: the size no longer adds up
    assert _zhdict._read(path) is None
    assert _zhdict.jieba_cutter()("我们在北京见面") == ["我们", "在", "北京", "见面"]
    assert path.read_bytes() == whole


def test_the_jieba_cache_keeps_only_the_newest_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every install of jieba (each new virtual environment) has its own key and file.
    import os

    from mnemometer import _zhdict

    freq = {"北京": 5, "北": 2, "京": 1}
    for n in range(_zhdict.KEEP + 2):
        path = tmp_path / f"prefix-dict-{n}.bin"
        _zhdict._write(path, freq, 8)
        os.utime(path, (1000 + n, 1000 + n))
    names = sorted(p.name for p in tmp_path.glob("prefix-dict-*.bin"))
    assert names == [f"prefix-dict-{n}.bin" for n in range(2, _zhdict.KEEP + 2)]
    lazy = _zhdict._read(tmp_path / "prefix-dict-5.bin")
    assert lazy is not None and lazy.total == 8
    lazy.ensure("北")
    assert lazy.freq == {"北京": 5, "北": 2}  # only the words that start with 北
    lazy.ensure("北京")
    assert lazy.freq == freq


# --- run logs ----------------------------------------------------------------------------


def test_a_finished_runs_report_reads_no_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mnemometer import run
    from mnemometer.log import _reader
    from mnemometer.log._reader import count_results
    from mnemometer.report import report

    res = run("retrieval", "keyword", dataset="demo-en", out=tmp_path / "r")
    assert count_results(res.path) == res.summary.results
    expected = report(res.path, "json")

    def no_items(run_dir: object) -> list:
        raise AssertionError("read the items")

    monkeypatch.setattr(_reader, "read_items", no_items)
    import mnemometer.scoring.aggregate as agg

    monkeypatch.setattr(agg, "read_items", no_items)
    assert report(res.path, "json") == expected


def test_a_log_that_grew_after_its_summary_is_read_again(tmp_path: Path) -> None:
    from mnemometer import run
    from mnemometer.log._reader import count_results
    from mnemometer.scoring.aggregate import run_summary

    res = run("retrieval", "keyword", dataset="demo-en", out=tmp_path / "r")
    items = res.path / "items.jsonl"
    first = items.read_bytes().split(b"\n")[0]
    with open(items, "ab") as f:
        f.write(first)  # the same item again, unterminated: a redo cut by a kill
    assert count_results(res.path) == res.summary.results + 1
    again = run_summary(res.path)  # read item by item: still the same distinct results
    assert again.results == res.summary.results and again.source == res.summary.source


def test_memtest_hp_reads_unchanged() -> None:
    ds = load_dataset(seed_file("memtest", "hp_benchmark_db.json"))
    assert len(ds.memories) == 1626
    dated = [m for m in ds.memories if m.timestamp is not None]
    assert dated and all(isinstance(m.timestamp, datetime) for m in dated)
