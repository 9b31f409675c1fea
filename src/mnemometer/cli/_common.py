"""Helpers shared by the CLI commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

import click

from mnemometer.errors import MnemometerError

T = TypeVar("T")


def parse_options(pairs: tuple[str, ...], flag: str) -> dict[str, Any]:
    """Parse repeated ``key=value`` options; values are JSON when they parse as JSON."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise MnemometerError(f"{flag} expects key=value, got {pair!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def echo_err(message: str) -> None:
    """Print one line to stderr."""
    click.echo(message, err=True)


class FormatChoice(click.Choice):
    """``--format`` choices read from the renderer registry when first needed.

    Every format registered for ``kind`` (``text``, ``md``, ``json``, ``html``, ...) is a
    choice, so a new renderer appears in every command at once; the registry is imported
    only when the option is used or shown.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        super().__init__([])

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        """The registered formats of the kind."""
        from mnemometer.report import formats

        return tuple(formats(self.kind))

    @choices.setter
    def choices(self, value: Any) -> None:
        pass  # fixed by the registry


def format_option(kind: str, help: str, default: str | None = "text") -> Any:
    """``--format`` (as ``fmt``) over the registered formats of ``kind``.

    A ``None`` default leaves the choice to the command (from ``--out``'s suffix).
    """
    return click.option(
        "--format",
        "fmt",
        type=FormatChoice(kind),
        default=default,
        show_default=default is not None,
        help=help,
    )


def format_of(path: Path | None, kind: str) -> str | None:
    """The format a file's suffix names (``r.html``, ``r.htm`` → ``html``), if ``kind`` has it.

    ``.FORMAT`` names each format; other suffixes are declared where renderers register.
    """
    from mnemometer.report._registry import format_of

    return None if path is None else format_of(path, kind)


def write_output(path: Path, text: str, what: str) -> None:
    """Write a rendered report to ``path`` (parents made) and say where on stderr.

    Raises:
        MnemometerError: it cannot be written (a parent is a file, ``path`` a directory).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text if text.endswith("\n") else text + "\n", "utf-8")
    except OSError as e:
        raise MnemometerError(f"{path}: cannot write the {what}: {e.strerror}") from None
    size = path.stat().st_size
    shown = f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.0f} kB"
    echo_err(f"{what}: {path} ({shown})")


def path_option(*decls: str, help: str, **kw: Any) -> Any:
    """An option naming a file or directory, passed to the command as a :class:`~pathlib.Path`."""
    return click.option(*decls, type=click.Path(path_type=Path), help=help, **kw)


def out_option(help: str, dest: str = "out", **kw: Any) -> Any:
    """``--out``/``-o`` (as ``dest``): the file or directory a command writes."""
    return path_option("--out", "-o", dest, help=help, **kw)


def conditions_options(condition_help: str, file_help: str) -> Any:
    """``--condition NAME`` (repeatable, as ``conditions``) and ``--conditions FILE``.

    The file (as ``conditions_file``) maps condition names to systems; read both with
    :mod:`mnemometer.runner._conditions`.
    """
    condition = click.option(
        "--condition", "conditions", multiple=True, metavar="NAME", help=condition_help
    )
    table = path_option("--conditions", "conditions_file", help=file_help)
    return lambda f: condition(table(f))


def default_of(config: type, name: str) -> Any:
    """The default of field ``name`` of a dataclass ``config``: CLI defaults are never copies."""
    import dataclasses

    for f in dataclasses.fields(config):
        if f.name == name:
            return f.default
    raise AttributeError(f"{config.__name__} has no field {name!r}")


def config_option(config: type, *decls: str, help: str, **kw: Any) -> Any:
    """An option whose default, shown in the help, is ``config``'s field of the same name.

    ``--max-tokens`` defaults to ``config.max_tokens`` (``--fsync/--no-fsync`` to
    ``config.fsync``); a tuple default is comma-joined.
    """
    default = default_of(config, decls[0].split("/")[0].lstrip("-").replace("-", "_"))
    if isinstance(default, tuple):
        default = ",".join(default)
    return click.option(*decls, default=default, show_default=True, help=help, **kw)


def config_from(config: type[T], kw: dict[str, Any], **given: Any) -> T:
    """``config`` from the options named after its fields: :func:`config_option`'s read-back.

    ``given`` sets the fields whose option says it another way (``classify=not no_classify``);
    options that are not fields (``--out``, the LLM options) are left to the command.
    """
    import dataclasses

    names = {f.name for f in dataclasses.fields(config)}  # type: ignore[arg-type]
    return config(**{**{k: v for k, v in kw.items() if k in names}, **given})


def resamples_option(f: Any) -> Any:
    """``--resamples N``: bootstrap resamples of a comparison (default: the library's)."""
    from mnemometer.stats import DEFAULT_RESAMPLES

    return click.option(
        "--resamples",
        type=int,
        default=DEFAULT_RESAMPLES,
        show_default=True,
        help="Bootstrap resamples.",
    )(f)


store_options = click.option(
    "--store-option",
    "-S",
    "store_opts",
    multiple=True,
    metavar="KEY=VALUE",
    help="Option for the store; repeatable (values parse as JSON when they can).",
)
"""``-S KEY=VALUE`` (repeatable) as ``store_opts``; read with ``parse_options(..., "--store-option")``."""


