"""Schema evolution of history tables: renames by former_names (own YAML and
inherited from the upstream model's), new, retired and reactivated columns,
type widening, table renames, and the cases that must fail and change nothing."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

from reference import row_hash

T1, T2, T3 = (dt.datetime(2026, 1, d, 6) for d in (1, 2, 3))
V1 = "id int, name string, colour string, price decimal(10,2), legacy string, qty int"
V2 = "id int, title string, color string, price decimal(12,2), qty bigint, size string"
V3 = "id int, title string, color string, price decimal(12,2), qty bigint, size string, legacy string"
YAML = """
version: 2
models:
  - name: base
    columns:
      - name: color
        meta: {former_names: [colour]}
  - name: items_hist
    columns:
      - name: title
        meta: {former_names: [name]}
"""


def variables(at: dt.datetime, run_id: str) -> dict:
    return {"load_timestamp": at.strftime("%Y-%m-%d %H:%M:%S"), "load_run_id": run_id}


def setup(project, history_config: str = "materialized='scd2_hist', unique_key='id'", name: str = "items_hist") -> None:
    project.model("base", "{{ config(materialized='view') }} select * from {{ target.schema }}.snapshot")
    project.model(name, f"{{{{ config({history_config}) }}}} select * from {{{{ ref('base') }}}}")
    project.write("models/schema.yml", YAML)


def load(project, columns: str, rows: list, at: dt.datetime, run_id: str) -> None:
    project.create_source("snapshot", columns, rows)
    project.run("run", variables=variables(at, run_id))


def describe(project, name: str) -> list[tuple]:
    return project.columns(name)


def properties(project, name: str) -> dict:
    return {k: v for k, v in project.sql(f"show tblproperties {project.schema}.{name}") if k.startswith("historize.retired.")}


def test_rename_add_retire_widen_and_reactivate_scd2_hist(project):
    setup(project)
    p = Decimal
    load(project, V1, [(1, "bolt", "red", p("1.50"), "old", 10), (2, "nut", "blue", p("0.20"), "gone", 5)], T1, "r1")
    before = project.commits("items_hist")

    # load 2: name -> title (own YAML), colour -> color (the upstream's YAML), price and
    # qty widened, size new, legacy gone. Only key 2 has a real change (its size).
    load(project, V2, [(1, "bolt", "red", p("1.50"), 10, None), (2, "nut", "blue", p("0.20"), 5, "L")], T2, "r2")
    assert [c[:2] for c in describe(project, "items_hist")] == [
        ("items_hist_key", "binary"), ("id", "int"), ("title", "string"), ("color", "string"),
        ("price", "decimal(12,2)"), ("legacy", "string"), ("qty", "bigint"), ("size", "string"),
        ("row_hash", "bigint"), ("version_started_at", "timestamp"), ("version_ended_at", "timestamp"),
        ("version_state", "string"), ("load_run_id", "string"), ("loaded_at", "timestamp"),
    ]
    legacy_comment = dict((c[0], c[2]) for c in describe(project, "items_hist"))["legacy"]
    assert legacy_comment == "retired at 2026-01-02 06:00:00.000000: no longer in the select of items_hist; NULL in versions loaded since"
    assert properties(project, "items_hist") == {"historize.retired.legacy": "2026-01-02 06:00:00.000000"}
    shown = "id, title, color, price, legacy, qty, size, version_started_at, version_ended_at, version_state, load_run_id"
    assert project.table("items_hist", shown, "id, version_started_at") == [
        (1, "bolt", "red", p("1.50"), "old", 10, None, T1, None, "new", "r1"),
        (2, "nut", "blue", p("0.20"), "gone", 5, None, T1, T2, "changed", "r2"),
        (2, "nut", "blue", p("0.20"), None, 5, "L", T2, None, "changed", "r2"),
    ]
    # the open versions' hashes are those of the select's columns now
    hashes = project.table("items_hist", "id, row_hash", "id, version_started_at")
    assert hashes[0][1] == row_hash({"title": "bolt", "color": "red", "price": "1.50", "qty": "10", "size": None})
    ddl = [h["operation"] for h in reversed(project.history("items_hist")[: project.commits("items_hist") - before])]
    # type widening on and the rehash marked as due, in one commit; the mark cleared after the rehash
    assert ddl == ["SET TBLPROPERTIES", "RENAME COLUMN", "RENAME COLUMN", "CHANGE COLUMN", "CHANGE COLUMN",
                   "ADD COLUMNS", "CHANGE COLUMN", "SET TBLPROPERTIES", "UPDATE", "UNSET TBLPROPERTIES", "MERGE"]

    # load 3: legacy comes back (reactivated); key 1 gets a value in it, a new version
    before = project.commits("items_hist")
    load(project, V3, [(1, "bolt", "red", p("1.50"), 10, None, "back"), (2, "nut", "blue", p("0.20"), 5, "L", None)], T3, "r3")
    assert properties(project, "items_hist") == {}
    ddl = [h["operation"] for h in reversed(project.history("items_hist")[: project.commits("items_hist") - before])]
    assert ddl == ["SET TBLPROPERTIES", "CHANGE COLUMN", "UNSET TBLPROPERTIES", "UPDATE", "UNSET TBLPROPERTIES", "MERGE"]
    assert project.table("items_hist", shown, "id, version_started_at") == [
        (1, "bolt", "red", p("1.50"), "old", 10, None, T1, T3, "changed", "r3"),
        (1, "bolt", "red", p("1.50"), "back", 10, None, T3, None, "changed", "r3"),
        (2, "nut", "blue", p("0.20"), "gone", 5, None, T1, T2, "changed", "r2"),
        (2, "nut", "blue", p("0.20"), None, 5, "L", T2, None, "changed", "r2"),
    ]
    # the same load again changes nothing
    state = (project.table("items_hist", "*", "id, version_started_at"), project.commits("items_hist"))
    project.run("run", variables=variables(T3, "r3"))
    assert (project.table("items_hist", "*", "id, version_started_at"), project.commits("items_hist")) == state


def test_a_key_deleted_by_the_load_that_renames_and_retires_columns_keeps_its_values(project):
    """A deleted key's version is removed and inserted closed by the MERGE: it keeps its values
    in every column, under the names the load gave them and in the column it retired, its key,
    and its row_hash as the load recomputed it over the select's columns."""
    setup(project)
    p = Decimal
    load(project, V1, [(1, "bolt", "red", p("1.50"), "old", 10), (2, "nut", "blue", p("0.20"), "gone", 5)], T1, "r1")
    key = project.table("items_hist", "items_hist_key", "id")[1][0]
    load(project, V2, [(1, "bolt", "red", p("1.50"), 10, None)], T2, "r2")
    shown = "id, title, color, price, legacy, qty, size, version_started_at, version_ended_at, version_state, load_run_id"
    assert project.table("items_hist", shown, "id, version_started_at") == [
        (1, "bolt", "red", p("1.50"), "old", 10, None, T1, None, "new", "r1"),
        (2, "nut", "blue", p("0.20"), "gone", 5, None, T1, T2, "deleted", "r2"),
    ]
    assert project.table("items_hist", "items_hist_key, row_hash", "id")[1] == (
        key, row_hash({"title": "nut", "color": "blue", "price": "0.20", "qty": "5", "size": None}))


