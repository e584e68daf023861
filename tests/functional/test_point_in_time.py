"""as_of, changes_since and as_of_join against hand-computed answers, on each
kind's interval convention, including instants exactly on a boundary."""
from __future__ import annotations

import datetime as dt

from test_invariants import FIVETRAN, MS, SCD2, SENTINEL, T1, T2, T3, T4, TABLES, TYPE6

SECOND = dt.timedelta(seconds=1)


def lit(at: dt.datetime) -> str:
    return f"timestamp'{at.strftime('%Y-%m-%d %H:%M:%S.%f')}+00:00'"


def test_as_of_changes_since_and_as_of_join(project):
    for table in ("scd2_valid", "type6_valid", "fivetran_valid"):
        project.create_table(table, *TABLES[table])
    project.create_table("facts", "fact_id int, id int, event_time timestamp",
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
