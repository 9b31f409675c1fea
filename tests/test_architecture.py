"""The codebase keeps its shape: one-way imports between packages, a small public surface.

The layers below are drawn in docs/design/architecture.md; a package may import only from
lower layers, which also rules out import cycles between packages. Inside a package the
modules import one way too (no circles, lazy imports included).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "mnemometer"
DOCS = [SRC.parents[1] / "README.md", *sorted((SRC.parents[1] / "docs").rglob("*.md"))]

LAYERS: list[tuple[str, ...]] = [
    ("errors", "_jsonl", "_env", "_gc", "_lazy", "envfile"),
    ("config", "_registry", "deadline", "outage", "_zhdict"),
    ("http", "services", "text", "protocols"),
    ("log", "llm", "local_llm", "stats", "embeddings", "sandbox"),
    ("datasets", "stores", "scoring"),
    ("agents",),
    ("systems",),
    ("suites", "comparison"),
    ("runner",),
    ("report", "testing"),
    ("workflows",),
    ("cli", "__init__"),
]
RANK = {unit: i for i, layer in enumerate(LAYERS) for unit in layer}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _edges() -> dict[tuple[str, str], str]:
    """``(importer unit, imported unit) -> where``, every import in the package (lazy ones too)."""
    edges: dict[tuple[str, str], str] = {}
    for f in SRC.rglob("*.py"):
        rel = f.relative_to(SRC.parent).with_suffix("")
        module = ".".join(rel.parts).removesuffix(".__init__")
        src = _unit(module)
        for node in ast.walk(ast.parse(f.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mnemometer"):
                targets = (
                    [a.name for a in node.names]
                    if node.module == "mnemometer"
                    else [_unit(node.module or "")]
                )
            elif isinstance(node, ast.Import):
                targets = [_unit(a.name) for a in node.names if a.name.startswith("mnemometer.")]
            else:
                continue
            for t in targets:
                if t != src:
                    edges.setdefault((src, t), f"{f.relative_to(SRC.parent)}:{node.lineno}")
    return edges


def _module_edges() -> dict[tuple[str, str], str]:
    """``(module, module it imports) -> where`` inside each package, every import counted.

    Lazy and ``TYPE_CHECKING`` imports count; a package's ``__init__`` is a module named as
    the package; ``from a.b import c`` imports ``a.b.c`` when that is a module, else ``a.b``.
    """
    files = {
        ".".join(f.relative_to(SRC.parent).with_suffix("").parts).removesuffix(".__init__"): f
        for f in SRC.rglob("*.py")
    }
    edges: dict[tuple[str, str], str] = {}
    for module, f in files.items():
        here = module.split(".") if f.name == "__init__.py" else module.split(".")[:-1]
        for node in ast.walk(ast.parse(f.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from this package, one level up per extra dot
                    parent = here[: len(here) - node.level + 1]
                    base = ".".join([*parent, base] if base else parent)
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names
                ]
            else:
                continue
            for t in targets:
                if t in files and t != module and _unit(t) == _unit(module):
                    edges.setdefault((module, t), f"{f.relative_to(SRC.parent)}:{node.lineno}")
    return edges


KNOWN_CIRCLES: list[set[str]] = []


def test_no_import_circles_between_the_modules_of_a_package():
    """Each package's modules import one way too, so each can be read (and moved) alone."""
    edges = _module_edges()
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    reachable = {m: reach(m) for m in graph}
    circles = {
        frozenset({m} | {n for n in reachable[m] if m in reachable.get(n, ())})
        for m in graph
        if m in reachable[m]
    }
    found = [
        " <-> ".join(sorted(c))
        + "".join(
            f"\n    {where}: {a} imports {b}"
            for (a, b), where in sorted(edges.items())
            if a in c and b in c
        )
        for c in sorted(circles, key=sorted)
        if c not in KNOWN_CIRCLES
    ]
    assert not found, "import circles inside a package:\n" + "\n".join(found)


def test_every_package_has_a_layer():
    units = {
        _unit(".".join(p.relative_to(SRC.parent).with_suffix("").parts)) for p in SRC.rglob("*.py")
    }
    units.discard("__init__")
    missing = sorted(units - set(RANK))
    assert not missing, f"add these to LAYERS (and docs/design/architecture.md): {missing}"


