"""Reports built from run logs."""

from mnemometer.report._render import report

__all__ = ["report"]
