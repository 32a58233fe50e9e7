"""An example third-party UIR plugin (examples/plugin/README.md)."""
