"""fake_plugins must not agree with the kubelet side by accident: it never imports it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import fake_plugins

REPO = str(Path(fake_plugins.__file__).resolve().parent.parent)
FORBIDDEN = ("drasim.kubelet", "drasim.plugins", "drasim.runner", "drasim.harness")


def test_no_kubelet_side_imports():
    code = (
        f"import sys; sys.path.insert(0, {REPO!r}); "
        "import fake_plugins.driver, fake_plugins.cli, fake_plugins.slices, fake_plugins.claims; "
        "print('\\n'.join(sorted(sys.modules)))"
    )
    modules = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.split()
    assert "fake_plugins.driver" in modules
    assert [m for m in modules if m.startswith(FORBIDDEN)] == []
