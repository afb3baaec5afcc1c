"""Progress lines for the benchmarks, on stderr: a long run shows it is alive and where it is.

``RESULT`` lines and the other numbers go to stdout, so that redirecting stdout to a file
keeps the numbers clean while the terminal still shows progress.
"""

from __future__ import annotations

import sys
import time

_STARTED = time.monotonic()


def progress(message: str) -> None:
    """Print ``[  12.3s] message`` (seconds since the script started) to stderr at once."""
    print(f"[{time.monotonic() - _STARTED:7.1f}s] {message}", file=sys.stderr, flush=True)
