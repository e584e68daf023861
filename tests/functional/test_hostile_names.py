"""Hostile names and values: every identifier and literal that reaches SQL from
config, YAML or vars is quoted, or refused with a clear error. Columns named
with a space, a quote, a backtick, a semicolon and a SQL keyword, and values
that try to end a statement, through every materialization (key, Type 0/1/2/3
columns, the audit table, Fivetran's op column and unmodified marker), the
table properties, the load run id, the invariant tests and as_of. The expected
tables come from the independent models of tests/reference.py."""
from __future__ import annotations

import datetime as dt

from projects import T1, T2, sql_identifier, sql_literal
from reference import UNMODIFIED, FivetranModel, Scd2Model, Type6Model, hash_key, row_hash, sorted_rows

KEY = "key id"
HIST_ATTRIBUTES = ("it's", "a`b", "select", "total (eur); --")
DIM_COLUMNS = ("program id", "created on", "it's name", "a`b")  # key, Type 0, Type 1, Type 2 with a Type 3
FT_COLUMNS = (KEY, "the op`s", "_fivetran_start", "it's", "a`b", "_fivetran_synced")
STATEMENT_END = "'); drop table t; --"
RUN_IDS = ("r'1`; --", "r`2\\")
PROPERTY = "it's `odd`; --"
ACTOR = "o'brien`; --"
HIDDEN_UNMODIFIED = "it's unmodified`; --"

HIST_LOADS = [
    {(1,): ("o'k", "x`y", "p;q", 10), (2,): ("b\\", "--", "z", 20)},
    {(1,): ("o'k2", "x`y", "p;q", 10), (3,): ("new", "`", STATEMENT_END, 30)},
]
DIM_LOADS = [
    {"P1": ("c1", "n'1", "x;y"), "P2": ("c2", "n2", "--")},
    {"P1": ("c1b", "n'1b", "x`2"), "P3": ("c3", "n3", STATEMENT_END)},
]
SYNCED = dt.datetime(2026, 3, 1)
FT_BATCHES = [  # (key, op, start, it's, a`b)
    [(1, "upsert", T1, "o'k", "x`y"), (2, "upsert", T1, STATEMENT_END, "--")],
    [(1, "update", T2, "o'k2", UNMODIFIED), (2, "delete", T2, None, None)],
]

MODELS = {
    "hist": f"""materialized='scd2_hist', unique_key='{KEY}',
        meta={{'tblproperties': {{'historize.note': "{PROPERTY}"}}, 'former_names': ['old hist; drop table t --']}}""",
    "dim": """materialized='scd_type6', unique_key='program id', type0_columns=['created on'],
        type1_columns=["it's name"], type3_columns={'a`b': 'prev a`b'}, audit=true, actor="o'brien`; --\"""",
    "ft": f"""materialized='fivetran_history', unique_key='{KEY}', op_column='the op`s',
        unmodified_string="{HIDDEN_UNMODIFIED}\"""",
}
SCHEMA_YML = """\
version: 2
models:
  - name: hist
    data_tests: [historize.one_open_version, historize.no_overlapping_versions, historize.no_gaps,
                 historize.open_version_unbounded]
  - name: dim
    data_tests: [historize.one_open_version, historize.no_overlapping_versions, historize.no_gaps,
                 historize.sequential_versions]
  - name: ft
    data_tests: [historize.one_open_version, historize.no_overlapping_versions, historize.open_version_unbounded]
"""


def source_view(project, name: str, columns: tuple, rows: list[tuple]) -> None:
    values = ", ".join("(" + ", ".join(sql_literal(v) for v in row) + ")" for row in rows)
    project.sql(f"create or replace view {project.schema}.{name} as "
                f"select * from values {values} as t({', '.join(sql_identifier(c) for c in columns)})")


def model_text(name: str, extra_config: str = "") -> str:
    return f"{{{{ config({MODELS[name]}{extra_config}) }}}}\nselect * from {{{{ target.schema }}}}.src_{name}"


def write_project(project) -> None:
    for name in MODELS:
        project.model(name, model_text(name))
    project.model("hist_as_of", "select * from ({{ historize.as_of(ref('hist'), \"timestamp'2026-01-01 12:00:00'\") }}) as v")
    project.write("models/schema.yml", SCHEMA_YML)


