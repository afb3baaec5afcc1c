"""pytest plugin entry point (``pytest11``). Collection and fixtures arrive with the pytest-plugin work."""

from __future__ import annotations
