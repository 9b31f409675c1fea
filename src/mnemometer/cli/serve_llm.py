"""``mnemometer serve-llm``: a real small LLM on 127.0.0.1 (llama.cpp + SmolLM2-135M)."""

from __future__ import annotations

import click


@click.command("serve-llm")
@click.option("--port", type=int, default=8080, show_default=True, help="Port on 127.0.0.1.")
@click.option(
    "--model",
    "model_file",
    type=click.Path(dir_okay=False),
    help="A .gguf file (default: the packaged SmolLM2-135M-Instruct).",
)
@click.option("--n-ctx", type=int, default=2048, show_default=True, help="Context window.")
@click.option("--threads", type=int, default=2, show_default=True, help="CPU threads.")
@click.option("--seed", type=int, default=0, show_default=True, help="Sampling seed.")
def serve_llm_cmd(port: int, model_file: str | None, n_ctx: int, threads: int, seed: int) -> None:
    """Serve a local OpenAI-compatible LLM until interrupted (needs the [local-llm] extra).

    Then: mnemometer run scenarios --agent rag --store bm25
    --llm-base-url http://127.0.0.1:8080/v1 --llm-model smollm2
    """
    import os
    import sys

    from mnemometer.local_llm import MODEL_ALIAS, server_command

    cmd = server_command(port, model=model_file, n_ctx=n_ctx, threads=threads, seed=seed)
    click.echo(f"serving {MODEL_ALIAS} at http://127.0.0.1:{port}/v1 (Ctrl-C stops it)", err=True)
    sys.stderr.flush()
    # Become the server: its pid is ours, so SIGTERM/SIGINT reach it and nothing is orphaned.
    os.execv(cmd[0], cmd)