def test_hostile_names_and_values_work_in_every_materialization(project):
    write_project(project)
    hist, dim, ft = Scd2Model(), Type6Model(), FivetranModel()
    for number, at in enumerate((T1, T2)):
        source_view(project, "src_hist", (KEY, *HIST_ATTRIBUTES),
                    [(*key, *values) for key, values in HIST_LOADS[number].items()])
        source_view(project, "src_dim", DIM_COLUMNS, [(key, *values) for key, values in DIM_LOADS[number].items()])
        events = [(key, op, start, HIDDEN_UNMODIFIED if a == UNMODIFIED else a,
                   HIDDEN_UNMODIFIED if b == UNMODIFIED else b, SYNCED) for key, op, start, a, b in FT_BATCHES[number]]
        source_view(project, "src_ft", FT_COLUMNS,
                    [(key, op, start, a, b, synced) for key, op, start, a, b, synced in events])
        # the invariant tests run on the last load's tables
        project.run("build" if number else "run", variables={"load_timestamp": f"{at:%Y-%m-%d %H:%M:%S}", "load_run_id": RUN_IDS[number]})
        hist.load({key: dict(zip(HIST_ATTRIBUTES, values)) for key, values in HIST_LOADS[number].items()},
                  at, RUN_IDS[number])
        dim.load(DIM_LOADS[number], at)
        ft.apply([((key,), op, start, {"it's": a, "a`b": b}, SYNCED) for key, op, start, a, b in FT_BATCHES[number]])
        if number == 0:
            as_of = project.table("hist_as_of", ", ".join(map(sql_identifier, (KEY, "it's"))), "1")
            assert as_of == [(1, "o'k"), (2, "b\\")]

    assert sorted_rows(project.table("hist", ", ".join(sql_identifier(c) for c in (
        "hist_key", KEY, *HIST_ATTRIBUTES, "row_hash", "version_started_at", "version_ended_at", "version_state",
        "load_run_id")))) == sorted_rows(
        (hash_key([*v.key, v.started_at]), *v.key, *v.attributes.values(), row_hash(v.attributes), v.started_at,
         v.ended_at, v.state, v.load_run_id) for v in hist.versions)
    assert sorted_rows(project.table("dim", ", ".join(sql_identifier(c) for c in (
        *DIM_COLUMNS, "prev a`b", "effective_from", "effective_to", "current_flag", "version", "change_reason")))) == dim.table()
    assert sorted_rows(project.table("ft", ", ".join(sql_identifier(c) for c in (
        KEY, "it's", "a`b", "_fivetran_start", "_fivetran_end", "_fivetran_active", "_fivetran_synced")))) == ft.rows()

    everything = list(DIM_COLUMNS[1:])  # changed columns are listed in the select's order
    assert project.table("dim_audit", "`program id`, change_type, changed_columns, change_ts, source_batch_id, actor",
                         "change_ts, `program id`") == [
        ("P1", "INSERT", everything, T1, RUN_IDS[0], ACTOR),
        ("P2", "INSERT", everything, T1, RUN_IDS[0], ACTOR),
        ("P1", "UPDATE", ["it's name", "a`b"], T2, RUN_IDS[1], ACTOR),
        ("P2", "LOGICAL_DELETE", [], T2, RUN_IDS[1], ACTOR),
        ("P3", "INSERT", everything, T2, RUN_IDS[1], ACTOR),
    ]
    properties = dict(project.sql(f"show tblproperties {project.schema}.hist"))
    assert (properties["historize.note"], properties["historize.unique_key"]) == (PROPERTY, KEY)

    refuse_what_cannot_be_quoted(project)


def refuse_what_cannot_be_quoted(project) -> None:
    """A value that cannot reach SQL as it is gets an error naming it, and every table
    keeps its Delta version and rows."""
    at = {"load_timestamp": "2026-01-03 06:00:00", "load_run_id": "r3"}
    injected = "x'); drop table t; --"
    cases = [  # (model or YAML to change, its new text, command, variables, the error)
        (None, None, ("run",), {**at, "load_timestamp": f"2026-01-03 06:00:00{injected}"},
         f"var 'load_timestamp' is '2026-01-03 06:00:00{injected}'; expected 'YYYY-MM-DD HH:MM:SS[.ffffff]' (UTC)"),
        ("models/hist.sql", f"""{{{{ config(materialized='scd2_hist', unique_key='{KEY}',
            meta={{'tblproperties': {{"{injected}": 'v'}}}}) }}}} select * from {{{{ target.schema }}}}.src_hist""",
         ("run", "--select", "hist"), at,
         f"model hist: table property name '{injected}' may hold only letters, digits, '.', '-' and '_'"),
        ("models/hist.sql", "{{ config(materialized='scd2_hist', unique_key='key,id') }} select 1 as `key,id`",
         ("run", "--select", "hist"), at,
         "model hist: unique_key column 'key,id' holds a comma, which the table property historize.unique_key"),
        ("models/ft.sql", model_text("ft", f", tmax=\"9999-12-31 00:00:00{injected}\""), ("run", "--select", "ft"), at,
         f"option 'tmax' is '9999-12-31 00:00:00{injected}'; expected 'YYYY-MM-DD HH:MM:SS[.ffffff]' (UTC)"),
        ("models/schema.yml", f"""\
            version: 2
            models:
              - name: ft
                data_tests:
                  - historize.no_gaps:
                      arguments: {{since: "2026-01-01 00:00:00{injected}"}}
            """, ("test", "--select", "ft"), at,
         f"argument 'since' is '2026-01-01 00:00:00{injected}'; expected 'YYYY-MM-DD HH:MM:SS[.ffffff]' (UTC)"),
    ]
    for path, text, command, variables, error in cases:
        write_project(project)
        if path:
            project.write(path, text)
        with project.unchanged("hist", "dim", "dim_audit", "ft"):
            message = project.fail(*command, variables=variables)
        assert error in message, message
