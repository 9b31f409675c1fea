from __future__ import annotations

import subprocess
import sys

import pytest
from scipy import special

from mnemometer.stats._quantiles import CLOSED_FORM_MAX_DF, norm_ppf, t_ppf

LEVELS = [0.5, 0.8, 0.9, 0.95, 0.975, 0.99, 0.999]
# Every df up to 120 (small samples, where the t differs most from the normal), then a
# stride across the closed-form range, its end, and past it (scipy's own answer).
DFS = [*range(1, 121), *range(121, CLOSED_FORM_MAX_DF, 37), CLOSED_FORM_MAX_DF, 2001, 35_745]


@pytest.mark.parametrize("df", DFS)
def test_t_quantile_matches_scipy_to_1e_12(df: int) -> None:
    for conf in LEVELS:
        p = 1.0 - (1.0 - conf) / 2.0
        want = float(special.stdtrit(df, p))  # 1e-12 absolute, relative once |t| > 1
        assert t_ppf(df, p) == pytest.approx(want, abs=1e-12, rel=1e-12)
        assert t_ppf(df, 1.0 - p) == pytest.approx(-want, abs=1e-12, rel=1e-12)


def test_normal_quantile_matches_scipy_to_1e_12() -> None:
    for p in [1e-10, 0.001, 0.025, 0.1, 0.5, 0.8, 0.95, 0.975, 0.995, 1 - 1e-10]:
        assert norm_ppf(p) == pytest.approx(float(special.ndtri(p)), abs=1e-12, rel=0)


def test_intervals_do_not_import_scipy() -> None:
    code = (
        "import sys; from mnemometer.stats import mean_interval, newcombe, wilson;"
        "mean_interval([0.1, 0.5, 0.9]); newcombe(3, 10, 5, 10); wilson(1, 4);"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
