"""A load killed after any statement, then rerun, ends exactly as the same load
uninterrupted: the table, its audit table, their columns and properties.

For each materialization, one load does everything it can: new, changed,
deleted and returning keys; a table rename (the model's former name, and
`scd_type6`'s audit table along with it); a schema change with a renamed, a
new, a retired and (where the materialization widens) widened columns; a new
table property; for `scd_type6`, on tables built by the release with hex
keys, which the load also rewrites compact. The statements are discovered, not listed here: the load
runs once uninterrupted, and after each of its statements the schema's tables
and their Delta versions are read. A statement after which they are unchanged
wrote nothing, so a load killed there leaves the tables as they were and its
rerun is the uninterrupted load itself. For the statements that wrote, the
load runs again from the same start and is killed right after its first
write (the error comes from a dbt callback, as a dropped connection would);
its rerun is killed right after its own first write, and so on, each rerun
resuming where the killed run stopped, until a rerun writes nothing more. (A
rerun makes again a write that is the first of a pair, a retired column's
comment before its property; it is killed after the next one.) So the load
is killed once after each of its writes in turn; after each kill no
key has two open versions (what a reader could see between statements), and
the end equals the uninterrupted load's."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

import pytest

from probes import StatementProbe, kill_after_each_write, schema_folder, tables_and_versions
from projects import release_project

T1, T2, T3 = (dt.datetime(2026, 1, d, 6) for d in (1, 2, 3))
S1, S2, S3 = (dt.datetime(2026, 2, d) for d in (1, 2, 3))
P = Decimal
# What RESTORE leaves as a later version set it: the protocol (it is never
# downgraded) and the column mapping's highest id (ids are never reused).
UNRESTORED = ("delta.feature.", "delta.minReaderVersion", "delta.minWriterVersion", "delta.columnMapping.maxColumnId")


@dataclass
class Scenario:
    kind: str
    old: str  # the model's name for loads 1 and 2, its former name in load 3
    new: str
    config: str
    source_ddl: tuple[str, str]  # loads 1 and 2, load 3
    loads: tuple[list, list, list]
    renamed_column: tuple[str, str]  # (former name, name) in load 3
    open_when: str  # a version is open
    audit: bool = False
    wall_clock_columns: tuple[str, ...] = ()  # written with the run's own time
    # loads 1 and 2 made by the release with hex keys, so that load 3 also rewrites the tables compact
    built_by_release: bool = False

    def tables(self, name: str) -> list[str]:
        return [name] + ([f"{name}_audit"] if self.audit else [])


SCENARIOS = {
    "scd2_hist": Scenario(
        "scd2_hist", "old_hist", "new_hist", "materialized='scd2_hist', unique_key='id'",
        ("id int, name string, price decimal(10,2), legacy string, qty int",
         "id int, title string, price decimal(12,2), qty bigint, size string"),
        ([(1, "a", P("1.00"), "l1", 1), (2, "b", P("2.00"), "l2", 2), (3, "c", P("3.00"), "l3", 3), (4, "d", P("4.00"), "l4", 4)],
         [(1, "a", P("1.00"), "l1", 1), (2, "b", P("2.00"), "l2", 2), (3, "c", P("3.00"), "l3", 3)],
         # 1 unchanged, 2 changed, 3 deleted, 4 back, 5 new; name -> title, price and qty widened,
         # legacy retired, size new
         [(1, "a", P("1.00"), 1, None), (2, "b2", P("2.00"), 2, None), (4, "d", P("4.00"), 4, None), (5, "e", P("5.00"), 5, "s")]),
        ("name", "title"), "version_ended_at is null", wall_clock_columns=("loaded_at",)),
    "scd_type6": Scenario(
        "scd_type6", "old_dim", "new_dim", "materialized='scd_type6', unique_key='k', type1_columns=['b'], audit=true",
        ("k int, a int, b string, c string", "k int, alpha bigint, b string, d string"),
        ([(1, 10, "x", "c1"), (2, 20, "y", "c2"), (3, 30, "z", "c3"), (4, 40, "w", "c4")],
         [(1, 10, "x", "c1"), (2, 20, "y", "c2"), (3, 30, "z", "c3")],
         # 1 unchanged, 2 Type 1 and Type 2 changes, 3 deleted, 4 back, 5 new; a -> alpha widened,
         # c retired, d new
         [(1, 10, "x", None), (2, 20, "y2", "d2"), (4, 40, "w", None), (5, 50, "v", "d5")]),
        ("a", "alpha"), "current_flag", audit=True, built_by_release=True),
    "fivetran_history": Scenario(
        "fivetran_history", "old_ft", "new_ft", "materialized='fivetran_history', unique_key='id'",
        ("id int, col1 string, col2 string, _fivetran_start timestamp, _fivetran_op string, _fivetran_synced timestamp",
         "id int, label string, col3 string, _fivetran_start timestamp, _fivetran_op string, _fivetran_synced timestamp"),
        ([(k, f"v{k}", "x", T1, "upsert", S1) for k in (1, 2, 3, 4)],
         [(4, "v4", "x", T2, "delete", S2)],
         # 1 updated, 2 upserted, 3 deleted, 4 back, 5 new; col1 -> label, col2 retired, col3 new
         [(1, "w1", "z", T3, "update", S3), (2, "w2", "z", T3, "upsert", S3), (3, "v3", None, T3, "delete", S3),
          (4, "w4", "z", T3, "upsert", S3), (5, "w5", "z", T3, "upsert", S3)]),
        ("col1", "label"), "_fivetran_active"),
}


def write_model(project, scenario: Scenario, load: int) -> None:
    for path in (project.path / "models").glob("*"):
        path.unlink()
    source = "select * from {{ target.schema }}.snapshot"
    if load < 3:
        project.model(scenario.old, f"{{{{ config({scenario.config}) }}}} {source}")
        return
    meta = f"meta={{'former_names': ['{scenario.old}'], 'tblproperties': {{'historize.owner': 'team'}}}}"
    project.model(scenario.new, f"{{{{ config({scenario.config}, {meta}) }}}} {source}")
    former, name = scenario.renamed_column
    project.write("models/schema.yml", f"version: 2\nmodels:\n  - name: {scenario.new}\n    columns:\n"
                                       f"      - name: {name}\n        meta: {{former_names: [{former}]}}\n")


def run_load(project, scenario: Scenario, load: int, callbacks=(), expect_success=True):
    project.create_source("snapshot", scenario.source_ddl[load == 3], scenario.loads[load - 1])
    at = (T1, T2, T3)[load - 1]
    return project.run("run", variables={"load_timestamp": f"{at:%Y-%m-%d %H:%M:%S}", "load_run_id": f"r{load}"},
                       callbacks=callbacks, expect_success=expect_success)


def catalog_tables_and_versions(project) -> tuple:
    """The same, from the catalog and Delta's history (to check the folders against)."""
    names = sorted(row[1] for row in project.sql(f"show tables in {project.schema}")
                   if not row[2] and row[1] != "snapshot")
    return tuple((name, project.sql(f"describe history {project.schema}.{name} limit 1")[0][0]) for name in names)


