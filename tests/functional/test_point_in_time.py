"""as_of, changes_since and as_of_join against hand-computed answers, on each
kind's interval convention, including instants exactly on a boundary."""
from __future__ import annotations

import datetime as dt
import re

from test_invariants import MS, T1, T2, T3, T4, TABLES

SECOND = dt.timedelta(seconds=1)


def lit(at: dt.datetime) -> str:
    return f"timestamp'{at.strftime('%Y-%m-%d %H:%M:%S.%f')}+00:00'"


def test_as_of_changes_since_and_as_of_join(project):
    for table in ("scd2_valid", "type6_valid", "fivetran_valid"):
        project.create_table(table, *TABLES[table])
    project.create_source("facts", "fact_id int, id int, event_time timestamp",
                          [(1, 1, T1), (2, 1, T2), (3, 2, T2 - SECOND), (4, 2, T3), (5, 3, T4), (6, 9, T1)])
    project.write("models/sources.yml", f"""
        version: 2
        sources:
          - name: h
            schema: {project.schema}
            tables: [{{name: scd2_valid}}, {{name: type6_valid}}, {{name: fivetran_valid}}, {{name: facts}}]
        """)
    instants = {"before_t2": T2 - dt.timedelta(microseconds=1), "at_t2": T2, "at_t3": T3, "t2_minus_ms": T2 - MS,
                "t2_plus_ms": T2 + MS}
    for table in ("scd2_valid", "type6_valid", "fivetran_valid"):
        for label, at in instants.items():
            project.model(f"as_of_{table}_{label}", f"""
                {{{{ config(materialized='table') }}}}
                select id, cast({table.split('_')[0] == 'scd2' and 'name' or 'null'} as string) as name
                from ({{{{ historize.as_of(source('h', '{table}'), "{lit(at)}") }}}}) as v
                """)
    for label, since in {"since_t1": T1, "since_t2": T2}.items():
        project.model(f"changes_{label}", f"""
            {{{{ config(materialized='table') }}}}
            select id, name, change_kind, change_at
            from ({{{{ historize.changes_since(source('h', 'scd2_valid'), "{lit(since)}", unique_key='id') }}}}) as c
            """)
    project.model("facts_with_name", """
        {{ config(materialized='table') }}
        {{ historize.as_of_join(source('h', 'facts'), source('h', 'scd2_valid'), 'event_time', 'id', ['name'],
                                prefix='product_') }}
        """)
    project.run("run")

    def ids(model):
        return project.table(model, "id, name", "id")

    # scd2_hist: half-open [started, ended); deleted keys vanish at their deletion
    assert ids("as_of_scd2_valid_before_t2") == [(1, "a"), (2, "c"), (3, "d")]
    assert ids("as_of_scd2_valid_at_t2") == [(1, "b")]
    assert ids("as_of_scd2_valid_at_t3") == [(1, "b"), (3, "e")]
    # scd_type6: half-open [effective_from, effective_to), the sentinel is open
    assert [i for i, _ in ids("as_of_type6_valid_before_t2")] == [1, 2]
    assert [i for i, _ in ids("as_of_type6_valid_at_t2")] == [1, 2]
    assert [i for i, _ in ids("as_of_type6_valid_at_t3")] == [1]
    # fivetran: closed [start, end]; a delete's end is the delete's own instant
    assert [i for i, _ in ids("as_of_fivetran_valid_t2_minus_ms")] == [1, 2]
    assert [i for i, _ in ids("as_of_fivetran_valid_at_t2")] == [1, 2]
    assert [i for i, _ in ids("as_of_fivetran_valid_t2_plus_ms")] == [1]
    assert [i for i, _ in ids("as_of_fivetran_valid_at_t3")] == [1, 2]

    assert project.table("changes_since_t1", "*", "change_at, id, change_kind") == [
        (1, "b", "changed", T2), (2, "c", "deleted", T2), (3, "d", "deleted", T2), (3, "e", "new", T3),
    ]
    assert project.table("changes_since_t2", "*", "change_at, id") == [(3, "e", "new", T3)]
    assert project.table("facts_with_name", "fact_id, product_name", "fact_id") == [
        (1, "a"), (2, "b"), (3, "c"), (4, None), (5, "e"), (6, None),
    ]


