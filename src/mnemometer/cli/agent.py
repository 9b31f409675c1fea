"""``mnemometer agent codex|claude``: run an agent CLI for a build item, leaving its artifacts."""

from __future__ import annotations

from pathlib import Path

import click

from mnemometer.cli._common import path_option


def _command(kind: str, npm: str) -> click.Command:
    @click.command(kind)
    @path_option("--workspace", required=True, help="Where the agent works.")
    @path_option("--prompt-file", required=True, help="The harness's prompt.")
    @path_option("--run-dir", required=True, help="Where the artifacts go.")
    @click.option("--bin", "binary", help=f"The CLI's command line (default: {kind} on PATH).")
    @click.option("--model", help="Model name (default: the CLI's own).")
    @click.option(
        "--settle",
        type=float,
        default=8.0,
        show_default=True,
        help="End the agent once its final message is unchanged this many seconds.",
    )
    @click.option(
        "--deadline",
        type=float,
        help="End it after this many seconds (default: the item's timeout less 30 s).",
    )
    def cmd(
        workspace: Path,
        prompt_file: Path,
        run_dir: Path,
        binary: str | None,
        model: str | None,
        settle: float,
        deadline: float | None,
    ) -> None:
        from mnemometer.sandbox import run_agent

        code = run_agent(
            kind,
            workspace,
            prompt_file,
            run_dir,
            binary=binary,
            model=model,
            settle=settle,
            deadline=deadline,
        )
        raise SystemExit(code)

    cmd.help = (
        f"Run {kind} non-interactively in WORKSPACE (npm: {npm}); write {kind}-final.md, "
        f"{kind}-events.jsonl and {kind}-token-usage.json into RUN_DIR."
    )
    return cmd


@click.group("agent")
def agent_group() -> None:
    """Run an agent CLI for a build item and keep its final message, events and token usage."""


agent_group.add_command(_command("codex", "@openai/codex"))
agent_group.add_command(_command("claude", "@anthropic-ai/claude-code"))
