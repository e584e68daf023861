"""Refusals not covered by each materialization's own tests: a bad option, a
select that clashes with the table, a bad var, a macro or test given what it
cannot use. Each fails with an error naming the problem and the offending
values, and every table keeps its Delta version and rows (README.md, "What is
refused", lists every refusal and where it is tested)."""
from __future__ import annotations

import pytest

from historize_tools import dbt_runner as dbt

from projects import PROJECT_YML, Project

AT = {"load_timestamp": "2026-01-01 06:00:00", "load_run_id": "r1"}
SOURCES = {
    "src_hist": "select 1 as id, 'a' as name",
    "src_dim": "select 1 as id, 'a' as t0, 'b' as t1, 'c' as t2",
    "src_ft": "select 1 as id, 'upsert' as _fivetran_op, timestamp'2026-01-01 00:00:00' as _fivetran_start, 'x' as val",
}
CONFIGS = {
    "hist": "materialized='scd2_hist', unique_key='id'",
    "dim": "materialized='scd_type6', unique_key='id', type0_columns=['t0'], type1_columns=['t1'], "
           "type3_columns={'t2': 'prev'}, audit=true",
    "ft": "materialized='fivetran_history', unique_key='id'",
}
TABLES = ("hist", "dim", "dim_audit", "ft", "old_a", "old_b")


def history_model(name: str, config: str | None = None, select: str | None = None) -> tuple[str, str]:
    return (f"models/{name}.sql",
            f"{{{{ config({config or CONFIGS[name]}) }}}} {select or f'select * from {{{{ target.schema }}}}.src_{name}'}")


def pit_model(sql: str) -> tuple[str, str]:
    return "models/pit.sql", sql


