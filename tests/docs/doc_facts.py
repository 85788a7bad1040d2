#!/usr/bin/env python3
"""Checks the README's architecture facts against the code (ctest Docs.FactsMatchTheCode):
  - the dependency line "`cli` → `serve` → ... ; `models` also uses `a`, `b` ..." against the
    engram_layer(...) dependencies of CMakeLists.txt: each arrow is a direct dependency;
  - the family table's rows against the families `engram train --help` lists (the registry);
  - docs/families.md's table of where each family stands has one row per family too.
Usage: doc_facts.py ENGRAM_BIN REPO_ROOT
"""
import re
import subprocess
import sys


def layer_deps(cmake):
    """{layer: set of engram layers it links} from engram_layer(name deps...)."""
    deps = {}
    for name, rest in re.findall(r"^engram_layer\((\w+)\s+([^)]*)\)", cmake, re.M):
        deps[name] = {d[len("engram_"):] for d in rest.split() if d.startswith("engram_")}
    return deps


def table_rows(text, header_start):
    """First cells of the Markdown table whose header row starts with `header_start`."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(header_start):
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append(row.split("|")[1].strip())
            return rows
    return None


def main():
    engram, root = sys.argv[1], sys.argv[2]
    readme = open(f"{root}/README.md", encoding="utf-8").read()
    families_md = open(f"{root}/docs/families.md", encoding="utf-8").read()
    deps = layer_deps(open(f"{root}/CMakeLists.txt", encoding="utf-8").read())
    errors = []

    m = re.search(r"dependencies point down only \((`[^;]+);\s*`models` also uses ([^)]*?)(;|\))", readme, re.S)
    if not m:
        errors.append("README: no dependency line ('dependencies point down only (`cli` → ...; `models` also uses ...')")
    else:
        chain = re.findall(r"`(\w+)`", m.group(1))
        for a, b in zip(chain, chain[1:]):
            if b not in deps.get(a, set()):
                errors.append(f"README: `{a}` → `{b}`, but CMakeLists.txt's engram_{a} links {sorted(deps.get(a, []))}")
        uses = re.findall(r"`(\w+)`", m.group(2))
        for b in uses:
            if b not in deps.get("models", set()):
                errors.append(f"README: `models` also uses `{b}`, but engram_models links {sorted(deps['models'])}")
        print("dependency line: " + " → ".join(chain) + "; models also uses " + ", ".join(uses))

    help_text = subprocess.run([engram, "train", "--help"], capture_output=True, text=True).stdout
    listed = help_text.split("Families:", 1)[1].split("Usage:", 1)[0] if "Families:" in help_text else ""
    registry = sorted(re.findall(r"^  (\w+)\s", listed, re.M))
    if not registry:
        errors.append("engram train --help lists no families")
    readme_rows = table_rows(readme, "| family | what it does")
    got = sorted(r.split()[0] for r in readme_rows or [] if r != "every family")
    if got != registry:
        errors.append(f"README's family table has {got}, the registry {registry}")
    stand = table_rows(families_md, "| family | batched in the server")
    if sorted(stand or []) != registry:
        errors.append(f"docs/families.md's table has {sorted(stand or [])}, the registry {registry}")
    print(f"families: {registry}")
    for e in errors:
        print("FAILED " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
