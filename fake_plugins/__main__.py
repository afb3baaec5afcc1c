"""``python -m fake_plugins``: run one fake DRA driver as its own process."""

from __future__ import annotations

import sys

from fake_plugins.cli import main

if __name__ == "__main__":
    sys.exit(main())