HIST = "id int, name string"
LEGACY = """
    create table {schema}.legacy_hist (legacy_hist_key string, id int, name string, row_hash string,
        version_started_at timestamp, version_ended_at timestamp, version_state string, load_run_id string,
        loaded_at timestamp)
    using delta tblproperties ('delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2',
        'delta.minWriterVersion' = '5')
"""
SHAPES = {  # model: (select, the error it must fail with, or None)
    "pit_as_of": ("select id, name from ({{ historize.as_of(ref('p_hist'), \"%s\") }}) as v" % lit(T1), None),
    "pit_changes": ("select id, name, change_kind from ({{ historize.changes_since(ref('p_hist'), \"%s\") }}) as c"
                    % lit(T1), None),
    "pit_join": ("select fact_id, product_name from ({{ historize.as_of_join(source('h', 'facts'), ref('p_hist'), "
                 "'event_time', columns=['name'], prefix='product_') }}) as j", None),
    "bad_no_since": ("select * from ({{ historize.changes_since(ref('p_hist'), none) }}) as c",
                     "historize: changes_since on {schema}.p_hist: argument 'since' is missing"),
    "bad_no_columns": ("select * from ({{ historize.as_of_join(source('h', 'facts'), ref('p_hist'), 'event_time') }}) as j",
                       "historize: as_of_join on {schema}.p_hist: argument 'columns' is missing"),
    "bad_key": ("select * from ({{ historize.changes_since(ref('p_hist'), 'now()', unique_key='nope') }}) as c",
                "historize: changes_since: unique_key names nope, which {schema}.p_hist does not have; its columns are"),
    "bad_plain_key": ("select * from ({{ historize.changes_since(source('h', 'facts'), 'now()', valid_from='event_time', "
                      "valid_to='event_time') }}) as c",
                      "historize: changes_since: {schema}.facts records no unique_key"),
    "bad_plain": ("select * from ({{ historize.as_of(source('h', 'facts'), 'now()') }}) as v",
                  "historize: as_of: {schema}.facts is not a historize table (it records no historize.kind and its "
                  "columns are fact_id, id, event_time); give valid_from and valid_to"),
    "bad_string": ("select * from ({{ historize.as_of('facts', 'now()') }}) as v",
                   "historize: as_of: 'facts' is not a relation; pass ref('model') or source('source', 'table')"),
}


