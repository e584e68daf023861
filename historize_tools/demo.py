"""The demo: builds the demo project's loads in order on the embedded Spark and
prints the history tables that result.

    python -m historize_tools.demo      (what ./scripts/demo.sh runs)
"""
from __future__ import annotations

import sys

from historize_tools import dbt_runner as dbt

DEMO_SCHEMA_SUFFIXES = ("demo", "demo_seeds")
EVOLVED = "historize_demo.rc_aw_product_hist"  # the last load changes its schema
LOADS = (
    {"demo_load": 1, "load_timestamp": "2026-01-01 06:00:00", "load_run_id": "demo-load-1"},
    {"demo_load": 2, "load_timestamp": "2026-02-01 06:00:00", "load_run_id": "demo-load-2"},
    {"demo_load": 3, "load_timestamp": "2026-03-01 06:00:00", "load_run_id": "demo-load-3"},
    # products only: a rename, a widening, a new and a retired column
    {"demo_load": 4, "load_timestamp": "2026-04-01 06:00:00", "load_run_id": "demo-load-4"},
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
}


def build(load: dict, callbacks=()) -> None:
    """One load: `dbt build` of the demo (seeds, models, tests) with the load's vars."""
    dbt.run(["build", "--select", "demo"], variables=load, callbacks=callbacks)


def reset() -> None:
    """Drops the demo's own schemas, so the loads start from nothing."""
    dbt.run(["run-operation", "drop_demo_schemas", "--args", str({"suffixes": list(DEMO_SCHEMA_SUFFIXES)})])


def main() -> int:
    dbt.environment()
    dbt.run(["debug", "--quiet"])
    reset()
    before_last_load = -1
    for load in LOADS:
        if load is LOADS[-1]:
            before_last_load = dbt.spark().sql(f"describe history {EVOLVED} limit 1").first().version
        print(f"\n== load {load['demo_load']} at {load['load_timestamp']} ({load['load_run_id']})", flush=True)
        build(load)
    session = dbt.spark()
    for table, columns in SHOWN.items():
        print(f"\n== {table}")
        session.sql(f"select {columns} from {table} order by {ORDER[table]}").show(50, truncate=False)
    print(f"\n== what load 4 did to {EVOLVED} (its Delta history)")
    session.sql(f"describe history {EVOLVED}").where(f"version > {before_last_load}").select(
        "version", "operation", "operationParameters").orderBy("version").show(50, truncate=False)
    dbt.run(["docs", "generate", "--quiet"])
    print("\n== dbt docs: target/index.html and target/catalog.json written; browse them with: "
          "source scripts/setup.sh && dbt docs serve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
