"""``python -m mnemometer.testing --port 8090``: serve the deterministic fake LLM.

The command composes the server (:mod:`mnemometer.testing.llm_server`) with what is built on
it, the benchmark reader and judge and the extracting model, so it lives above all three.
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Sequence

from mnemometer.testing._anthropic import AnthropicServer
from mnemometer.testing._bench import benchmark_reply, is_judge_request
from mnemometer.testing._extraction import extraction_llm
from mnemometer.testing.llm_server import _MODES, FakeLLMServer


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until interrupted: ``python -m mnemometer.testing --port 8090``."""
    p = argparse.ArgumentParser(
        description="A deterministic OpenAI-compatible (or Anthropic Messages) server."
    )
    p.add_argument("--port", type=int, default=8090)
    p.add_argument("--model", default="fake-llm")
    p.add_argument(
        "--reply",
        default=None,
        help="fixed reply (default: echo the memories; judge requests get a verdict)",
    )
    p.add_argument(
        "--mode",
        choices=(*_MODES, "extraction"),
        default="minimal",
        help="structured output: generated instances (minimal or content) or scripted; "
        "extraction: extract like a literal model (Graphiti, cognee, LangMem)",
    )
    p.add_argument(
        "--embeddings", choices=("hash", "minilm"), default="hash", help="embedding vectors"
    )
    p.add_argument("--embedding-dim", type=int, default=64, help="size of hashed vectors")
    p.add_argument(
        "--embedding-model",
        action="append",
        default=[],
        help="a further model id /v1/embeddings accepts (repeatable)",
    )
    p.add_argument("--log", default=None, help="append every exchange to this JSONL file")
    p.add_argument(
        "--protocol",
        choices=("openai", "anthropic"),
        default="openai",
        help="anthropic: answer in Anthropic's Messages protocol (POST /v1/messages), for "
        "--llm-model anthropic/MODEL --llm-base-url http://127.0.0.1:PORT",
    )
    p.add_argument("--api-key", default=None, help="refuse requests without this key")
    p.add_argument(
        "--latency", type=float, default=0.0, help="seconds each chat answer waits (a model's time)"
    )
    args = p.parse_args(argv)
    common = {
        "default": args.reply if args.reply is not None else benchmark_reply,
        "models": [args.model],
        "port": args.port,
        "embeddings": args.embeddings,
        "embedding_dim": args.embedding_dim,
        "embedding_models": args.embedding_model,
        "log_path": args.log,
        "api_key": args.api_key,
        "latency": args.latency,
    }
    server = AnthropicServer if args.protocol == "anthropic" else FakeLLMServer
    if args.mode == "extraction":
        srv = extraction_llm(server=server, **common).start()
    else:
        # Judge verdicts come from the deterministic rules, never from the structured-output mode.
        rules = [(is_judge_request, benchmark_reply)] if args.reply is None else []
        srv = server(rules=rules, mode=args.mode, **common).start()
    url = srv.url if isinstance(srv, AnthropicServer) else srv.base_url
    print(f"serving {args.model} at {url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        srv.stop()


if __name__ == "__main__":
    main()