_LLM_OPTIONS = [
    click.option(
        "--llm-base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1."
    ),
    click.option("--llm-model", help="Model name at that endpoint."),
    click.option("--llm-api-key", help="API key, if the endpoint wants one (never written down)."),
    click.option(
        "--llm-config",
        type=click.Path(path_type=Path),
        help="TOML file with an [llm] table (base_url, model, api_key, ...).",
    ),
    click.option(
        "--llm-cache",
        type=click.Path(path_type=Path),
        help="Directory for the LLM disk cache (keyed on the full request).",
    ),
    click.option(
        "--llm-timeout",
        type=float,
        help="Seconds allowed per LLM request (default 60; a busy local model may need more).",
    ),
]
LLM_KEYS = ("llm_base_url", "llm_model", "llm_api_key", "llm_config", "llm_cache", "llm_timeout")
"""The keyword arguments :func:`llm_options` adds."""


def llm_options(f: Any) -> Any:
    """Add the LLM endpoint options (every one also from MNEMOMETER_LLM_* in the environment)."""
    for opt in reversed(_LLM_OPTIONS):
        f = opt(f)
    return f


def llm_settings(kw: dict[str, Any], *, required: bool = True) -> Any:
    """:class:`~mnemometer.llm.LLMSettings` from the options, the environment and a config file.

    With ``required=False``, ``None`` when no ``--llm-*`` flag is given: a run then resolves
    its endpoint itself (``RunSettings.llm``), from what it recorded or the environment.

    Raises:
        LLMError: no endpoint anywhere (the message names the flags to pass).
    """
    if not required and not any(kw.get(k) for k in LLM_KEYS):
        return None  # nor imported: a run that asks no model builds no LLM settings model
    from mnemometer.llm._settings import resolve_settings

    return resolve_settings(
        kw.get("llm_base_url"),
        kw.get("llm_model"),
        kw.get("llm_api_key"),
        config_file=kw.get("llm_config"),
        cache_dir=kw.get("llm_cache"),
        timeout=kw.get("llm_timeout"),
    )


def executor_options(fn: Any) -> Any:
    """``--executor`` and ``--ray-address``, shared by ``run`` and ``sweep``."""
    fn = click.option(
        "--ray-address",
        metavar="ADDR",
        help="Ray cluster to use (HOST:PORT from `ray start --head`); default with "
        "--executor ray: a local cluster started for this command.",
    )(fn)
    return click.option(
        "--executor",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="Where work runs: threads here, or a Ray cluster (pip install "
        "'mnemometer[distributed]').",
    )(fn)


def run_options(fn: Any) -> Any:
    """``--concurrency``, ``--timeout``, ``--seed``, ``--fsync``, ``--prices``, the executor's.

    Shared by ``run`` and ``sweep`` (whose every run takes them); the defaults are
    :class:`~mnemometer.runner.RunSettings`'. Read back with :func:`run_settings`.
    """
    from mnemometer.runner._setup import RunSettings

    options = [
        config_option(
            RunSettings,
            "--concurrency",
            "-c",
            type=int,
            help="Items in flight at once; also conversations whose stores are filled at once.",
        ),
        config_option(
            RunSettings,
            "--timeout",
            type=float,
            help="Seconds allowed per call of the system under test (a scenario gets this per "
            "turn; 0 for no limit).",
        ),
        config_option(RunSettings, "--seed", type=int, help="Seed for anything random (recorded)."),
        config_option(
            RunSettings,
            "--fsync/--no-fsync",
            help="fsync the run log after every item (survives power loss, not only kills).",
        ),
        click.option(
            "--prices",
            type=click.Path(exists=True, dir_okay=False),
            help="Price file (TOML or JSON: [models.NAME] input_per_million, "
            "output_per_million) over LiteLLM's bundled price map; pinned in the header.",
        ),
        executor_options,
    ]
    for opt in reversed(options):
        fn = opt(fn)
    return fn


def run_settings(kw: dict[str, Any], *, llm: Any, progress: Any = None) -> Any:
    """The validated :class:`~mnemometer.runner.RunSettings` of :func:`run_options`.

    Raises:
        MnemometerError: a concurrency below 1, or ``--ray-address`` without ``--executor ray``.
    """
    from mnemometer.runner._setup import RunSettings

    return RunSettings(
        concurrency=kw["concurrency"],
        timeout=kw["timeout"],
        seed=kw["seed"],
        fsync=kw["fsync"],
        llm=llm,
        executor=make_executor(kw),
        progress=progress,
        prices=kw.get("prices"),
    ).checked()


def make_executor(kw: dict[str, Any]) -> Any:
    """The executor ``--executor`` / ``--ray-address`` ask for (``None``: local threads).

    Raises:
        MnemometerError: ``--ray-address`` without ``--executor ray``.
    """
    if kw.get("executor", "local") == "local":
        if kw.get("ray_address"):
            raise MnemometerError("--ray-address needs --executor ray")
        return None
    from mnemometer.runner import RayExecutor

    return RayExecutor(kw.get("ray_address"))