def test_tables_built_by_historize_need_no_key_and_bad_calls_are_named(project):
    """Every call shape: with the key the table records, and each missing or wrong
    argument a compiler error naming it and the table. A table built before the
    key was recorded (legacy_hist) gets it on its next load."""
    project.create_source("facts", "fact_id int, id int, event_time timestamp", [(1, 1, T1), (2, 2, T2)])
    project.write("models/sources.yml", f"""
        version: 2
        sources:
          - name: h
            schema: {project.schema}
            tables: [{{name: facts}}]
        models:
          - name: p_hist
            data_tests: [historize.one_open_version, historize.no_overlapping_versions]
        """)
    project.sql(LEGACY.format(schema=project.schema))
    before = dt.datetime(2025, 12, 31, 6)
    project.sql(f"insert into {project.schema}.legacy_hist values ('k0', 1, 'z', 'h', {lit(before)}, null, 'new', 'r0', {lit(before)})")
    project.create_source("snapshot", HIST, [(1, "a"), (2, "b")])
    for name in ("p_hist", "legacy_hist"):
        project.model(name, "{{ config(materialized='scd2_hist', unique_key='id') }} "
                            "select * from {{ target.schema }}.snapshot")
    project.model("pit_legacy", "select id, change_kind from ({{ historize.changes_since(ref('legacy_hist'), \"%s\") }}) as c"
                  % lit(T1))
    assert "historize: changes_since: {}.legacy_hist records no unique_key".format(project.schema) in project.fail(
        "run", "--select", "pit_legacy")

    for name, (select, _) in SHAPES.items():
        project.model(name, f"{{{{ config(materialized='table') }}}} {select}")
    project.run("run", "--select", "p_hist", "legacy_hist", variables={"load_timestamp": T1.strftime("%Y-%m-%d %H:%M:%S")})
    project.create_source("snapshot", HIST, [(1, "a2"), (2, "b")])
    errors = project.fail("build", variables={"load_timestamp": T2.strftime("%Y-%m-%d %H:%M:%S")})

    for name, (_, message) in SHAPES.items():
        if message:
            assert f"{name}: " in errors and message.format(schema=project.schema) in errors, (name, errors)
    assert "PARSE_SYNTAX_ERROR" not in errors
    assert project.table("pit_as_of", "*", "id") == [(1, "a"), (2, "b")]
    assert project.table("pit_changes", "*", "id, change_kind") == [(1, "a2", "changed")]
    assert project.table("pit_join", "*", "fact_id") == [(1, "a"), (2, "b")]
    assert project.table("pit_legacy", "*", "id") == [(1, "changed")]
    assert dict(project.sql(f"show tblproperties {project.schema}.legacy_hist"))["historize.unique_key"] == "id"


SNAPSHOTS = "id int, name string, price int"
EVENTS = "id int, name string, price int, _fivetran_start timestamp, _fivetran_op string"


def test_current_gives_each_kind_its_current_rows_without_the_history_columns(project):
    """historize.current on all three kinds after two loads (a change, a delete,
    a new key and an unchanged one): the rows of the keys alive now, the key and
    attribute columns only; on scd2_hist a read of the open versions' partition."""
    project.create_source("snapshot", SNAPSHOTS, [(1, "a", 10), (2, "b", 20), (3, "c", 30)])
    project.create_source("events", EVENTS, [(1, "a", 10, T1, "upsert"), (2, "b", 20, T1, "upsert"),
                                             (3, "c", 30, T1, "upsert")])
    project.model("customer_hist", "{{ config(materialized='scd2_hist', unique_key='id') }} "
                                   "select * from {{ target.schema }}.snapshot")
    project.model("customer_dim", "{{ config(materialized='scd_type6', unique_key='id') }} "
                                  "select * from {{ target.schema }}.snapshot")
    project.model("customer_ft", "{{ config(materialized='fivetran_history', unique_key='id') }} "
                                 "select * from {{ target.schema }}.events")
    for name, history, materialized in (("hist_current", "customer_hist", "view"),
                                        ("dim_current", "customer_dim", "table"),
                                        ("ft_current", "customer_ft", "table")):
        project.model(name, f"{{{{ config(materialized='{materialized}') }}}} "
                            f"select * from ({{{{ historize.current(ref('{history}')) }}}}) as c")
    project.run("run", variables={"load_timestamp": T1.strftime("%Y-%m-%d %H:%M:%S")})
    project.create_source("snapshot", SNAPSHOTS, [(1, "a", 11), (3, "c", 30), (4, "d", 40)])
    project.create_source("events", EVENTS, [(1, "a", 11, T2, "upsert"), (2, "b", 20, T2, "delete"),
                                             (4, "d", 40, T2, "upsert")])
    project.run("run", variables={"load_timestamp": T2.strftime("%Y-%m-%d %H:%M:%S")})

    for name in ("hist_current", "dim_current", "ft_current"):
        assert [column[:2] for column in project.columns(name)] == [("id", "int"), ("name", "string"),
                                                                  ("price", "int")], name
        assert project.table(name, "*", "id") == [(1, "a", 11), (3, "c", 30), (4, "d", 40)], name
    plan = project.sql(f"explain select * from {project.schema}.hist_current")[0][0]
    assert re.search(r"PartitionFilters: \[isnull\(version_ended_at#\d+\)\]", plan), plan
    manifest = project.run("parse").result
    project_name = manifest.metadata.project_name
    assert {name: manifest.nodes[f"model.{project_name}.{name}"].depends_on.nodes
            for name in ("hist_current", "dim_current", "ft_current")} == {
        f"{name}_current": [f"model.{project_name}.customer_{name}"] for name in ("hist", "dim", "ft")}


