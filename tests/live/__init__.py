"""Tests that start real servers (marked live)."""
