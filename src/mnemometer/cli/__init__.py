"""The mnemometer command line."""
