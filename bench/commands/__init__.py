"""The command-line commands, one module each; :mod:`bench.cli` dispatches to them."""