def state(project, scenario: Scenario, name: str) -> dict:
    """Rows (without the columns the run's clock writes), columns and properties of the
    model's tables, and which of the scenario's tables exist."""
    found = {}
    for table in scenario.tables(name):
        columns = project.columns(table)
        kept = ", ".join(f"`{c[0]}`" for c in columns if c[0] not in scenario.wall_clock_columns)
        found[table] = {
            "rows": sorted(map(repr, project.table(table, kept))),
            "columns": columns,
            "properties": {name: value for name, value in project.sql(f"show tblproperties {project.schema}.{table}")
                           if not name.startswith(UNRESTORED)},
        }
    names = {row[1] for row in project.sql(f"show tables in {project.schema}") if not row[2]}
    found["tables"] = sorted(names & set(scenario.tables(scenario.old) + scenario.tables(scenario.new)))
    return found


def open_versions_per_key(project, scenario: Scenario) -> list[tuple]:
    """Keys with more than one open version, in whichever of the scenario's tables exists."""
    names = {row[1] for row in project.sql(f"show tables in {project.schema}") if not row[2]}
    key = "k" if scenario.kind == "scd_type6" else "id"
    doubled = []
    for table in {scenario.old, scenario.new} & names:
        doubled += project.sql(f"select '{table}', {key}, count(*) from {project.schema}.{table} "
                               f"where {scenario.open_when} group by {key} having count(*) > 1")
    return doubled


def back_to_start(project, scenario: Scenario, start: dict) -> None:
    """The tables as they were before load 3: renamed back, then restored."""
    names = {row[1] for row in project.sql(f"show tables in {project.schema}") if not row[2]}
    for old, new in zip(scenario.tables(scenario.old), scenario.tables(scenario.new)):
        if new in names:
            project.sql(f"alter table {project.schema}.{new} rename to {project.schema}.{old}")
        project.sql(f"restore table {project.schema}.{old} to version as of {start[old]}")


@pytest.mark.parametrize("kind", SCENARIOS)
def test_a_load_killed_after_any_statement_ends_correct_when_rerun(project, kind, tmp_path):
    scenario = SCENARIOS[kind]
    first = release_project(tmp_path / "release", project.schema) if scenario.built_by_release else project
    for load in (1, 2):
        write_model(first, scenario, load)
        run_load(first, scenario, load)
    schema_dir = schema_folder(project)
    start = dict(tables_and_versions(schema_dir))
    assert tuple(start.items()) == catalog_tables_and_versions(project)
    before = state(project, scenario, scenario.old)

    write_model(project, scenario, 3)
    probe = lambda: tables_and_versions(schema_dir)  # noqa: E731
    reference = StatementProbe(scenario.new, probe).started()
    run_load(project, scenario, 3, callbacks=[reference])
    expected = state(project, scenario, scenario.new)
    assert tables_and_versions(schema_dir) == catalog_tables_and_versions(project)  # the table renamed too
    assert expected["tables"] == sorted(scenario.tables(scenario.new))
    assert expected[scenario.new]["properties"]["historize.owner"] == "team"
    writing = reference.writes()
    print(f"{kind}: {len(reference.probes) - 1} statements, {len(writing)} of them wrote: {writing}")
    assert len(writing) >= 4, writing  # the rename, the schema change, the property, the write at least

    back_to_start(project, scenario, start)
    assert state(project, scenario, scenario.old) == before

    def no_key_open_twice(kills):
        assert open_versions_per_key(project, scenario) == [], kills

    kills = kill_after_each_write(scenario.new, probe, writing, lambda callbacks: run_load(
        project, scenario, 3, callbacks=callbacks, expect_success=False), no_key_open_twice)
    print(f"{kind}: killed after statement {', '.join(map(str, kills))} of each rerun")
    assert len(kills) >= len(writing)
    assert state(project, scenario, scenario.new) == expected
