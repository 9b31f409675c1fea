"""``python -m mnemometer.testing --port 8090``: serve the deterministic fake LLM."""

from mnemometer.testing.llm_server import main

main()
