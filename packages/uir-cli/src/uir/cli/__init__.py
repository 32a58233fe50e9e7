"""The `uir` command line."""
