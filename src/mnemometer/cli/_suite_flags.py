"""The suites' own ``run`` flags (``--top-k``, ``--noise``, ``--allow-shell``, ...), declared on demand.

A suite declares its flags (:class:`mnemometer.suites.Flag`); ``run`` turns each into a
click option, but only when the command line or environment may name one, so a plain run
imports no suite it does not use.
"""

from __future__ import annotations

import logging
import os
from functools import cache
from pathlib import Path
from typing import Any

import click


@cache
def suite_flags() -> dict[str, tuple[Any, list[str]]]:
    """Every registered suite's flags: ``option key -> (Flag, [suite names])``."""
    from mnemometer._registry import SUITES

    out: dict[str, tuple[Any, list[str]]] = {}
    for name, cls in SUITES.loadable():  # a broken plug-in is a warning, not a dead CLI
        for f in getattr(cls, "flags", ()):
            key = f.flag.lstrip("-").replace("-", "_")
            flag, users = out.setdefault(key, (f, []))
            users.append(name)
    return out


def _click_option(f: Any) -> Any:
    key = f.flag.lstrip("-").replace("-", "_")
    # A user-only flag (consent to run code, the sandbox) never comes from MNEMOMETER_RUN_*:
    # the .env of a suite directory would grant it to itself.
    env = {"allow_from_autoenv": not f.user_only}
    if f.type == "bool":
        return click.option(f.flag, key, is_flag=True, default=None, help=f.help, **env)
    kinds: dict[str, Any] = {
        "int": int,
        "float": float,
        "str": str,
        "path": click.Path(path_type=Path),
    }
    kind = click.Choice(f.type[7:].split(",")) if f.type.startswith("choice:") else kinds[f.type]
    return click.option(f.flag, key, type=kind, multiple=f.multiple, help=f.help, **env)


class RunCommand(click.Command):
    """``run``: its suites' own flags (``--noise``, ``--allow-shell``, ...) load on demand.

    Knowing them means importing every registered suite (scenario formats, typed items,
    their pydantic models): about 50 ms a run does not need when its command line and
    environment name none of them. They are added before parsing whenever an argument
    is an option that is not one of ``run``'s own (``--help`` included), or a
    ``MNEMOMETER_RUN_*`` variable is not one of its own, so parsing, help and errors are
    exactly what they would be with every flag declared up front.
    """

    suite_flags_loaded = False

    def add_suite_flags(self) -> None:
        """Declare every registered suite's flags (once), after ``run``'s own options."""
        if self.suite_flags_loaded:
            return
        self.suite_flags_loaded = True
        self.params.extend(_click_param(f) for f, _ in suite_flags().values())

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Add the suite flags when the arguments or environment may use one, then parse.

        A ``MNEMOMETER_RUN_*`` variable naming a user-only flag is ignored with a warning.
        """
        if self._may_name_suite_flag(ctx, args):
            self.add_suite_flags()
            for f, _ in suite_flags().values():
                if f.user_only:
                    ignored_variable(ctx, f.flag.lstrip("-").replace("-", "_"), f.flag)
        return super().parse_args(ctx, args)

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        """Every parameter; for help and completion, the suite flags too."""
        if ctx.resilient_parsing:  # shell completion lists every option
            self.add_suite_flags()
        return super().get_params(ctx)

    def _may_name_suite_flag(self, ctx: click.Context, args: list[str]) -> bool:
        own = {o for p in self.params for o in (*p.opts, *p.secondary_opts)}
        own -= set(ctx.help_option_names)  # help lists the suite flags: load them
        for arg in args:
            if arg == "--":
                break
            if arg.startswith("-") and arg.split("=", 1)[0] not in own:
                return True
        prefix = f"{ctx.auto_envvar_prefix}_" if ctx.auto_envvar_prefix else None
        if prefix:
            names = {f"{prefix}{p.name.upper()}" for p in self.params if p.name}
            if any(k.startswith(prefix) and k not in names for k in os.environ):
                return True
        return False


def ignored_variable(ctx: click.Context, key: str, flag: str) -> None:
    """Warn, naming it, when a variable tries to set the user-only option ``key``."""
    from mnemometer.envfile import where_set

    if ctx.auto_envvar_prefix is None:
        return
    var = f"{ctx.auto_envvar_prefix}_{key.upper()}"
    if var in os.environ:
        logging.getLogger("mnemometer").warning(
            "%s (%s) is ignored: %s is taken from the command line only",
            var,
            where_set(var),
            flag,
        )


def _click_param(f: Any) -> click.Option:
    """The click option of a suite :class:`~mnemometer.suites.Flag`."""

    def target() -> None: ...

    _click_option(f)(target)
    return target.__click_params__[0]  # type: ignore[attr-defined]
