"""How far a reader follows a materialization: the macros (and their files) that its
block reaches through calls, and how many calls deep, read statically from macros/.

    python -m historize_tools.macro_reach                       every materialization
    python -m historize_tools.macro_reach scd2_hist --tree      one, with its call tree

A call is `historize.NAME` (called, or handed on to be called), or `NAME(` of a macro
of this package; a dispatcher's
`adapter.dispatch('NAME', 'historize')` reaches its `default__NAME` and `spark__NAME`.
Every branch counts (the static reach over-counts what one load runs, the same way
before and after a change).
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from historize_tools.dbt_runner import ROOT

DEFINITION = re.compile(r"\{%-?\s*(macro|materialization|test)\s+([A-Za-z_][A-Za-z_0-9]*)")
END = re.compile(r"\{%-?\s*end(macro|materialization|test)\s*-?%\}")
CALL = re.compile(r"historize\.([A-Za-z_][A-Za-z_0-9]*)|(?<![\w.])([A-Za-z_][A-Za-z_0-9]*)\s*\(")
DISPATCH = re.compile(r"adapter\.dispatch\(\s*'([A-Za-z_0-9]+)'\s*,\s*'historize'")


@dataclass(frozen=True)
class Macro:
    name: str
    file: str
    body: str


def read_macros(folder: Path = ROOT / "macros") -> dict[str, Macro]:
    found: dict[str, Macro] = {}
    for path in sorted(folder.rglob("*.sql")):
        text = path.read_text()
        for start in DEFINITION.finditer(text):
            end = END.search(text, start.end())
            body = text[start.end(): end.start() if end else len(text)]
            body = re.sub(r"\{#.*?#\}", "", body, flags=re.S)  # comments call nothing
            name = start.group(2) if start.group(1) == "macro" else f"{start.group(1)} {start.group(2)}"
            found[name] = Macro(name, str(path.relative_to(folder)), body)
    return found


def calls(macro: Macro, macros: dict[str, Macro]) -> list[str]:
    called = [qualified or bare for qualified, bare in CALL.findall(macro.body)]
    called = [name for name in called if name in macros and name != macro.name]
    for name in DISPATCH.findall(macro.body):
        called += [f"{prefix}__{name}" for prefix in ("default", "spark") if f"{prefix}__{name}" in macros]
    return list(dict.fromkeys(called))


def reach(root: str, macros: dict[str, Macro]) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Every macro reached from `root` with its depth (calls from the root), and the call graph."""
    depth, graph, frontier = {root: 0}, {}, [root]
    while frontier:
        following = []
        for name in frontier:
            graph[name] = calls(macros[name], macros)
            for called in graph[name]:
                if called not in depth:
                    depth[called] = depth[name] + 1
                    following.append(called)
        frontier = following
    return depth, graph


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m historize_tools.macro_reach", description=__doc__.splitlines()[0])
    parser.add_argument("kinds", nargs="*", default=["scd2_hist", "scd_type6", "fivetran_history"])
    parser.add_argument("--tree", action="store_true", help="print each macro reached, by depth")
    args = parser.parse_args(argv)
    macros = read_macros()
    for kind in args.kinds:
        depth, graph = reach(f"materialization {kind}", macros)
        reached = [name for name in depth if depth[name] > 0]
        files = {macros[name].file for name in depth}
        print(f"{kind}: {len(reached)} macros in {len(files)} files, {max(depth.values())} calls deep")
        if args.tree:
            for name in sorted(reached, key=lambda n: (depth[n], n)):
                print(f"  {depth[name]} {name} ({macros[name].file})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