def test_bad_schema_changes_fail_and_change_nothing(project):
    setup(project)
    first = "id int, name string, title string, legacy string, qty int"
    load(project, first, [(1, "bolt", "Bolt", "old", 10)], T1, "r1")

    def fails(columns: str, rows: list, yaml: str = YAML) -> str:
        project.write("models/schema.yml", yaml)
        state = (project.table("items_hist", "*", "id"), project.commits("items_hist"), describe(project, "items_hist"),
                 properties(project, "items_hist"))
        project.create_source("snapshot", columns, rows)
        message = project.fail("run", variables=variables(T2, "r2"))
        assert (project.table("items_hist", "*", "id"), project.commits("items_hist"), describe(project, "items_hist"),
                properties(project, "items_hist")) == state
        assert "Nothing was written" in message
        return message

    assert ("column qty changes type from int to smallint, which is not a widening Delta can apply in place"
            in fails("id int, name string, title string, legacy string, qty smallint", [(1, "bolt", "Bolt", "old", 10)]))
    assert ("column legacy changes type from string to int"
            in fails("id int, name string, title string, legacy int, qty int", [(1, "bolt", "Bolt", 1, 10)]))
    # title's former name is name, and the table has both
    assert ("column title and its former name name are both in the table"
            in fails("id int, title string, legacy string, qty int", [(1, "Bolt", "old", 10)]))
    # label has two former names, both in the table
    two = YAML + "      - name: label\n        meta: {former_names: [name, legacy]}\n"
    assert ("column label has several former names in the table: name, legacy"
            in fails("id int, label string, title string, qty int", [(1, "bolt", "Bolt", 10)], two))

    # a load that fails after its schema changes were committed (a CHECK constraint stops its
    # MERGE): the schema is already the new one, and the rerun ends as one clean run would
    project.write("models/schema.yml", "version: 2\n")
    project.sql(f"alter table {project.schema}.items_hist add constraint no_bad_title check (title <> 'BAD')")
    project.create_source("snapshot", "id int, name string, title string, legacy string, qty bigint, size string",
                          [(1, "bolt", "BAD", "old", 10, "L")])
    assert "no_bad_title" in project.fail("run", variables=variables(T2, "r2"))
    assert [c[:2] for c in describe(project, "items_hist")][5:7] == [("qty", "bigint"), ("size", "string")]
    project.sql(f"alter table {project.schema}.items_hist drop constraint no_bad_title")
    project.run("run", variables=variables(T2, "r2"))
    assert project.table("items_hist", "id, name, title, legacy, qty, size, version_started_at, version_ended_at",
                         "version_started_at") == [
        (1, "bolt", "Bolt", "old", 10, None, T1, T2),
        (1, "bolt", "BAD", "old", 10, "L", T2, None),
    ]


