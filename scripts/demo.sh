#!/usr/bin/env bash
# The Quick-start demo: the retrieval suite on the built-in English and Chinese datasets
# with the `keyword` and `bm25` stores, then HTML reports of those runs. No server, no key,
# no network.
set -euo pipefail
bin=${1:-.venv/bin}
out=runs/demo
rm -rf "$out"
for ds in demo-en demo-zh; do
  for store in keyword bm25; do
    echo
    "$bin/mnemometer" run retrieval --dataset "$ds" --store "$store" --out "$out/$ds-$store"
  done
done
echo
# One page per run (linked from the leaderboard) and a paired comparison, each one file.
"$bin/mnemometer" leaderboard "$out" -o "$out/report.html"
"$bin/mnemometer" compare "$out/demo-en-keyword" vs "$out/demo-en-bm25" --resamples 2000 \
  -o "$out/compare-en.html" >/dev/null
echo
echo "Run directories are in $out/; try: $bin/mnemometer report $out/demo-en-bm25 --format md"
echo "HTML report of the demo's runs: $out/report.html (comparison: $out/compare-en.html)"
