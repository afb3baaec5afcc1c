"""One module per ``drasim`` subcommand; see :mod:`drasim.cli`."""
