"""The renderer registry: entry points named so that nothing is imported to list or pick."""

from __future__ import annotations

import inspect
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from conftest import REPO

from mnemometer._registry import reference
from mnemometer.errors import MnemometerError
from mnemometer.report import formats, kind_of, register_kind, render, renderer
from mnemometer.report._registry import RENDERERS, format_of

BUILTIN = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]["entry-points"][
    "mnemometer.renderers"
]


def test_every_builtin_entry_is_installed_and_is_what_its_name_says() -> None:
    for name, value in BUILTIN.items():
        assert RENDERERS.target(name) == value, f"{name}: reinstall (pip install -e .)"
        if name.startswith("."):  # a file suffix: names a format some kind has
            assert any(value in formats(k) for k in BUILTIN if "." not in k), name
            continue
        obj = RENDERERS.load(name)
        if "." in name:  # KIND.FORMAT: a renderer of a declared kind
            assert inspect.isfunction(obj) and name.partition(".")[0] in BUILTIN, name
        else:  # KIND: a class known by the name its entry point gives
            assert inspect.isclass(obj) and reference(obj) == value, name


def test_a_file_suffix_picks_a_format_of_the_kind() -> None:
    for kind in ("run", "comparison", "leaderboard"):
        for file, fmt in (
            ("r.html", "html"),
            ("R.HTM", "html"),
            ("r.md", "md"),
            ("r.markdown", "md"),
            ("r.txt", "text"),
            ("r.json", "json"),
            ("r", None),
            ("r.pdf", None),
        ):
            assert format_of(file, kind) == fmt, (kind, file)
    assert format_of("board.csv", "leaderboard") == "csv"
    assert format_of("run.csv", "run") is None  # a format of another kind


@dataclass
class Note:
    text: str


@pytest.fixture
def session() -> Iterator[None]:
    yield
    for name in ("note", "note.text", "run.shout"):
        RENDERERS.unregister(name)


def test_in_process_renderers_and_kinds_for_notebooks(session: None) -> None:
    register_kind(Note, "note")
    renderer("note", "text")(lambda n: n.text)
    assert kind_of(Note("hi")) == "note" and render(Note("hi")) == "hi"
    renderer("note", "text")(lambda n: n.text.upper())  # a cell run again replaces it
    assert render(Note("hi")) == "HI"
    renderer("run", "shout")(lambda v: "!")  # a new format for a built-in kind
    assert "shout" in formats("run") and format_of("r.shout", "run") == "shout"
    with pytest.raises(MnemometerError, match="'run.text' is already registered"):
        renderer("run", "text")(lambda v: "")  # an entry point's, not replaced in passing
    # The built-in modules' own decorators name what their entry points do: no-ops.
    from mnemometer.report._run import RunView, run_text

    renderer("run", "text")(run_text)
    register_kind(RunView, "run")
    assert RENDERERS.target("run.text") == "mnemometer.report._run:run_text"


def test_an_unknown_format_names_the_formats_of_the_kind(session: None) -> None:
    register_kind(Note, "note")
    with pytest.raises(MnemometerError, match=r"no 'txt' format for a note; formats: none"):
        render(Note("hi"), "txt")
    renderer("note", "text")(lambda n: n.text)
    with pytest.raises(MnemometerError, match=r"did you mean 'text'\?\); formats: text"):
        render(Note("hi"), "txt")


def test_plain_renderer_modules_never_import_an_html_one() -> None:
    # The HTML module imports the model it draws, never the reverse: no import circle, and
    # a text report loads no HTML.
    import ast

    for name in ("_run", "_comparison", "_leaderboard"):
        tree = ast.parse((REPO / "src/mnemometer/report" / f"{name}.py").read_text("utf-8"))
        imported = {
            f"{n.module}.{a.name}"
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom)
            for a in n.names
        } | {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert not {m for m in imported if "._html" in m}, name


def test_an_install_without_the_renderer_entry_points_says_how_to_mend_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(RENDERERS, "_entry_points", dict)  # an install from before them
    with pytest.raises(MnemometerError, match=r"nothing renders a Note \(no renderer .*-e \.\)"):
        kind_of(Note("hi"))
    with pytest.raises(MnemometerError, match=r"formats: none \(no renderer is registered"):
        render(Note("hi"), "text", kind="run")
