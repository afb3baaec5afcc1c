"""``python -m drasim`` is the ``drasim`` command."""

from __future__ import annotations

import sys

from drasim.cli import main

sys.exit(main())
