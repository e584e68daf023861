"""The demo's product history as Dagster assets, one partition per day.

A partition is a load: `load_timestamp` is the day at 06:00 UTC, `load_run_id` the
partition key, and the demo's snapshot of that day's month is the select
(`demo_load`). `rc_aw_product_hist` keeps late loads (`out_of_order='reconcile'`),
so a missed day is backfilled by materializing its partition after later ones.
Each history model's materialization carries what its load did (dbt's
`adapter_response`: the counts and `rows_affected`) as metadata; the model's dbt
tests, the invariant tests among them, are its asset checks.

    pip install -e '.[dagster]'
    dagster dev -m historize_dagster.definitions

dbt runs as `dbt build` on the target of `HISTORIZE_TARGET` (the embedded Spark by
default, `thrift` for a cluster)."""

import datetime as dt
import json
import os
from pathlib import Path
from typing import Iterator

from dagster import AssetExecutionContext, DailyPartitionsDefinition, Definitions, Output
from dagster_dbt import DbtCliResource, DbtProject, dbt_assets

ROOT = Path(__file__).resolve().parents[3]
# The demo's snapshots are monthly, January to March (April's changes the schema).
PARTITIONS = DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-04-01")
HISTORY_MATERIALIZATIONS = ("scd2_hist", "scd_type6", "fivetran_history")

# The demo's models are enabled by the var historize_demo (dbt_project.yml).
DEMO_VARS = {"historize_demo": True}
project = DbtProject(project_dir=ROOT, profiles_dir=ROOT / "profiles",
                     target_path=Path(os.environ.get("DBT_TARGET_PATH", ROOT / "target")),
                     prepare_project_cli_args=["parse", "--quiet", "--vars", json.dumps(DEMO_VARS)])
project.prepare_if_dev()


def load_vars(partition_key: str) -> dict:
    """The load of a day's partition."""
    day = dt.date.fromisoformat(partition_key)
    return {**DEMO_VARS, "load_timestamp": f"{partition_key} 06:00:00", "load_run_id": partition_key,
            "demo_load": day.month}


def load_metadata(run_results: dict) -> dict[str, dict]:
    """What each history model's load did, by unique_id: its adapter_response."""
    found = {}
    for result in run_results["results"]:
        response = result.get("adapter_response") or {}
        if response.get("code") in ("written", "nothing to write"):
            found[result["unique_id"]] = {"historize/load": response["_message"], "historize/outcome": response["code"],
                                          "historize/rows_affected": response["rows_affected"]}
    return found


@dbt_assets(manifest=project.manifest_path, select="+rc_aw_product_hist", partitions_def=PARTITIONS)
def product_history(context: AssetExecutionContext, dbt: DbtCliResource) -> Iterator:
    invocation = dbt.cli(["build", "--vars", json.dumps(load_vars(context.partition_key))], context=context,
                         raise_on_error=False)
    events = list(invocation.stream())
    loads = load_metadata(invocation.get_artifact("run_results.json"))
    for event in events:
        unique_id = event.metadata.get("unique_id") if isinstance(event, Output) else None
        if unique_id is not None and unique_id.value in loads:
            event = event.with_metadata({**event.metadata, **loads[unique_id.value]})
        yield event
    if not invocation.is_successful():
        raise RuntimeError(f"dbt build of partition {context.partition_key} failed; see the dbt events above")


defs = Definitions(assets=[product_history], resources={"dbt": DbtCliResource(project_dir=project)})
