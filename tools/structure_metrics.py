"""Structure numbers of the runner (docs/architecture.md, "Structure numbers").

Run from the repository root: ``python tools/structure_metrics.py``. It reads the source
as text (``ast``), imports nothing of drasim, and prints:

- the lines of ``drasim/runner/world.py``, and of its ``World`` class with its methods and fields;
- the world's fan-in (drasim modules importing ``drasim.runner.world``) and fan-out (drasim modules
  it imports), lazy and ``TYPE_CHECKING`` imports included;
- the import circles among drasim modules: strongly connected components of more than one
  module (an import of a package by its own submodule is not counted);
- the Python files over 400 lines in drasim/, fake_plugins/ and tests/.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path.cwd()
WORLD = "drasim.runner.world"
BIG = 400


def module_name(path: Path) -> str:
    """``drasim/runner/world.py`` -> ``drasim.runner.world`` (a package: its ``__init__``'s name)."""
    parts = list(path.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The drasim modules ``name`` imports anywhere in its file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        found |= {t for t in targets if t in known and t != name}
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:  # noqa: C901 - Tarjan's algorithm reads best in one piece
    """Strongly connected components with more than one module (Tarjan, iterative enough for drasim)."""
    sys.setrecursionlimit(10_000)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def main() -> None:
    """Print the numbers."""
    files = sorted(p.relative_to(ROOT) for p in (ROOT / "drasim").rglob("*.py") if "_proto" not in p.parts)
    modules = {module_name(p): p for p in files}
    known = set(modules)
    graph = {name: imports_of(name, path, known) for name, path in modules.items()}
    world = modules[WORLD]
    print(f"world.py lines: {len(world.read_text().splitlines())}")
    for node in ast.parse(world.read_text()).body:
        if isinstance(node, ast.ClassDef) and node.name == "World":
            assert node.end_lineno is not None
            methods = [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
            fields = [n for n in node.body if isinstance(n, ast.AnnAssign)]
            lines = node.end_lineno - node.lineno + 1
            counts = f"methods (properties included): {len(methods)}, fields: {len(fields)}"
            print(f"World class lines: {lines}, {counts}")
    print(f"world fan-in: {sum(WORLD in deps for deps in graph.values())}")
    print(f"world fan-out: {len(graph[WORLD])}")
    # A package imported by its own submodule (runner.actions.pods -> runner.actions) is no circle.
    graph = {name: {d for d in deps if not name.startswith(d + ".")} for name, deps in graph.items()}
    found = circles(graph)
    print(f"import circles: {len(found)}")
    for component in found:
        print(f"    {len(component)}: {' '.join(component)}")
    sources = [p for top in ("drasim", "fake_plugins", "tests") for p in sorted((ROOT / top).rglob("*.py"))]
    big = sorted(
        ((len(p.read_text().splitlines()), p.relative_to(ROOT)) for p in sources if "_proto" not in p.parts),
        reverse=True,
    )
    big = [(n, p) for n, p in big if n > BIG]
    print(f"files over {BIG} lines: {len(big)}")
    for lines, path in big:
        print(f"    {lines} {path}")


if __name__ == "__main__":
    main()
