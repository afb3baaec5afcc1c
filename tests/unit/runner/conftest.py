"""Loads the shared check-test world (checks_world.py) once, for every test module here.

Tests run with ``--import-mode=importlib``, so a test module cannot import a sibling file;
this conftest (imported by pytest before the modules of its directory) registers it under
:data:`CHECKS_WORLD`, and the test modules take it from ``sys.modules``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

CHECKS_WORLD = "drasim_test_checks_world"

if CHECKS_WORLD not in sys.modules:
    _spec = importlib.util.spec_from_file_location(CHECKS_WORLD, Path(__file__).with_name("checks_world.py"))
    assert _spec is not None
    assert _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    sys.modules[CHECKS_WORLD] = _module
    _spec.loader.exec_module(_module)