def test_imports_only_go_down_the_layers():
    upward = [
        f"{where}: {a} (layer {RANK[a]}) imports {b} (layer {RANK[b]})"
        for (a, b), where in sorted(_edges().items())
        if RANK[b] >= RANK[a]
    ]
    assert not upward, "\n".join(upward)


def test_the_architecture_doc_draws_the_same_layers():
    doc = (SRC.parents[1] / "docs" / "design" / "architecture.md").read_text("utf-8")
    for i, layer in enumerate(LAYERS):
        line = next((ln for ln in doc.splitlines() if ln.startswith(f"| {i} |")), "")
        assert all(f"`{u}`" in line for u in layer), f"layer {i} {layer} not in the doc: {line!r}"


def _documented_surface() -> list[str]:
    doc = (SRC.parents[1] / "docs" / "design" / "architecture.md").read_text("utf-8")
    section = doc.split("## The public surface\n", 1)[1].split("\n## ", 1)[0]
    return sorted(set(re.findall(r"`([A-Za-z]\w*)`", section)))


def test_the_top_level_surface_is_small_and_exact():
    """As httpx's exported-members test: ``__all__`` is what the package provides, sorted.

    What it provides is read from its imports (the names type checkers see) and must be the
    lazy loader's table; the list itself is held to the architecture doc, so a surface that
    changes by accident fails here.
    """
    import mnemometer

    provided = {
        alias.name: node.module
        for node in ast.walk(ast.parse((SRC / "__init__.py").read_text("utf-8")))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mnemometer")
        for alias in node.names
    }
    assert mnemometer.__all__ == sorted(provided) == _documented_surface()
    assert mnemometer._WHERE == provided  # each loads from where type checkers see it
    for name in mnemometer.__all__:
        assert getattr(mnemometer, name) is not None
    with pytest.raises(AttributeError):
        mnemometer.not_a_thing  # noqa: B018


@pytest.mark.parametrize(
    "package",
    [
        "agents",
        "comparison",
        "datasets",
        "llm",
        "log",
        "protocols",
        "report",
        "runner",
        "sandbox",
        "scoring",
        "stores",
        "suites",
        "suites.items",
        "suites.tasks",
        "testing",
        "workflows",
    ],
)
def test_every_public_package_declares_what_it_exports(package: str):
    mod = importlib.import_module(f"mnemometer.{package}")
    assert mod.__all__, f"mnemometer.{package} has no __all__"
    for name in mod.__all__:
        assert hasattr(mod, name), f"mnemometer.{package}.__all__ names missing {name!r}"
        assert not name.startswith("_")


def test_docs_never_send_users_to_private_modules():
    private = re.compile(r"mnemometer(?:\.[a-z_]+)*\._[a-z]\w*")
    found = [
        f"{p.relative_to(SRC.parents[1])}:{i}: {m.group(0)}"
        for p in DOCS
        for i, line in enumerate(p.read_text("utf-8").splitlines(), 1)
        for m in private.finditer(line)
    ]
    assert not found, "\n".join(found)


# The run's LLM endpoint is resolved once, where a run starts, and handed down (ctx.llm,
# llm=): a suite or store that looked again would ask an endpoint the run never recorded.
_LLM_LOOKUP = re.compile(
    r"\b(?:resolve_settings|find_settings)\b|MNEMOMETER_(?:LLM|EMBEDDING)"
    r"|(?:environ\.get|getenv|environ\[)\(?\s*(?:ENV_PREFIX|[\"'][A-Z0-9_]*"
    r"(?:LLM|OPENAI|EMBEDDING|BENCH_DEFAULT))"
)


def test_suites_and_stores_take_the_runs_llm_endpoint():
    found = [
        f"{f.relative_to(SRC.parent)}:{i}: {line.strip()}"
        for package in ("suites", "stores")
        for f in sorted((SRC / package).rglob("*.py"))
        for i, line in enumerate(f.read_text("utf-8").splitlines(), 1)
        if _LLM_LOOKUP.search(line)
    ]
    assert not found, (
        "take the run's endpoint (RunContext.llm, the llm= a store is built with) through "
        "mnemometer.llm.require_settings, never from the environment:\n" + "\n".join(found)
    )