# name: ((path, text) to write, dbt command, vars, the error)
CASES = {
    "scd2_hist select clashes": (
        history_model("hist", select="select *, 'x' as version_state from {{ target.schema }}.src_hist"),
        ("run", "--select", "hist"), AT,
        "model hist: the select has column(s) version_state, which scd2_hist writes itself; rename them in the select"),
    "scd_type6 select clashes": (
        history_model("dim", select="select *, 1 as version from {{ target.schema }}.src_dim"),
        ("run", "--select", "dim"), AT,
        "model dim: the select has column version, which scd_type6 writes itself; rename it in the select"),
    "scd_type6 previous-value column clashes": (
        history_model("dim", CONFIGS["dim"].replace("{'t2': 'prev'}", "{'t2': 'id2'}"),
                      "select *, 2 as id2 from {{ target.schema }}.src_dim"),
        ("run", "--select", "dim"), AT,
        "model dim: the previous-value column id2 of t2 collides with a column of the select or of the table"),
    "scd_type6 audit option": (
        history_model("dim", CONFIGS["dim"].replace("audit=true", "audit='yes'")),
        ("run", "--select", "dim"), AT, "option 'audit' is 'yes'; allowed: True, False"),
    "scd_type6 load older than the table's": (
        None, ("run", "--select", "dim"), {**AT, "load_timestamp": "2025-12-31 06:00:00"},
        "model dim: load_timestamp 2025-12-31 06:00:00.000000 is older than 2026-01-01 06:00:00, the newest time "
        "already in {schema}.dim"),
    "scd2_hist load older than the table's, changing nothing": (
        None, ("run", "--select", "hist"), {**AT, "load_timestamp": "2025-12-31 06:00:00"},
        "model hist: load_timestamp 2025-12-31 06:00:00.000000 is older than 2026-01-01 06:00:00, the newest time "
        "already in {schema}.hist"),
    "scd_type6 load rerun over other data": (
        history_model("dim", select="select 1 as id, 'a' as t0, 'b' as t1, 'other' as t2"),
        ("run", "--select", "dim"), AT,
        "model dim: load_timestamp 2026-01-01 06:00:00.000000 was already loaded with other data: the current row of "
        "key (1) began at this load_timestamp and now differs (changed); a rerun must see the same snapshot, a new "
        "snapshot needs a new load_timestamp. Nothing was written"),
    "fivetran_history unmodified_string": (
        history_model("ft", CONFIGS["ft"] + ", unmodified_string=5"),
        ("run", "--select", "ft"), AT, "option 'unmodified_string' is '5'; expected a non-empty string"),
    "unique_key a mapping": (
        # under meta: dbt's own parser refuses such a unique_key in config()
        history_model("hist", "materialized='scd2_hist', meta={'unique_key': {'id': 1}}"),
        ("run", "--select", "hist"), AT, "option 'unique_key' is {'id': 1}; expected a name or a list of names"),
    "unique_key holds a number": (
        history_model("hist", "materialized='scd2_hist', meta={'unique_key': ['id', 5]}"),
        ("run", "--select", "hist"), AT, "option 'unique_key' holds 5; every entry must be a name"),
    "empty load_run_id": (
        None, ("run", "--select", "hist"), {**AT, "load_run_id": " "}, "var 'load_run_id' is empty"),
    "two former names exist": (
        history_model("hist_new", CONFIGS["hist"] + ", meta={'former_names': ['old_a', 'old_b']}",
                      "select * from {{ target.schema }}.src_hist"),
        ("run", "--select", "hist_new"), AT,
        "model hist_new: several of its former names exist as tables: {schema}.old_a, {schema}.old_b; keep one. "
        "Nothing was written"),
    "as_of on a missing table": (
        pit_model("select * from ({{ historize.as_of(api.Relation.create(schema=target.schema, identifier='missing'), "
                  "'current_timestamp()') }}) as v"),
        ("run", "--select", "pit"), AT, "as_of: {schema}.missing does not exist (or has no columns)"),
    "as_of on a missing table, compiled": (
        # dbt compile before a table's first load compiles from the config of the model that
        # builds it; a table no model builds is refused as at run time
        pit_model("select * from ({{ historize.as_of(api.Relation.create(schema=target.schema, identifier='missing'), "
                  "'current_timestamp()') }}) as v"),
        ("compile", "--select", "pit"), AT, "as_of: {schema}.missing does not exist (or has no columns)"),
    "as_of without a table": (
        pit_model("select * from ({{ historize.as_of(none, 'current_timestamp()') }}) as v"),
        ("run", "--select", "pit"), AT, "as_of: the history table argument is missing"),
    "current on a table not built by historize": (
        pit_model("select * from ({{ historize.current(api.Relation.create(schema=target.schema, identifier='old_a')) }}) as c"),
        ("run", "--select", "pit"), AT,
        "current: {schema}.old_a is not a historize table (it records no historize.kind and its columns are id)"),
    "as_of interval": (
        pit_model("select * from ({{ historize.as_of(ref('hist'), 'current_timestamp()', interval='open') }}) as v"),
        ("run", "--select", "pit"), AT, "option 'interval' is 'open'; allowed: half_open, closed"),
    "as_of_join keys differ in length": (
        pit_model("{{ historize.as_of_join(ref('hist'), ref('hist'), 'version_started_at', columns=['name'], "
                  "fact_key=['id', 'name']) }}"),
        ("run", "--select", "pit"), AT,
        "as_of_join: fact_key id, name and the key of {schema}.hist (id) differ in length"),
    "sequential_versions without a version column": (
        ("models/tests.yml", "version: 2\nmodels:\n  - name: hist\n    data_tests: [historize.sequential_versions]\n"),
        ("test", "--select", "hist"), AT, "sequential_versions on {schema}.hist needs version_column"),
}


@pytest.fixture(scope="module")
def loaded(request, tmp_path_factory, spark_dir):
    """One project whose three history tables hold a load, and two plain tables a
    model's former names could name."""
    project = Project(dbt.package_project(tmp_path_factory.mktemp("refusals") / "project", PROJECT_YML), "trefusals")
    project.sql(f"create schema if not exists {project.schema}")
    for name, select in SOURCES.items():
        project.sql(f"create or replace view {project.schema}.{name} as {select}")
    for name in ("old_a", "old_b"):
        project.sql(f"create table {project.schema}.{name} using delta as select 1 as id")
    write_models(project)
    project.run("run", variables=AT)
    yield project
    project.sql(f"drop schema if exists {project.schema} cascade")


def write_models(project) -> None:
    for path in (project.path / "models").glob("*"):
        path.unlink()
    for name in CONFIGS:
        project.write(*history_model(name))


@pytest.mark.parametrize("case", CASES)
def test_refused_naming_the_values_and_nothing_changes(loaded, case):
    change, command, variables, error = CASES[case]
    write_models(loaded)
    if change:
        loaded.write(*change)
    with loaded.unchanged(*TABLES):
        message = loaded.fail(*command, variables=variables)
    assert error.replace("{schema}", loaded.schema) in message, message
