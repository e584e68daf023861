"""How far a reader follows a materialization: the macros (and their files) that its
block reaches through calls, and how many calls deep, read statically from macros/;
with --traced, those one default load of each kind actually calls.

    python -m historize_tools.macro_reach                       every materialization
    python -m historize_tools.macro_reach scd2_hist --tree      one, with its call tree
    python -m historize_tools.macro_reach --traced              one default load of each

A call is `historize.NAME` (called, or handed on to be called), or `NAME(` of a macro
of this package; a dispatcher's
`adapter.dispatch('NAME', 'historize')` reaches its `default__NAME` and `spark__NAME`.
Every branch counts (the static reach over-counts what one load runs, the same way
before and after a change).

--traced runs, in a project of its own on the embedded Spark, each kind's model with
its default options through two loads: the first creates the table, the second
changes one key, deletes one and adds one. It records every call of a macro of
this package during the second load (dbt's macro calls, followed from the
materialization's block down), with its depth below the block.
"""
from __future__ import annotations

import argparse
import os
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


TRACE_SCHEMA = "historize_trace"
# One model per kind, default options; `load` (a var) picks the rows of the first or second load.
TRACED_MODELS = {
    "scd2_hist": ("customers_hist", """{{ config(materialized='scd2_hist', unique_key='id') }}
select * from values
{% if var('load') == 1 %}(1, 'a', 10), (2, 'b', 20), (3, 'c', 30)
{% else %}(1, 'a', 10), (2, 'b', 21), (4, 'd', 40){% endif %}
as t(id, name, amount)
"""),
    "scd_type6": ("customers_dim", """{{ config(materialized='scd_type6', unique_key='id') }}
select * from values
{% if var('load') == 1 %}(1, 'a', 10), (2, 'b', 20), (3, 'c', 30)
{% else %}(1, 'a', 10), (2, 'b', 21), (4, 'd', 40){% endif %}
as t(id, name, amount)
"""),
    "fivetran_history": ("orders_history", """{{ config(materialized='fivetran_history', unique_key=['id']) }}
select id, status, cast(at as timestamp) as _fivetran_start, op as _fivetran_op from values
{% if var('load') == 1 %}(1, 'new', '2026-01-01 00:00:00', 'upsert'), (2, 'new', '2026-01-01 00:00:00', 'upsert')
{% else %}(1, 'paid', '2026-01-02 00:00:00', 'upsert'), (2, null, '2026-01-02 00:00:00', 'delete'),
(3, 'new', '2026-01-02 00:00:00', 'upsert'){% endif %}
as t(id, status, at, op)
"""),
}


def traced(kinds: list[str], macros: dict[str, Macro]) -> dict[str, dict[str, int]]:
    """Each kind's second load run with every historize macro call recorded:
    {kind: {macro: its least depth below the block}}."""
    import tempfile

    from dbt.clients.jinja import MacroGenerator

    from historize_tools import dbt_runner as dbt

    dbt.environment()
    os.environ["HISTORIZE_SCHEMA"] = TRACE_SCHEMA
    project = dbt.package_project(Path(tempfile.mkdtemp(prefix="historize-trace-")), dbt.project_yml("trace"))
    for kind in kinds:
        name, sql = TRACED_MODELS[kind]
        (project / "models" / f"{name}.sql").write_text(sql)
    dbt.run(["debug", "--quiet"], project_dir=project)  # starts the embedded Spark
    dbt.spark().sql(f"drop schema if exists {TRACE_SCHEMA} cascade")
    stack: list[str] = []  # the load's kind, then the historize macros being called
    recorded: dict[str, dict[str, int]] = {}
    call = MacroGenerator.__call__

    def recording_call(generator, *args, **kwargs):
        name = generator.macro.name
        kind = next((k for k in kinds if name.startswith(f"materialization_{k}_")), None)
        counted = generator.macro.package_name == "historize" and (kind or (stack and name in macros))
        if kind:
            recorded[kind] = {}
        elif counted:
            recorded[stack[0]][name] = min(recorded[stack[0]].get(name, len(stack)), len(stack))
        if counted:
            stack.append(kind or name)
        try:
            return call(generator, *args, **kwargs)
        finally:
            if counted:
                stack.pop()

    variables = {"load_timestamp": "2026-01-01 06:00:00", "load_run_id": "trace-1", "load": 1}
    dbt.run(["run"], project_dir=project, variables=variables)
    MacroGenerator.__call__ = recording_call
    try:
        dbt.run(["run"], project_dir=project, variables={**variables, "load_timestamp": "2026-01-02 06:00:00",
                                                         "load_run_id": "trace-2", "load": 2})
    finally:
        MacroGenerator.__call__ = call
        dbt.spark().sql(f"drop schema if exists {TRACE_SCHEMA} cascade")
    return recorded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m historize_tools.macro_reach", description=__doc__.splitlines()[0])
    parser.add_argument("kinds", nargs="*", default=["scd2_hist", "scd_type6", "fivetran_history"])
    parser.add_argument("--tree", action="store_true", help="print each macro reached, by depth")
    parser.add_argument("--traced", action="store_true",
                        help="the macros one default load of each kind calls (runs dbt on the embedded Spark)")
    args = parser.parse_args(argv)
    macros = read_macros()
    if args.traced:
        found = traced(args.kinds, macros)
        for kind in args.kinds:
            called = found[kind]
            files = {macros[name].file for name in called} | {macros[f"materialization {kind}"].file}
            print(f"{kind} (traced): {len(called)} macros in {len(files)} files, {max(called.values())} calls deep")
            if args.tree:
                for name in sorted(called, key=lambda n: (called[n], n)):
                    print(f"  {called[name]} {name} ({macros[name].file})")
        return 0
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
