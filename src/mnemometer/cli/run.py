"""``mnemometer run SUITE``: one run, or an experiment (conditions x repeats).

Wraps :func:`mnemometer.run`, :func:`mnemometer.runner.run_experiment` and
:func:`mnemometer.workflows.run_suite`. Suite-specific flags (``--top-k``, ``--noise``,
``--allow-shell``, ...) are declared by the suites themselves (:class:`mnemometer.suites.Flag`)
and added to the command on demand (``cli/_suite_flags.py``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from mnemometer.cli._common import (
    conditions_options,
    echo_err,
    llm_options,
    llm_settings,
    out_option,
    parse_options,
    path_option,
    run_options,
    run_settings,
    store_options,
)
from mnemometer.cli._progress import PhaseProgress
from mnemometer.cli._suite_flags import RunCommand, suite_flags
from mnemometer.errors import MnemometerError
from mnemometer.runner._run import RunSettings


@click.command("run", cls=RunCommand)
@click.argument("suite", required=False, default="retrieval")
@click.option(
    "--dataset", "-d", help="Dataset file or built-in name (see `mnemometer list datasets`)."
)
@click.option("--store", "-s", help="Store name (see `mnemometer list stores`).")
@store_options
@click.option("--agent", "-a", help="Agent name (rag, mem0, letta, http) for conversation suites.")
@click.option(
    "--agent-option",
    "-A",
    "agent_opts",
    multiple=True,
    metavar="KEY=VALUE",
    help="Option for the agent; repeatable.",
)
@path_option("--config", "agent_config", help="Agent config file (TOML), e.g. for --agent http.")
@click.option("--letta-url", help="Letta server URL for --agent letta.")
@conditions_options(
    "Run under this condition (repeatable): no-memory, lexical, semantic, graph, "
    "hybrid, full-memory, or one from --conditions. Makes the run an experiment.",
    "TOML file mapping condition names to stores or agents.",
)
@click.option(
    "--repeat",
    type=int,
    help="Runs per condition (an experiment; default 1, or a suite directory's default_repeats).",
)
@click.option(
    "--suite-option",
    "-O",
    "suite_opts",
    multiple=True,
    metavar="KEY=VALUE",
    help="Option for the suite; repeatable.",
)
@llm_options
@out_option("Run (or experiment) directory to create (default under runs/).")
@run_options
@click.option("--limit", type=int, help="Run only the first N items (a quick run; recorded).")
@click.option(
    "--sample",
    type=int,
    help="Run a random sample of N items drawn with --seed (recorded; compared runs must agree).",
)
@path_option("--resume", help="Continue an interrupted run or experiment directory.")
@click.option(
    "--allow-llm-change",
    is_flag=True,
    help="With --resume: let the resume ask another LLM than the run recorded (the run's "
    "notes then say both were asked).",
)
@click.option(
    "--format",
    "fmt",
    default="text",
    show_default=True,
    help="Report printed when the run ends: text, md, json or none.",
)
def run_cmd(suite: str, **kw: Any) -> None:
    """Run SUITE (default: retrieval) and write a run directory.

    SUITE is a registered suite (retrieval, memtest, scenarios, items) or a suite directory
    (suite.toml + items.jsonl). Every finished item is written at once; a run killed at any
    moment continues with --resume DIR. With --condition or --repeat the run is an
    experiment: one run directory per condition and repeat, sharing a run group, ready for
    `mnemometer compare`. Exit code 0: all items ran; 1: some items failed (recorded and
    counted) or memories failed to store; 2: bad input; 75: an endpoint (the LLM, a memory
    service) went down mid-run: the items left were not attempted, and --resume DIR runs
    them once it is back.

    \b
    Examples:
      mnemometer run retrieval --dataset demo-en --store bm25 --out runs/demo
      mnemometer run scenarios --agent rag --store bm25 --llm-base-url URL --llm-model M
      mnemometer run examples/suites/team-memory --condition no-memory --condition hybrid
      mnemometer run retrieval -d demo-en -s bm25 --executor ray --ray-address 127.0.0.1:6379
    """  # noqa: D301 (click needs a real backspace before an unwrapped paragraph)
    with PhaseProgress(_label(suite, kw)) as progress:
        settings = run_settings(kw, llm=_llm(kw), progress=progress)
        try:
            show = _run(suite, kw, settings)
        finally:
            if settings.executor is not None:
                settings.executor.close()
    show()  # once the bars are gone: nothing redraws over the report or the run directory


def _label(suite: str, kw: dict[str, Any]) -> str:
    """What the progress lines name: the suite, the resumed run's own when resuming."""
    resumed = kw.get("resume")
    if resumed is None:
        return Path(suite).name if Path(suite).exists() else suite  # a suite directory
    from mnemometer._jsonl import json_document, read_file
    from mnemometer.log._schema import HEADER_FILE

    path = Path(resumed) / HEADER_FILE
    try:  # a resume's errors are reported by the resume itself; a FIFO is never opened
        doc = json_document(read_file(path, MnemometerError, "run header"), path, MnemometerError)
        return str(doc.get("suite") or suite)
    except (MnemometerError, AttributeError):
        return suite


