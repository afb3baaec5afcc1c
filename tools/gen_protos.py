"""Regenerate drasim/_proto from the .proto sources in protos/.

Run with ``python tools/gen_protos.py`` (or ``tox -e protos``). With ``--check DIR``
the modules are generated into DIR instead, so a test can compare them with the
committed ones.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"


def proto_files() -> list[Path]:
    """All .proto sources, relative to protos/, in a stable order."""
    return sorted(p.relative_to(PROTO_ROOT) for p in PROTO_ROOT.rglob("*.proto"))


def generate(out: Path) -> None:
    """Run protoc (from grpcio-tools) for every source into ``out``."""
    from grpc_tools import protoc

    out.mkdir(parents=True, exist_ok=True)
    files = [str(p) for p in proto_files()]
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        f"--pyi_out={out}",
        *files,
    ]
    if protoc.main(args) != 0:
        sys.exit("protoc failed")
    # Every generated directory is a package.
    for rel in proto_files():
        pkg = out / rel.parent
        while pkg != out:
            init = pkg / "__init__.py"
            if not init.exists():
                init.write_text('"""Generated from protos/; do not edit."""\n')
            pkg = pkg.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT, help="where drasim/_proto/... is written")
    generate(parser.parse_args().out)


if __name__ == "__main__":
    main()
