"""``mnemometer list stores|suites|agents|scorers|datasets|readers|protocols``."""

from __future__ import annotations

import json
import warnings

import click

KINDS = ["stores", "suites", "agents", "scorers", "datasets", "readers", "protocols"]


@click.command("list")
@click.argument("what", type=click.Choice(KINDS))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text, or JSON (a list of objects).",
)
def list_cmd(what: str, fmt: str) -> None:
    """List registered stores, suites, agents, scorers, readers, protocols, or the datasets."""
    rows = _protocols() if what == "protocols" else _rows(what)
    if fmt == "json":
        click.echo(json.dumps(rows, indent=1, ensure_ascii=False))
        return
    if what == "protocols":
        _show_protocols(rows)
        return
    width = {"readers": 14}.get(what, 12)
    for row in rows:
        line = row["name"] if what == "datasets" else f"{row['name']:<{width}} {row['description']}"
        click.echo(line)


def _rows(what: str) -> list[dict[str, object]]:
    from mnemometer._registry import SCORERS, STORES, SUITES
    from mnemometer.datasets import builtin_datasets

    if what == "datasets":
        return [{"name": name} for name in builtin_datasets()]
    if what == "readers":
        return _readers()
    reg = {"stores": STORES, "suites": SUITES, "scorers": SCORERS}.get(what)
    if reg is None:
        from mnemometer._registry import AGENTS as reg
    return [{"name": name, "description": reg.describe(name)} for name in reg.names()]


def _readers() -> list[dict[str, object]]:
    """Every dataset format, in the order sniffing tries them; a broken one is a warning."""
    from mnemometer.datasets import READERS, get_reader
    from mnemometer.errors import DatasetError

    rows: list[tuple[tuple[float, str], dict[str, object]]] = []
    for name in READERS.names():
        try:
            r = get_reader(name)
        except DatasetError as e:
            warnings.warn(str(e), stacklevel=2)
            rows.append(((float("inf"), name), {"name": name, "description": f"(broken: {e})"}))
            continue
        rows.append(((r.order, name), {"name": name, "description": r.description}))
    return [row for _, row in sorted(rows, key=lambda x: x[0])]


def _protocols() -> list[dict[str, object]]:
    """Each protocol: what it is, its hash, what it fixes and where it comes from."""
    from mnemometer.protocols import protocols

    out: list[dict[str, object]] = []
    for p in protocols():
        out.append(
            {
                "name": p.name,
                "description": p.title,
                "sha256": p.sha256,
                "benchmarks": list(p.benchmarks),
                "top_k": p.top_k,
                "judges": list(p.judges),
                "judge_model": p.judge_model,
                "prompts": "shipped" if p.quoted else "read from your copy",
                "sources": [{**s.pinned(), "quoted": s.quoted, "what": s.what} for s in p.sources],
            }
        )
    return out


def _show_protocols(rows: list[dict[str, object]]) -> None:
    for row in rows:
        click.echo(f"{row['name']:<16} {row['description']}")
        sources = row["sources"] or [
            {"repository": "mnemometer", "path": "(its own)", "commit": "", "licence": "MIT"}
        ]
        for s in sources:  # type: ignore[union-attr]
            at = f" @{s['commit'][:7]}" if s["commit"] else ""
            click.echo(f"{'':<16}   {s['repository']} {s['path']}{at} ({s['licence']})")
        benchmarks = ", ".join(row["benchmarks"]) or "every benchmark"  # type: ignore[arg-type]
        click.echo(
            f"{'':<16}   prompts {row['prompts']}; for {benchmarks}; sha256 {str(row['sha256'])[:12]}"
        )