def _run(suite: str, kw: dict[str, Any], settings: RunSettings) -> Callable[[], None]:
    """Run (or resume) what was asked; returns what prints its outcome."""
    if kw["resume"] is not None:
        from mnemometer.runner import is_experiment

        _refuse_with_resume(kw)
        if is_experiment(kw["resume"]):
            done = _resume_experiment(kw, settings)
            return lambda: _experiment_out(done, kw)
        resumed = _resume(kw, settings)
        return lambda: _single_out(resumed, kw)
    if kw["allow_llm_change"]:
        raise MnemometerError("--allow-llm-change applies with --resume only")
    name, options = _suite_and_options(suite, kw)
    if name == "items":
        exp = _suite_dir(options, kw, settings)
        return lambda: _experiment_out(exp, kw)
    if kw["conditions"] or (kw["repeat"] or 1) > 1:
        exp = _experiment(name, options, kw, settings)
        return lambda: _experiment_out(exp, kw)
    from mnemometer.runner import run

    result = run(
        name,
        _system(kw),
        dataset=kw["dataset"],
        suite_options=options,
        out=kw["out"],
        settings=settings,
        limit=kw["limit"],
        sample=kw["sample"],
    )
    return lambda: _single_out(result, kw)


def _llm(kw: dict[str, Any]) -> Any:
    """LLM settings when a flag names one or an agent needs one.

    ``None`` leaves it to the run, which asks the environment (a resume first asks what
    the run recorded): see :func:`mnemometer.runner.run`.
    """
    return llm_settings(kw, required=kw.get("agent") in ("rag", "mem0"))