def test_table_rename_takes_over_a_history_table_only(project):
    setup(project, name="old_hist")
    load(project, V1, [(1, "bolt", "red", Decimal("1.50"), "old", 10)], T1, "r1")
    (project.path / "models" / "old_hist.sql").unlink()
    project.model("new_hist", "{{ config(materialized='scd2_hist', unique_key='id', meta={'former_names': ['old_hist']}) }} "
                              "select * from {{ ref('base') }}")

    load(project, V1, [(1, "bolt", "red", Decimal("1.75"), "old", 10)], T2, "r2")
    assert [row[1] for row in project.sql(f"show tables in {project.schema}") if row[1].endswith("_hist")] == ["new_hist"]
    assert [c[0] for c in describe(project, "new_hist")][0] == "new_hist_key"
    assert [h["operation"] for h in project.history("new_hist")][:2] == ["MERGE", "RENAME COLUMN"]
    assert project.table("new_hist", "id, price, version_started_at, version_ended_at, version_state", "version_started_at") == [
        (1, Decimal("1.50"), T1, T2, "changed"),
        (1, Decimal("1.75"), T2, None, "changed"),
    ]

    # a base table is never taken over as history
    project.create_source("products", V1, [(9, "x", "y", Decimal("1.00"), "z", 1)])
    project.model("products_history", "{{ config(materialized='scd2_hist', unique_key='id', meta={'former_names': ['products']}) }} "
                                      "select * from {{ ref('base') }}")
    message = project.fail("run", "--select", "products_history", variables=variables(T3, "r3"))
    assert (f"model products_history: its former name {project.schema}.products does not end in _hist; a history table "
            "is only taken over from another history table. Nothing was written") in message
    assert project.table("products", "id") == [(9,)]
    assert [row[1] for row in project.sql(f"show tables in {project.schema}") if "products" in row[1] and not row[2]] == ["products"]


