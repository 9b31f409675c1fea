"""Null simulation: how often does each test call a true null significant when items cluster?

LoCoMo's questions sit in 10 conversations, LongMemEval's in haystacks, scenario plays in
epochs. Here a paired comparison is simulated where the candidate is, on average, exactly as
good as the baseline: G conversations of 105 to 260 questions (LoCoMo's spread), a base
accuracy drawn per conversation, a per-conversation effect drawn from N(0, tau) (so some
conversations favour one side, but the mean effect is 0), and question difficulty shared by
both sides (paired outcomes are correlated, as they are when two systems answer the same
question).

Printed per G in {5, 10, 30} and tau in {0, 0.03, 0.05}: the share of simulations with
p < 0.05 for

* the cluster-robust CR2 t test on Bell-McCaffrey df (what ``compare`` and ``gate`` use
  wherever items cluster),
* McNemar's exact test over questions (the named reference: what ``compare`` used before,
  valid only for independent items),
* the cluster bootstrap's BCa interval excluding 0 (the other reference: ``compare``'s
  former headline interval).

The target (issue 29): CR2 within 4 to 6.5% at nominal 5% in every cell; the run exits
non-zero otherwise. Seeded, so the same numbers every run.

Run: ``.venv/bin/python benchmarks/bench_null.py [--sims 4000] [--boot-sims 300]``
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from scipy.stats import norm

from mnemometer import stats

GROUPS = (5, 10, 30)
TAUS = (0.0, 0.03, 0.05)
BAND = (0.04, 0.065)


def simulate(rng: np.random.Generator, g: int, tau: float) -> tuple[np.ndarray, ...]:
    """One paired null dataset: baseline and candidate 0/1 outcomes and their clusters."""
    sizes = rng.integers(105, 261, size=g)
    n = int(sizes.sum())
    labels = np.repeat(np.arange(g), sizes)
    p = rng.uniform(0.3, 0.8, size=g)[labels]
    delta = rng.normal(0.0, tau, size=g)[labels] if tau else 0.0
    difficulty = rng.normal(size=n)  # shared by both sides: paired outcomes correlate
    base = 0.7 * difficulty + 0.714 * rng.normal(size=n) < norm.ppf(p)
    cand = 0.7 * difficulty + 0.714 * rng.normal(size=n) < norm.ppf(np.clip(p + delta, 0.01, 0.99))
    return base, cand, labels


def run(sims: int, boot_sims: int, seed: int = 20261128) -> list[tuple[int, float, dict]]:
    """The false-positive rate of each test in each cell."""
    rows = []
    for g in GROUPS:
        for tau in TAUS:
            rng = np.random.default_rng([seed, g, int(tau * 1000)])
            rejected = {"cr2": 0, "mcnemar": 0, "cluster-bca": 0}
            t0 = time.perf_counter()
            for i in range(sims):
                base, cand, labels = simulate(rng, g, tau)
                d = cand.astype(float) - base.astype(float)
                rejected["cr2"] += stats.cluster_robust_test(d, labels).p_value < 0.05
                rejected["mcnemar"] += stats.mcnemar_exact(base, cand).p_value < 0.05
                if i < boot_sims:
                    (b,) = stats.bootstrap_columns(
                        d[:, None], resamples=999, seed=i, clusters=labels, bounds=[(-1, 1)]
                    )
                    iv = b.bca
                    rejected["cluster-bca"] += not iv.low <= 0.0 <= iv.high
            rates = {
                "cr2": rejected["cr2"] / sims,
                "mcnemar": rejected["mcnemar"] / sims,
                "cluster-bca": rejected["cluster-bca"] / max(1, min(boot_sims, sims)),
            }
            rows.append((g, tau, rates))
            print(
                f"G={g:>2} tau={tau:.2f}: CR2 {100 * rates['cr2']:5.1f}%  "
                f"McNemar {100 * rates['mcnemar']:5.1f}%  "
                f"cluster-BCa {100 * rates['cluster-bca']:5.1f}%  "
                f"({time.perf_counter() - t0:.0f} s)",
                flush=True,
            )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sims", type=int, default=4000, help="simulations per cell")
    ap.add_argument("--boot-sims", type=int, default=300, help="of which cluster-BCa runs on")
    args = ap.parse_args()
    print(
        f"null simulation: {args.sims} paired datasets per cell (cluster-BCa on the first "
        f"{args.boot_sims}), nominal 5%; target for CR2: {100 * BAND[0]:.1f}-"
        f"{100 * BAND[1]:.1f}%"
    )
    rows = run(args.sims, args.boot_sims)
    bad = [(g, tau) for g, tau, r in rows if not BAND[0] <= r["cr2"] <= BAND[1]]
    if bad:
        print(f"CR2 outside the band in {bad}")
        return 1
    print(
        "CR2 holds its nominal rate in every cell; McNemar over questions does not once "
        "conversations differ (tau > 0)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
