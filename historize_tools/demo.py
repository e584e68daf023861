"""The demo: builds the demo project's loads in order and prints the history
tables that result, on the embedded Spark or on a cluster's Thrift server.

    python -m historize_tools.demo                   (what ./scripts/demo.sh runs)
    python -m historize_tools.demo --target thrift   (HISTORIZE_THRIFT_HOST, HISTORIZE_THRIFT_PORT)

The tables are read with SQL over the target (every value cast to a string by
Spark itself), so both targets print the same text for the same tables.
"""
from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path

from historize_tools import dbt_runner as dbt

DEMO_SCHEMA_SUFFIXES = ("demo", "demo_seeds")
# The demo is enabled by this var (dbt_project.yml), so that a project installing
# historize as a package gets none of it.
DEMO_VARS = {"historize_demo": True}
EVOLVED = "historize_demo.rc_aw_product_hist"  # the last load changes its schema
LOADS = (
    {**DEMO_VARS, "demo_load": 1, "load_timestamp": "2026-01-01 06:00:00", "load_run_id": "demo-load-1"},
    {**DEMO_VARS, "demo_load": 2, "load_timestamp": "2026-02-01 06:00:00", "load_run_id": "demo-load-2"},
    {**DEMO_VARS, "demo_load": 3, "load_timestamp": "2026-03-01 06:00:00", "load_run_id": "demo-load-3"},
    # products only: a rename, a widening, a new and a retired column
    {**DEMO_VARS, "demo_load": 4, "load_timestamp": "2026-04-01 06:00:00", "load_run_id": "demo-load-4"},
)
SHOWN = {
    "historize_demo.rc_aw_product_hist": "product_id, product_title, color, list_price, discontinued_on, size, "
    "version_started_at, version_ended_at, version_state, load_run_id",
    "historize_demo.product_as_of_mid_february": "*",
    "historize_demo.product_changes_since_first_load": "*",
    "historize_demo.sales_with_product_price": "*",
    "historize_demo.fivetran_orders_history": "*",
    "historize_demo.dim_program": "program_id, created_on, current_program_name, current_admin_agency, "
    "eligibility_threshold, previous_eligibility_threshold, funding_cap_usd, program_status, effective_from, "
    "effective_to, current_flag, version, change_reason",
    "historize_demo.dim_program_audit": "program_id, change_type, changed_columns, old_values, new_values, change_ts, "
    "source_batch_id",
    "historize_demo.dim_player": "player_id, birth_date, email, phone, tier, home_property, risk_score, "
    "effective_from, effective_to, current_flag, version, change_reason",
    "historize_demo.historize_loads": "table_name, load_timestamp, load_run_id, outcome, new_keys, changed_keys, "
    "deleted_keys",
}
ORDER = {
    "historize_demo.rc_aw_product_hist": "product_id, version_started_at",
    "historize_demo.product_as_of_mid_february": "product_id",
    "historize_demo.product_changes_since_first_load": "change_at, product_id",
    "historize_demo.sales_with_product_price": "order_id",
    "historize_demo.fivetran_orders_history": "id, _fivetran_start",
    "historize_demo.dim_program": "program_id, version",
    "historize_demo.dim_program_audit": "change_ts, program_id",
    "historize_demo.dim_player": "player_id, version",
    "historize_demo.historize_loads": "load_timestamp",
}


def build(load: dict, callbacks=(), expect_success: bool = True):
    """One load: `dbt build` of the demo (models and tests; the seeds with the first load
    only, as a project's sources are there before its daily runs) with the load's vars."""
    seeds = [] if load["demo_load"] == LOADS[0]["demo_load"] else ["--exclude", "resource_type:seed"]
    return dbt.run(["build", "--select", "demo", *seeds], variables=load, callbacks=callbacks,
                   expect_success=expect_success)


def reset() -> None:
    """Drops the demo's own schemas, so the loads start from nothing."""
    dbt.run(["run-operation", "drop_demo_schemas", "--args", str({"suffixes": list(DEMO_SCHEMA_SUFFIXES)})])


def query(sql: str) -> tuple[list[str], list[tuple]]:
    """Column names and rows of `sql`, run on the current target: the embedded
    SparkSession, or the Thrift server of the `thrift` target."""
    if os.environ.get("HISTORIZE_TARGET", "local") != "thrift":
        frame = dbt.spark().sql(sql)
        return frame.columns, [tuple(row) for row in frame.collect()]
    from pyhive import hive

    connection = hive.connect(host=os.environ.get("HISTORIZE_THRIFT_HOST", "localhost"),
                              port=int(os.environ.get("HISTORIZE_THRIFT_PORT", "10000")),
                              username=os.environ.get("HISTORIZE_THRIFT_USER", "dbt"))
    try:
        cursor = connection.cursor()
        cursor.execute(sql)
        return [column[0] for column in cursor.description], cursor.fetchall()
    finally:
        connection.close()