def test_scd_type6_rename_widen_add_and_retire(project):
    project.model("dim", "{{ config(materialized='scd_type6', unique_key='k', type1_columns=['b']) }} "
                         "select * from {{ target.schema }}.snapshot")
    project.write("models/schema.yml", "version: 2\nmodels:\n  - name: dim\n    columns:\n"
                                       "      - name: alpha\n        meta: {former_names: [a]}\n")
    load(project, "k int, a int, b string, c string", [(1, 10, "x", "c1"), (2, 20, "y", "c2")], T1, "r1")
    # a -> alpha and int -> bigint, c retired, d new: key 1 keeps its version; key 2 gets a
    # Type 1 change (all its rows) and a Type 2 change (d)
    load(project, "k int, alpha bigint, b string, d string", [(1, 10, "x", None), (2, 20, "y2", "d2")], T2, "r2")
    assert [c[:2] for c in describe(project, "dim")] == [
        ("dim_key", "binary"), ("k", "int"), ("alpha", "bigint"), ("b", "string"), ("c", "string"), ("d", "string"),
        ("effective_from", "timestamp"), ("effective_to", "timestamp"), ("current_flag", "boolean"), ("version", "int"),
        ("change_reason", "string"), ("_hash", "bigint"),
    ]
    assert properties(project, "dim") == {"historize.retired.c": "2026-01-02 06:00:00.000000"}
    sentinel = dt.datetime(9999, 12, 31, 23, 59, 59)
    assert project.table("dim", "k, alpha, b, c, d, effective_from, effective_to, current_flag, version", "k, version") == [
        (1, 10, "x", "c1", None, T1, sentinel, True, 1),
        (2, 20, "y2", "c2", None, T1, T2, False, 1),
        (2, 20, "y2", None, "d2", T2, sentinel, True, 2),
    ]


def test_fivetran_history_rename_add_and_retire(project):
    from reference import MILLISECOND, TMAX

    project.model("ft", "{{ config(materialized='fivetran_history', unique_key='id') }} select * from {{ target.schema }}.batch")
    project.write("models/schema.yml", "version: 2\nmodels:\n  - name: ft\n    columns:\n"
                                       "      - name: label\n        meta: {former_names: [col1]}\n")
    s1, s2 = dt.datetime(2026, 2, 1), dt.datetime(2026, 2, 2)
    project.create_source("batch", "id int, col1 string, col2 string, _fivetran_start timestamp, _fivetran_op string, "
                                  "_fivetran_synced timestamp", [(1, "a", "x", T1, "upsert", s1)])
    project.run("run")
    project.create_source("batch", "id int, label string, col3 string, _fivetran_start timestamp, _fivetran_op string, "
                                  "_fivetran_synced timestamp", [(1, "b", "z", T2, "upsert", s2)])
    project.run("run", variables=variables(T2, "r2"))
    assert [c[0] for c in describe(project, "ft")] == [
        "id", "label", "col2", "col3", "_fivetran_start", "_fivetran_end", "_fivetran_active", "_fivetran_synced"]
    assert properties(project, "ft") == {"historize.retired.col2": "2026-01-02 06:00:00.000000"}
    assert project.table("ft", "*", "_fivetran_start") == [
        (1, "a", "x", None, T1, T2 - MILLISECOND, False, s1),
        (1, "b", None, "z", T2, TMAX, True, s2),
    ]


def test_scd_type6_table_rename_takes_its_audit_along(project):
    source = "select * from {{ target.schema }}.snapshot"
    project.model("dim_old", "{{ config(materialized='scd_type6', unique_key='k', audit=true) }} " + source)
    load(project, "k int, a int", [(1, 10)], T1, "r1")
    (project.path / "models" / "dim_old.sql").unlink()
    project.model("dim_new", "{{ config(materialized='scd_type6', unique_key='k', audit=true, "
                             "meta={'former_names': ['dim_old']}) }} " + source)
    load(project, "k int, a int", [(1, 11)], T2, "r2")
    assert sorted(r[1] for r in project.sql(f"show tables in {project.schema}") if r[1].startswith("dim") and not r[2]) == [
        "dim_new", "dim_new_audit"]
    assert project.table("dim_new", "k, a, effective_from, current_flag, version", "version") == [
        (1, 10, T1, False, 1), (1, 11, T2, True, 2)]
    assert project.table("dim_new_audit", "k, change_type, dim_new_key_old is null, dim_new_key_new is not null, change_ts",
                         "change_ts") == [(1, "INSERT", True, True, T1), (1, "UPDATE", False, True, T2)]
