"""The harness's import graph: modules, arrows between them, and arrows from a lower layer back up.

    python benchmarks/import_layers.py [--list] [--root FOLDER]

Reads every module of autograder/ (lmgrade.*) with `ast`, imports inside
functions included, and counts the arrows between them (one per pair of
modules). Each module has a layer (LAYERS, lowest first, by the first prefix
that matches); an arrow from a module to one of a higher layer runs back up.
Cycles are strongly connected groups of more than one module. --list names
every upward arrow and every cycle; --root reads another copy of the
harness (an older commit's autograder/, for a before and after).
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "autograder"
PACKAGE = "lmgrade"

# Lowest first: a module may import its own folder and those below it (each folder's __init__ says
# so: tests/test_import_layers.py), and the package's root all of them.
LAYERS = [
    ("boundary", ["boundary"]),
    ("core", ["core"]),
    ("submissions", ["submissions"]),
    ("sandbox", ["sandbox"]),
    ("declare", ["declare"]),
    ("reports", ["reports"]),
    ("grading", ["grading"]),
    ("prove", ["prove"]),
    ("course", ["course"]),
    ("cli", ["cli"]),
    ("root", ["__init__"]),
]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> int:
    for i, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return i
    raise SystemExit(f"{module}: in no layer of LAYERS")


def imports_of(path: Path, module: str, modules: set[str]) -> set[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # Imports for type annotations only (under `if TYPE_CHECKING:`) are no arrow when the code runs.
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING"
        for inner in ast.walk(node)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                base = ".".join(base + ([node.module] if node.module else []))
            elif node.module and (node.module == PACKAGE or node.module.startswith(PACKAGE + ".")):
                base = node.module[len(PACKAGE) + 1 :]
            else:
                continue
            for alias in node.names:
                target = f"{base}.{alias.name}" if base else alias.name
                found.add(target if target in modules else base)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    found.add(alias.name[len(PACKAGE) + 1 :])
    return {m for m in found if m in modules and m != module}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def graph_of(root: Path) -> tuple[dict[str, Path], list, list, list[list[str]]]:
    """The harness's modules, its import arrows, those that run back up, and its cycles."""
    paths = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    for module in paths:
        layer_of(module)  # every module has its place, arrows or not
    graph = {m: imports_of(p, m, set(paths)) for m, p in paths.items()}
    arrows = [(a, b) for a in sorted(graph) for b in sorted(graph[a])]
    upward = [(a, b) for a, b in arrows if layer_of(b) > layer_of(a)]
    return paths, arrows, upward, cycles(graph)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="name every upward arrow and cycle")
    parser.add_argument("--root", type=Path, default=ROOT, help="the harness's folder (default: autograder/)")
    args = parser.parse_args()
    paths, arrows, upward, groups = graph_of(args.root)
    print(
        f"modules {len(paths)}, import arrows {len(arrows)}, upward arrows {len(upward)}, "
        f"cycles {len(groups)} ({sum(map(len, groups))} modules)"
    )
    if args.list:
        for a, b in upward:
            print(f"  up: {a} ({LAYERS[layer_of(a)][0]}) -> {b} ({LAYERS[layer_of(b)][0]})")
        for group in groups:
            print("  cycle: " + ", ".join(group))


if __name__ == "__main__":
    main()