def text_table(names: list[str], rows: list[tuple]) -> str:
    """Rows as a text table, laid out as Spark's `show(truncate=False)` lays it out."""
    cells = [["NULL" if value is None else str(value) for value in row] for row in rows]
    widths = [max([3, len(name)] + [len(row[index]) for row in cells]) for index, name in enumerate(names)]
    rule = "+" + "+".join("-" * width for width in widths) + "+"
    lines = [rule, "|" + "|".join(name.ljust(width) for name, width in zip(names, widths)) + "|", rule]
    lines += ["|" + "|".join(cell.ljust(width) for cell, width in zip(row, widths)) + "|" for row in cells]
    return "\n".join(lines + [rule]) + "\n"


def table_text(table: str, columns: str, order: str) -> str:
    """A table's rows as text: every value cast to a string by Spark (as `show` prints it)."""
    names, _ = query(f"select {columns} from {table} limit 0")
    as_strings = ", ".join(f"cast(`{name}` as string) as `{name}`" for name in names)
    return text_table(*query(f"select {as_strings} from (select {columns} from {table}) as shown order by {order}"))


def map_text(value) -> str:
    """A map<string,string> as the Thrift server sends it, `{"key":"value",...}` with its
    entries sorted (values unescaped); a local SparkSession's dict is written the same way."""
    if isinstance(value, str):
        return value
    entries = sorted(f'"{key}":' + ("null" if item is None else f'"{item}"') for key, item in value.items())
    return "{" + ",".join(entries) + "}"


def history_text(table: str, after_version: int) -> str:
    """The commits of `table` after a version: version, operation, parameters."""
    names, rows = query(f"describe history {table}")
    at = {name: names.index(name) for name in ("version", "operation", "operationParameters")}
    shown = [(row[at["version"]], row[at["operation"]], map_text(row[at["operationParameters"]]))
             for row in sorted(rows, key=lambda found: int(found[at["version"]]))
             if int(row[at["version"]]) > after_version]
    return text_table(list(at), shown)


def latest_version(table: str) -> int:
    _, rows = query(f"describe history {table} limit 1")
    return int(rows[0][0])


def tables_text(schema: str = "historize") -> str:
    """Each table the demo shows, under its heading, from the demo schemas of `schema`."""
    shown = []
    for table, columns in SHOWN.items():
        name = table.replace("historize_demo.", f"{schema}_demo.")
        shown.append(f"\n== {table}\n" + table_text(name, columns, ORDER[table]))
    return "".join(shown)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m historize_tools.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=("local", "thrift"), default=os.environ.get("HISTORIZE_TARGET", "local"),
                        help="the embedded Spark (local) or a Thrift server (thrift; ./scripts/cluster.sh start)")
    parser.add_argument("--check", type=Path, metavar="FILE",
                        help="fail unless the tables printed are exactly FILE's (tests/demo_tables.txt)")
    args = parser.parse_args(argv)
    if args.check and not args.check.is_file():
        parser.error(f"--check: no such file: {args.check}")  # before the loads, not after them
    os.environ["HISTORIZE_TARGET"] = args.target
    dbt.environment()
    dbt.run(["debug", "--quiet"])
    reset()
    before_last_load = -1
    for load in LOADS:
        if load is LOADS[-1]:
            before_last_load = latest_version(EVOLVED)
        print(f"\n== load {load['demo_load']} at {load['load_timestamp']} ({load['load_run_id']})", flush=True)
        build(load)
    tables = tables_text()
    print(tables, end="")
    print(f"\n== what load 4 did to {EVOLVED} (its Delta history)")
    print(history_text(EVOLVED, before_last_load), end="")
    dbt.run(["docs", "generate", "--quiet"], variables=DEMO_VARS)
    print("\n== dbt docs: target/index.html and target/catalog.json written; browse them with: "
          "source scripts/setup.sh && dbt docs serve")
    if args.check and (found := differences(tables, args.check)):
        print(f"\n== the tables differ from {args.check}:\n{found}", file=sys.stderr)
        return 1
    return 0


def differences(tables: str, expected: Path) -> str:
    """The lines by which the printed tables differ from `expected`'s (a unified diff), or ''."""
    return "".join(difflib.unified_diff(expected.read_text().splitlines(keepends=True),
                                        tables.splitlines(keepends=True), str(expected), "demo"))


if __name__ == "__main__":
    sys.exit(main())