def test_models_and_tests_reading_a_history_table_compile_before_its_first_load(project):
    """Under `dbt compile` (which sqlfluff's dbt templater runs), the models and tests that
    read a history table a model of the project builds compile before the table's first
    load to the SQL they compile to after it, from that model's config (its key given in
    meta here); `current`, whose column list comes from the table, selects v.* until then.
    `dbt run` still refuses to read a table that does not exist, naming it."""
    project.create_source("snapshot", SNAPSHOTS, [(1, "a", 10)])
    project.create_source("fact_rows", "fact_id int, id int, event_time timestamp", [(1, 1, T1)])
    project.create_source("events", EVENTS, [(1, "a", 10, T1, "upsert")])
    select = "select * from {{ target.schema }}.snapshot"
    project.model("customer_hist", "{{ config(materialized='scd2_hist', meta={'unique_key': 'id'}) }} " + select)
    project.model("customer_dim", "{{ config(materialized='scd_type6', unique_key='id') }} " + select)
    project.model("belief_hist", "{{ config(materialized='scd2_hist', unique_key='id', bitemporal=true) }} " + select)
    project.model("customer_ft", "{{ config(materialized='fivetran_history', unique_key='id') }} "
                                 "select * from {{ target.schema }}.events")
    project.model("facts", "{{ config(materialized='view') }} select * from {{ target.schema }}.fact_rows")
    readers = {
        "hist_as_of": "select * from ({{ historize.as_of(ref('customer_hist'), 'current_timestamp()') }}) as v",
        "hist_changes": "select * from ({{ historize.changes_since(ref('customer_hist'), \"timestamp'2026-01-01 00:00:00'\") }}) as c",
        "facts_priced": "{{ historize.as_of_join(ref('facts'), ref('customer_hist'), 'event_time', columns=['price']) }}",
        "dim_as_of": "select * from ({{ historize.as_of(ref('customer_dim'), 'current_timestamp()') }}) as v",
        "dim_current": "select * from ({{ historize.current(ref('customer_dim')) }}) as c",
        "ft_changes": "select * from ({{ historize.changes_since(ref('customer_ft'), \"timestamp'2026-01-01 00:00:00'\") }}) as c",
        "belief_recorded": "select * from ({{ historize.recorded_since(ref('belief_hist'), \"timestamp'2026-01-01 00:00:00'\") }}) as r",
    }
    for name, sql in readers.items():
        project.model(name, "{{ config(materialized='view') }} " + sql)
    project.write("models/tests.yml", """
        version: 2
        models:
          - name: customer_hist
            data_tests: [historize.one_open_version, historize.no_gaps]
          - name: customer_dim
            data_tests: [historize.sequential_versions]
          - name: belief_hist
            data_tests: [historize.consistent_beliefs]
        """)
    histories = ("customer_hist", "customer_dim", "belief_hist", "customer_ft")

    def compiled() -> dict[str, str]:
        return {result.node.name: result.node.compiled_code for result in project.run("compile").result.results
                if result.node.name not in histories + ("facts",)}

    before = compiled()
    message = project.fail("run", "--select", "hist_as_of")
    assert f"historize: as_of: {project.schema}.customer_hist does not exist (or has no columns)" in message, message
    project.run("run", "--select", *histories)
    after = compiled()
    assert len(after) == len(readers) + 4, sorted(after)
    columns = "v.`id`, v.`name`, v.`price`"
    assert columns in after["dim_current"], after["dim_current"]
    assert before == {**after, "dim_current": after["dim_current"].replace(columns, "v.*")}
