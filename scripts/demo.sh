#!/usr/bin/env bash
# The Quick-start demo: the retrieval suite on the built-in English and Chinese datasets
# with the `keyword` and `bm25` stores. No server, no key, no network.
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
echo "Run directories are in $out/; try: $bin/mnemometer report $out/demo-en-bm25 --format md"
