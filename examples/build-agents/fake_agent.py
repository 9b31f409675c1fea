"""A deterministic stand-in for a coding agent, for the example build suites and tests.

Usage: python fake_agent.py WORKSPACE PROMPT_FILE

It reads the prompt the harness wrote and edits the workspace the way a (very literal)
agent would:

* ``STEP_MARKER: name`` adds ``<section id="name">`` to ``index.html``;
* each required memory question ``- qN: question`` is asked through the memory helper
  (``./.memory-eval/query-memory``) when the prompt offers it; the first backquoted value
  in the top answer (or ``unknown`` without memory) is written to the file named by
  ``MEMORY_TARGET: file`` as ``qN = value``;
* it prints a JSON event with token usage, as agent CLIs with JSON output do.

Test switches (a line ``FAKE_AGENT: what``): ``hang`` sleeps 60 s, ``delete-workspace``
removes the workspace, ``forge-evidence`` writes evidence without asking memory,
``evidence-note`` writes a hand-made memory-evidence.md, ``fail`` exits 3, ``no-usage``
prints no usage.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path


def ask(workspace: Path, qid: str, question: str) -> str:
    """Ask memory through the helper; the first backquoted value of the top answer."""
    helper = workspace / ".memory-eval" / "query-memory"
    proc = subprocess.run(
        [str(helper), qid, question], cwd=workspace, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        return "unknown"
    results = json.loads(proc.stdout).get("results") or []
    found = re.search(r"`([^`]+)`", results[0]["text"]) if results else None
    return found.group(1) if found else "unknown"


def main(workspace: Path, prompt_file: Path) -> int:
    """Do what the prompt says (see the module docstring); the exit code."""
    prompt = prompt_file.read_text("utf-8")
    switches = set(re.findall(r"^FAKE_AGENT: (\S+)", prompt, re.M))
    if "hang" in switches:
        time.sleep(60)
    if "delete-workspace" in switches:
        shutil.rmtree(workspace)
        return 0
    if "fail" in switches:
        return 3
    if "evidence-note" in switches:
        (workspace / "memory-evidence.md").write_text("I remembered everything.\n")
    memory = "./.memory-eval/query-memory" in prompt
    answers = {}
    for qid, question in re.findall(r"^- (q\d+): (.+)$", prompt, re.M):
        if "forge-evidence" in switches:
            d = workspace / ".memory-eval"
            d.mkdir(exist_ok=True)
            (d / f"{qid}.status.json").write_text(
                json.dumps({"question_id": qid, "question": question, "exit_code": 0})
            )
            (d / f"{qid}.json").write_text(json.dumps({"results": [{"id": "m999", "text": "x"}]}))
            answers[qid] = "forged"
        else:
            answers[qid] = ask(workspace, qid, question) if memory else "unknown"
    index = workspace / "index.html"
    html = index.read_text("utf-8") if index.is_file() else "<main>\n</main>\n"
    for marker in re.findall(r"STEP_MARKER: (\S+)", prompt):
        html = html.replace("</main>", f'  <section id="{marker}">{marker}</section>\n</main>')
    index.write_text(html, "utf-8")
    target = re.search(r"MEMORY_TARGET: (\S+)", prompt)
    if target and answers:
        path = workspace / target.group(1)
        lines = "".join(f"/* {qid} = {value} */\n" for qid, value in answers.items())
        path.write_text((path.read_text("utf-8") if path.is_file() else "") + lines, "utf-8")
    if "no-usage" not in switches:
        usage = {"input_tokens": len(prompt) // 4, "output_tokens": 40 + 10 * len(answers)}
        print(json.dumps({"type": "turn.completed", "usage": usage}))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
