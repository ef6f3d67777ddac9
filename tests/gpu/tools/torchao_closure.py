#!/usr/bin/env python3
"""The torchao source files that `import torchao.float8` can reach, found statically (used by make_torchao.sh).

  torchao_closure.py ROOT [MODULE ...]     ROOT holds torchao/; prints one path per line, relative to ROOT

From the given modules (default: torchao and torchao.float8) it follows every `import` and `from ... import`
statement anywhere in a file (function bodies and try blocks included, so optional and lazy imports are kept
too) that names a torchao module, adds each package's __init__.py on the way, and repeats until nothing new is
found. `from pkg import name` counts name as a module when pkg/name.py or pkg/name/ exists. Nothing is executed.
"""

import ast
import sys
from pathlib import Path


def module_file(root, dotted):
    """The file that defines a dotted torchao module, or None."""
    base = root.joinpath(*dotted.split("."))
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def package_of(root, path):
    """The dotted package a file's relative imports are resolved against."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    else:
        parts.pop()
    return parts


def imported_modules(root, path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = package_of(root, path)
                package = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                base = ".".join(package + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            found.add(base)
            for alias in node.names:
                if alias.name != "*":
                    found.add(f"{base}.{alias.name}")
    return {m for m in found if m == "torchao" or m.startswith("torchao.")}


def closure(root, starts):
    todo, files = list(starts), set()
    seen = set()
    while todo:
        dotted = todo.pop()
        if dotted in seen:
            continue
        seen.add(dotted)
        parts = dotted.split(".")
        for i in range(1, len(parts) + 1):  # every enclosing package's __init__ runs first
            prefix = ".".join(parts[:i])
            path = module_file(root, prefix)
            if path is None or path in files:
                continue
            files.add(path)
            todo.extend(imported_modules(root, path))
    return sorted(str(p.relative_to(root)) for p in files)


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    root = Path(argv[0]).resolve()
    for line in closure(root, argv[1:] or ["torchao", "torchao.float8"]):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
