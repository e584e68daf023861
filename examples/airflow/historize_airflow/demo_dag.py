"""The demo's loads as an Airflow DAG, with astronomer-cosmos: one DAG run a month.

A DAG run is a load: `load_timestamp` is its logical date (UTC), `load_run_id` its run
id, and the demo's snapshot of the logical date's month is the select (`demo_load`).
Cosmos renders the demo's seeds and models as tasks in dependency order, each model
followed by its dbt tests (the invariant tests of the history models among them), so
a failed test stops what depends on the model. One run at a time (`max_active_runs=1`):
history loads come in time order. A task that fails is retried once; a history load
killed part way and run again ends as if it had run once.

    pip install -r scripts/lanes/airflow.txt   # Airflow 3 and cosmos, beside dbt-spark
    dbt parse --vars '{historize_demo: true}'
    airflow dags test historize_demo 2026-01-01T06:00:00+00:00

dbt runs in the Airflow worker's process (cosmos' dbtRunner invocation) on the target
of `HISTORIZE_TARGET` (the embedded Spark by default, `thrift` for a cluster), from the
manifest that `dbt parse` of this repository writes to `target/manifest.json`."""
from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

from cosmos import DbtDag, ExecutionConfig, ProfileConfig, ProjectConfig, RenderConfig
from cosmos.constants import ExecutionMode, InvocationMode, LoadMode, TestBehavior

ROOT = Path(__file__).resolve().parents[3]
# The demo's models are enabled by the var historize_demo (dbt_project.yml).
DEMO_VARS = {"historize_demo": True}
# A run's load, from its logical date: Airflow renders these templates for each task.
LOAD_VARS = {
    **DEMO_VARS,
    "demo_load": "{{ logical_date.month }}",
    "load_timestamp": "{{ logical_date.strftime('%Y-%m-%d %H:%M:%S') }}",
    "load_run_id": "{{ run_id }}",
}

historize_demo = DbtDag(
    dag_id="historize_demo",
    schedule="0 6 1 * *",
    start_date=datetime(2026, 1, 1, 6, tzinfo=timezone.utc),
    catchup=False,
    max_active_runs=1,
    default_args={"retries": 1, "retry_delay": timedelta(seconds=0)},
    project_config=ProjectConfig(ROOT, manifest_path=ROOT / "target" / "manifest.json", project_name="historize"),
    profile_config=ProfileConfig(profile_name="historize", target_name=os.environ.get("HISTORIZE_TARGET", "local"),
                                 profiles_yml_filepath=ROOT / "profiles" / "profiles.yml"),
    execution_config=ExecutionConfig(execution_mode=ExecutionMode.LOCAL, invocation_mode=InvocationMode.DBT_RUNNER),
    render_config=RenderConfig(load_method=LoadMode.DBT_MANIFEST, select=["path:models/demo", "path:seeds/demo"],
                               test_behavior=TestBehavior.AFTER_EACH),
    operator_args={"vars": LOAD_VARS, "install_deps": False},
)