def _suite_and_options(suite: str, kw: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The suite's registered name and its options from -O and the suite's own flags."""
    options = parse_options(kw["suite_opts"], "--suite-option")
    name = "items" if _is_suite_path(suite) else suite
    if name == "items":
        options["suite_dir"] = str(suite)
    # Without the flags declared, none was given (RunCommand adds them when one may be).
    declared = suite_flags() if run_cmd.suite_flags_loaded else {}
    for key, (flag, users) in declared.items():
        value = kw.get(key)
        if value is None or value is False or value == ():
            continue
        if name not in users:
            raise MnemometerError(
                f"{flag.flag} applies to {' and '.join(users)}"
                + (" (suite directories)" if users == ["items"] else "")
                + f"; {suite!r} is not one"
            )
        options[flag.option] = list(value) if flag.multiple else value
    _user_only(name, options)
    return name, options


def _user_only(name: str, options: dict[str, Any]) -> None:
    """Options only the user gives (consent to run code, the sandbox): from this command line.

    ``-O`` read from ``MNEMOMETER_RUN_SUITE_OPTS`` (a ``.env`` may set it) does not give
    them: they are dropped with a warning. The suite records where each came from.
    """
    from click.core import ParameterSource

    from mnemometer._registry import SUITES
    from mnemometer.cli._suite_flags import ignored_variable
    from mnemometer.suites import user_only_options

    try:
        guarded = user_only_options(SUITES.load(name))
    except MnemometerError:
        return  # an unknown suite: the run names it
    if not guarded:
        return
    ctx = click.get_current_context()
    if ctx.get_parameter_source("suite_opts") is ParameterSource.ENVIRONMENT:
        for key in guarded.keys() & options.keys():
            ignored_variable(ctx, "suite_opts", f"{guarded[key]} (-O {key}=...)")
            del options[key]
    options["origins"] = {k: "command line" for k in guarded if k in options}


def _is_suite_path(suite: str) -> bool:
    """Whether SUITE names a suite directory or manifest.

    The items suite is imported only for a name that is a file or directory here (a
    registered name like ``retrieval`` is not one).
    """
    if not Path(suite).exists():
        return False
    from mnemometer.suites.items import is_suite_path

    return is_suite_path(suite)


def _system(kw: dict[str, Any]) -> Any:
    """The spec of ``--store`` / ``--agent`` (and their options)."""
    from mnemometer.systems import SystemSpec

    store_opts = parse_options(kw["store_opts"], "--store-option")
    agent = kw["agent"]
    if agent is None:
        used = [
            f
            for f, k in (
                ("--letta-url", "letta_url"),
                ("--config", "agent_config"),
                ("--agent-option", "agent_opts"),
            )
            if kw.get(k)
        ]
        if used:
            raise MnemometerError(f"{used[0]} needs --agent")
        if kw["store"] is None:
            raise MnemometerError(
                "a run needs --store NAME (or --agent NAME for conversation "
                "suites, --condition NAME, or --resume RUN_DIR)"
            )
        return SystemSpec.store(kw["store"], **store_opts)
    options = parse_options(kw["agent_opts"], "--agent-option")
    if kw.get("letta_url"):
        options["base_url"] = kw["letta_url"]
    if kw.get("agent_config"):
        options["config"] = str(kw["agent_config"])
    return SystemSpec.agent(agent, **options).options_with_store(kw["store"], store_opts)


def _conditions(kw: dict[str, Any], names: list[str], settings: RunSettings) -> list[Any]:
    from mnemometer.runner._conditions import load_conditions, resolve, system_for
    from mnemometer.runner._setup import with_llm

    table = load_conditions(kw["conditions_file"])
    llm = with_llm(settings).llm  # a condition that needs an LLM looks where the runs will
    return [system_for(n, resolve(n, table), llm) for n in names]


def _experiment(
    name: str, options: dict[str, Any], kw: dict[str, Any], settings: RunSettings
) -> Any:
    from mnemometer.runner import Experiment, run_experiment

    systems = (
        _conditions(kw, list(kw["conditions"]), settings) if kw["conditions"] else [_system(kw)]
    )
    dataset = str(kw["dataset"]) if kw["dataset"] is not None else None
    exp = Experiment(name, systems, kw["repeat"] or 1, dataset, options, kw["limit"], kw["sample"])
    return run_experiment(exp, kw["out"], settings=settings, on_run=_on_run(kw))


def _suite_dir(options: dict[str, Any], kw: dict[str, Any], settings: RunSettings) -> Any:
    from mnemometer.workflows._suite_dir import run_suite

    for flag, key in (("--store", "store"), ("--dataset", "dataset"), ("--agent", "agent")):
        if kw.get(key):
            raise MnemometerError(
                f"{flag} does not apply to a suite directory: conditions choose the system "
                "(--condition NAME), the suite seeds its own memories"
            )
    suite_dir = options.pop("suite_dir")
    return run_suite(
        suite_dir,
        conditions=list(kw["conditions"]) or None,
        repeat=kw["repeat"],
        profile=options.pop("profile", None),
        out=kw["out"],
        memories=options.pop("memories", None),
        conditions_file=kw["conditions_file"],
        suite_options=options,
        settings=settings,
        on_run=_on_run(kw),
        limit=kw["limit"],
        sample=kw["sample"],
    )


def _refuse_with_resume(kw: dict[str, Any]) -> None:
    given = [
        f"--{k.replace('_', '-')}"
        for k in ("dataset", "store", "agent", "out", "limit", "sample")
        if kw.get(k)
    ]
    if kw["conditions"]:
        given.append("--condition")
    if given:
        raise MnemometerError(
            f"{given[0]} does not apply with --resume: the run's directory holds its configuration"
        )


def _resume(kw: dict[str, Any], settings: RunSettings) -> Any:
    from mnemometer.runner import resume

    return resume(
        kw["resume"],
        settings=settings,
        allow_llm_change=kw["allow_llm_change"],
        suite_options=_consent(kw),
    )


def _resume_experiment(kw: dict[str, Any], settings: RunSettings) -> Any:
    from mnemometer.runner import resume_experiment

    return resume_experiment(
        kw["resume"], settings=settings, on_run=_on_run(kw), suite_options=_consent(kw)
    )


def _consent(kw: dict[str, Any]) -> dict[str, Any]:
    """What a resume takes from this command line: consent and the sandbox, nothing else.

    The run directory holds the rest of its configuration; its own record of
    ``--allow-shell`` and the sandbox flags is not the user's word (anyone may have made
    it), so they are given again here, and recorded as from the command line.
    """
    declared = suite_flags() if run_cmd.suite_flags_loaded else {}
    given: dict[str, Any] = {}
    for key, (flag, _) in declared.items():
        value = kw.get(key)
        if value is None or value is False or value == ():
            continue
        if not flag.user_only:
            raise MnemometerError(
                f"{flag.flag} does not apply with --resume: the run's directory holds its "
                "configuration"
            )
        given[flag.option] = list(value) if flag.multiple else value
    return {**given, "origins": dict.fromkeys(given, "command line")}


def _row(result: Any) -> dict[str, Any]:
    h, counts = result.header, result.summary.counts
    return {
        "condition": h.system.condition or h.system.name,
        "repeat": h.repeat,
        "system": h.system.name,
        "items": counts.get("items", 0),
        "succeeded": counts.get("succeeded", 0),
        "tokens": counts.get("tokens", 0),
        "path": str(result.path),
        "run_group": h.run_group,
        "headline": result.summary.headline.model_dump(mode="json")
        if result.summary.headline is not None
        else None,
    }


def _on_run(kw: dict[str, Any]) -> Any:
    def on_run(result: Any) -> None:
        if kw["fmt"] == "json":
            return
        r = _row(result)
        fell = any("fell back" in n for n in result.header.notes)
        h = result.summary.headline
        if h is not None and h.value is not None:  # what the run is judged by
            score = f"{h.label} {h.value:.3f} (n={h.n})"
        else:
            rate = r["succeeded"] / r["items"] if r["items"] else 0.0
            score = f"{r['succeeded']}/{r['items']} succeeded ({100 * rate:.1f}%)"
        echo_err(
            f"{r['condition']} r{r['repeat']} ({r['system']}{', a fallback' if fell else ''}): "
            f"{score}, {r['tokens']} tokens -> {r['path']}"
        )
        for note in result.summary.notes:  # an agent that never ran must not look like 0/4
            if note.startswith("the agent failed"):
                echo_err(f"  note: {note}")

    return on_run


def _single_out(result: Any, kw: dict[str, Any]) -> None:
    from mnemometer.report import render
    from mnemometer.report._run import RunView

    if kw["fmt"] != "none":
        click.echo(render(RunView(result.path, result.header, result.summary), kw["fmt"]))
    echo_err(f"run directory: {result.path}")
    _stopped([result])
    if result.failed_memories:
        echo_err(f"{result.failed_memories} memories failed to store (noted in the summary)")
    if result.failed_items:
        echo_err(f"{result.failed_items} items failed (recorded in the run log)")
    if result.failed_items or result.failed_memories:
        sys.exit(1)


def _experiment_out(result: Any, kw: dict[str, Any]) -> None:
    rows = [_row(r) for r in result.runs]
    if kw["fmt"] == "json":
        doc = {"run_group": result.run_group, "out": str(result.out), "runs": rows}
        click.echo(json.dumps(doc, indent=1))
    elif kw["fmt"] != "none":
        click.echo(f"run group {result.run_group}: {len(rows)} runs in {result.out}")
        conds = list(dict.fromkeys(r["condition"] for r in rows))
        if len(conds) > 1:
            click.echo(
                f"next: mnemometer compare {result.out} --baseline {conds[0]} "
                f"--candidate {conds[-1]} -o {result.out}/comparison.json"
            )
    _stopped(result.runs)
    failed = sum(r.failed_items for r in result.runs)
    lost = sum(r.failed_memories for r in result.runs)
    if lost:
        echo_err(f"{lost} memories failed to store across the runs (noted in their summaries)")
    if failed:
        echo_err(f"{failed} items failed across the runs (recorded in their run logs)")
    if failed or lost:
        sys.exit(1)


def _stopped(runs: list[Any]) -> None:
    """Exit 75 with one line when a run stopped because an endpoint went down."""
    from mnemometer.runner._stop import ENDPOINT_DOWN_EXIT

    reasons = [r.stopped for r in runs if r.stopped]
    if reasons:
        more = f" (and {len(reasons) - 1} more runs stopped)" if len(reasons) > 1 else ""
        echo_err(f"stopped: {reasons[0]}{more}")
        sys.exit(ENDPOINT_DOWN_EXIT)
