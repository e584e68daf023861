"""The Dagster example (examples/dagster): three daily partitions materialized in
order, then an earlier one as a backfill, through Dagster's own API in this
process (dbt runs as Dagster's dbt CLI resource runs it, against the cluster's
Thrift server). The history then equals loading the same days in time order
(dbt in-process, in a schema of its own); each materialization of the history
model carries what its load did; every dbt test, the invariant tests among them,
ran as a passing asset check."""
from __future__ import annotations

from historize_tools import demo
from historize_tools import dbt_runner as dbt

from projects import on_cluster

SCHEMA, IN_ORDER_SCHEMA = "tdagster", "tdagster_in_order"
INVARIANTS = ("one_open_version", "no_overlapping_versions", "no_gaps", "open_version_unbounded")
HISTORY = "rc_aw_product_hist"
# January, then two days of March (the second changes nothing), then February late.
PARTITIONS = ("2026-01-01", "2026-03-01", "2026-03-15", "2026-02-01")
COLUMNS = ("rc_aw_product_hist_key, product_id, product_name, color, list_price, discontinued_on, row_hash, "
           "version_started_at, version_ended_at, version_state, load_run_id")


def drop_schemas(schema: str) -> None:
    """The demo's schemas under `schema` (its models and its seeds)."""
    for suffix in demo.DEMO_SCHEMA_SUFFIXES:
        demo.query(f"drop schema if exists {schema}_{suffix} cascade")


def test_a_backfill_through_dagster_ends_as_loading_in_time_order(running_cluster):
    for schema in (SCHEMA, IN_ORDER_SCHEMA):
        with on_cluster(running_cluster, schema):
            drop_schemas(schema)
    with on_cluster(running_cluster, SCHEMA):
        dbt.run(["parse"], variables=demo.DEMO_VARS)  # the manifest the assets are built from
        from dagster import materialize

        from historize_dagster import definitions

        loads = {}
        for key in PARTITIONS:
            result = materialize([definitions.product_history], partition_key=key,
                                 resources={"dbt": definitions.DbtCliResource(project_dir=definitions.project)})
            assert result.success, key
            history = [m.materialization for m in result.get_asset_materialization_events()
                       if m.materialization.asset_key.path[-1] == HISTORY]
            assert len(history) == 1, key
            loads[key] = {name: value.value for name, value in history[0].metadata.items() if name.startswith("historize/")}
            checks = result.get_asset_check_evaluations()
            assert checks and all(check.passed for check in checks), [(c.check_name, c.passed) for c in checks]
            assert {c.check_name for c in checks if c.asset_key.path[-1] == HISTORY} == {
                f"historize_{test}_rc_aw_product_hist_rc_aw_product_key" for test in INVARIANTS} | {
                f"{test}_rc_aw_product_hist_rc_aw_product_hist_key" for test in ("not_null", "unique")}
        _, backfilled = demo.query(f"select {COLUMNS} from {SCHEMA}_demo.{HISTORY} order by rc_aw_product_hist_key")
        _, ledger = demo.query(f"select load_run_id, outcome, new_keys, changed_keys, deleted_keys "
                               f"from {SCHEMA}_demo.historize_loads order by recorded_at")

    with on_cluster(running_cluster, IN_ORDER_SCHEMA):  # the seeds once, then each day's load
        dbt.run(["seed", "--select", f"+{HISTORY}"], variables=demo.DEMO_VARS)
        for key in sorted(PARTITIONS):
            dbt.run(["run", "--select", f"+{HISTORY}"], variables=definitions.load_vars(key))
        _, in_order = demo.query(f"select {COLUMNS} from {IN_ORDER_SCHEMA}_demo.{HISTORY} order by rc_aw_product_hist_key")
        drop_schemas(IN_ORDER_SCHEMA)

    assert backfilled == in_order and len(in_order) == 10  # the versions of January to March (README)
    assert [row[:2] for row in ledger] == [(key, "written" if key != "2026-03-15" else "nothing to write")
                                           for key in PARTITIONS]
    for key, (run_id, outcome, new, changed, deleted) in zip(PARTITIONS, ledger):
        assert loads[key] == {"historize/outcome": outcome, "historize/rows_affected": new + changed + deleted,
                              "historize/load": loads[key]["historize/load"]}
        assert loads[key]["historize/load"].startswith(f"{new} new, {changed} changed, {deleted} deleted"), loads[key]
    with on_cluster(running_cluster, SCHEMA):
        drop_schemas(SCHEMA)
