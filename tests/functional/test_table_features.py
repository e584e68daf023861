"""What every materialization does to its table beyond the history: Delta
properties from `tblproperties` and the ones readers need, column and table
comments (persist_docs), grants through dbt's apply_grants, and a table taken
over from a former name of the model. One project, the three kinds side by side."""
from __future__ import annotations

import datetime as dt

from projects import AUDIT, PROGRAM_SOURCE, SENTINEL, D, T1, T2
from reference import TMAX

KINDS = {  # short name: (config, source DDL, first load, second load)
    "hist": ("materialized='scd2_hist', unique_key='id'", "id int, name string",
             [(1, "a"), (2, "b")], [(1, "a"), (2, "b2")]),
    "dim": ("materialized='scd_type6', unique_key='program_id', meta={'type1_columns': ['current_program_name'], "
            "'audit': true}", PROGRAM_SOURCE, [("P1", D[1], "N1", 10, 100)], [("P1", D[1], "N1", 11, 100)]),
    "ft": ("materialized='fivetran_history', unique_key='id'",
           "id int, val string, _fivetran_start timestamp, _fivetran_op string",
           [(1, "x", dt.datetime(2026, 2, 1), "upsert")], [(1, "y", dt.datetime(2026, 2, 2), "upsert")]),
}
FEATURES = ("persist_docs={'relation': true, 'columns': true}, grants={'select': ['analyst']}")
PROPERTIES = "'tblproperties': {'historize.owner': 'team-a', 'delta.logRetentionDuration': 'interval 60 days'}"
# Grants on Spark need a catalog that keeps them; these stand-ins keep them in
# tables, and dbt's apply_grants decides what to grant as it does on any adapter.
GRANT_MACROS = """
{% macro spark__get_show_grant_sql(relation) %}
    select principal as Principal, privilege as ActionType, 'TABLE' as ObjectType
    from {{ target.schema }}.granted where table_name = '{{ relation.identifier }}'
{% endmacro %}

{% macro spark__call_dcl_statements(dcl_statement_list) %}
  {%- for dcl in dcl_statement_list -%}
    {%- do run_query("insert into " ~ target.schema ~ ".dcl_issued values (" ~ historize._string_literal(dcl) ~ ")") -%}
  {%- endfor -%}
{% endmacro %}
"""
KEYS = {"hist": "id", "dim": "program_id", "ft": "id"}


def write_models(project, prefix: str, former: str | None = None) -> None:
    for path in (project.path / "models").glob("*.sql"):
        path.unlink()
    docs = ["version: 2", "models:"]
    for kind, (config, *_) in KINDS.items():
        name = f"{prefix}_{kind}"
        meta = f"{PROPERTIES}" + (f", 'former_names': ['{former}_{kind}']" if former else "")
        if "meta={" in config:
            config = config.replace("meta={", "meta={" + meta + ", ")
        else:
            config += f", meta={{{meta}}}"
        project.model(name, f"{{{{ config({config}, {FEATURES}) }}}} select * from {{{{ target.schema }}}}.src_{kind}")
        docs += [f"  - name: {name}", f"    description: The {kind} history.", "    columns:",
                 f"      - name: {KEYS[kind]}", "        description: The key, it's quoted."]
    project.write("models/docs.yml", "\n".join(docs) + "\n")


def load(project, index: int, at: dt.datetime) -> None:
    for kind, (_, ddl, *loads) in KINDS.items():
        project.create_source(f"src_{kind}", ddl, loads[index])
    project.run("run", variables={"load_timestamp": at.strftime("%Y-%m-%d %H:%M:%S"), "load_run_id": f"r{index + 1}"})


def properties(project, table: str) -> dict:
    return dict(project.sql(f"show tblproperties {project.schema}.{table}"))


def comments(project, table: str) -> dict:
    rows = project.sql(f"describe table extended {project.schema}.{table}")
    found = {name: comment for name, _, comment in rows if name in ("id", "program_id")}
    found.update({name: value for name, value, _ in rows if name == "Comment"})  # the table's own comment
    return found


def test_properties_docs_grants_and_renames_in_every_materialization(project):
    project.write("macros/grants.sql", GRANT_MACROS)
    project.sql(f"create table {project.schema}.granted (table_name string, principal string, privilege string) using delta")
    project.sql(f"create table {project.schema}.dcl_issued (statement string) using delta")
    write_models(project, "old")
    load(project, 0, T1)

    write_models(project, "new", former="old")
    load(project, 1, T2)

    tables = {row[1] for row in project.sql(f"show tables in {project.schema}")}
    assert {"new_hist", "new_dim", "new_dim_audit", "new_ft"} <= tables
    assert not {"old_hist", "old_dim", "old_dim_audit", "old_ft"} & tables
    # the history carried over by the rename, and the second load applied on it
    assert project.table("new_hist", "id, name, version_started_at, version_ended_at", "id, version_started_at") == [
        (1, "a", T1, None), (2, "b", T1, T2), (2, "b2", T2, None)]
    assert project.table("new_dim", "program_id, eligibility_threshold, effective_from, current_flag, version",
                         "version") == [("P1", 10, T1, False, 1), ("P1", 11, T2, True, 2)]
    assert project.table("new_dim_audit", AUDIT, "change_ts") == [
        ("P1", "INSERT", ["created_on", "current_program_name", "eligibility_threshold", "funding_cap"], T1,
         "source_load", "r1"),
        ("P1", "UPDATE", ["eligibility_threshold"], T2, "source_load", "r2")]
    assert project.table("new_ft", "id, val, _fivetran_end, _fivetran_active", "_fivetran_start") == [
        (1, "x", dt.datetime(2026, 2, 2) - dt.timedelta(milliseconds=1), False), (1, "y", TMAX, True)]

    valid_from = {"hist": "version_started_at", "dim": "effective_from", "ft": "_fivetran_start"}
    kinds = {"hist": "scd2_hist", "dim": "scd_type6", "ft": "fivetran_history"}
    for kind in KINDS:
        table = f"new_{kind}"
        found = properties(project, table)
        wanted = {"historize.owner": "team-a", "delta.logRetentionDuration": "interval 60 days",
                  "delta.enableRowTracking": "true", "delta.columnMapping.mode": "name",
                  "historize.kind": kinds[kind], "historize.unique_key": KEYS[kind],
                  "historize.valid_from": valid_from[kind]}
        assert {name: found.get(name) for name in wanted} == wanted, table
        assert comments(project, table) == {KEYS[kind]: "The key, it's quoted.", "Comment": f"The {kind} history."}, table

    issued = sorted(row[0] for row in project.sql(f"select statement from {project.schema}.dcl_issued"))
    assert issued == sorted(f"grant select on {project.schema}.{prefix}_{kind} to `analyst`"
                            for prefix in ("old", "new") for kind in KINDS)


def test_a_run_with_empty_writes_nothing_to_a_history_table(project):
    """dbt's --empty reads every ref and source as no rows, which to a history table is a
    snapshot without any key (every version would close) or a batch without events. A run
    with it leaves each table that exists as it was (no commit, no version closed, no audit
    row) and creates no table that its first load would fill from adopt_from; a model
    without a table gets it, empty, as dbt's own materializations do. A point-in-time model
    and an invariant test read the table as no rows. The next run without --empty loads as
    if that run had not happened."""
    sources = ["version: 2", "sources:", "  - name: s", f"    schema: {project.schema}", "    tables:"]
    for kind, (config, ddl, first, _) in KINDS.items():
        project.create_source(f"src_{kind}", ddl, first)
        project.model(f"e_{kind}", f"{{{{ config({config}) }}}} select * from {{{{ source('s', 'src_{kind}') }}}}")
        sources.append(f"      - name: src_{kind}")
    sources += ["models:", "  - name: e_hist", "    data_tests: [historize.one_open_version]"]
    project.write("models/sources.yml", "\n".join(sources) + "\n")
    project.model("e_as_of", "{{ config(materialized='table') }} "
                             "select id, name from ({{ historize.as_of(ref('e_hist'), 'current_timestamp()') }}) as v")
    project.create_table("legacy", "id int, name string, valid_from timestamp, valid_to timestamp", [(1, "a", T1, None)])
    project.model("e_adopter", "{{ config(materialized='scd2_hist', unique_key='id', adopt_from=target.schema ~ '.legacy', "
                               "adopt_columns={'valid_from': 'valid_from', 'valid_to': 'valid_to'}) }} "
                               "select * from {{ source('s', 'src_hist') }}")
    project.model("e_new", "{{ config(materialized='scd2_hist', unique_key='id') }} select * from {{ source('s', 'src_hist') }}")
    project.run("run", "--select", "e_hist", "e_dim", "e_ft", "e_as_of", variables={"load_timestamp": "2026-01-01 06:00:00"})
    assert project.table("e_as_of", "*", "id") == [(1, "a"), (2, "b")]
    for kind, (_, ddl, _, second) in KINDS.items():
        project.create_source(f"src_{kind}", ddl, second)

    with project.unchanged("e_hist", "e_dim", "e_dim_audit", "e_ft", "legacy"):
        result = project.run("build", "--empty", variables={"load_timestamp": "2026-01-02 06:00:00"})
    responses = {node.node.name: (node.adapter_response["_message"], node.adapter_response["rows_affected"])
                 for node in result.result.results if node.node.name.startswith("e_") and node.node.name != "e_as_of"}
    assert responses == {**{name: ("nothing written (--empty)", 0) for name in ("e_hist", "e_dim", "e_ft", "e_adopter")},
                         "e_new": (f"0 new, 0 changed, 0 deleted (created {project.schema}.e_new)", 0)}
    # the point-in-time model and the invariant test read the history table as no rows
    assert sorted(str(node.status) for node in result.result.results if not node.node.name.startswith("e_")) == ["pass"]
    assert project.table("e_as_of") == []
    tables = {row[1] for row in project.sql(f"show tables in {project.schema}")}
    assert "e_adopter" not in tables and "e_new" in tables
    assert project.table("e_new") == []

    project.run("run", variables={"load_timestamp": "2026-01-02 06:00:00"})
    assert project.table("e_hist", "id, name, version_started_at, version_ended_at, version_state", "id, version_started_at") == [
        (1, "a", T1, None, "new"), (2, "b", T1, T2, "changed"), (2, "b2", T2, None, "changed")]
    assert project.table("e_adopter", "id, name, version_started_at, version_ended_at", "id") == [
        (1, "a", T1, None), (2, "b2", T2, None)]
    assert project.table("e_new", "id, name, version_started_at, version_ended_at", "id") == [
        (1, "a", T2, None), (2, "b2", T2, None)]
    assert project.table("e_dim", "program_id, eligibility_threshold, effective_from, effective_to, current_flag, version",
                         "version") == [("P1", 10, T1, T2, False, 1), ("P1", 11, T2, SENTINEL, True, 2)]
    assert project.table("e_ft", "id, val, _fivetran_start, _fivetran_end, _fivetran_active", "_fivetran_start") == [
        (1, "x", dt.datetime(2026, 2, 1), dt.datetime(2026, 2, 2) - dt.timedelta(milliseconds=1), False),
        (1, "y", dt.datetime(2026, 2, 2), TMAX, True)]



def test_a_run_with_sample_writes_nothing_to_a_history_table_it_reads_in_part(project):
    """dbt's --sample reads each ref and source that has an event_time within the sample's
    window: to a history model that is a snapshot without the keys outside it (their
    versions would close) or a batch without its other events. A run with it leaves each
    table whose select it samples as it was, writes a new table's first load from the
    sample, and loads a model whose inputs it does not sample as any run does."""
    sampled = {  # name: (config, source DDL, event_time, first load, second load)
        "hist": (KINDS["hist"][0], "id int, name string, updated_at timestamp", "updated_at",
                 [(1, "a", T1), (2, "b", T1)], [(1, "a2", T2), (2, "b", T1)]),
        "dim": (KINDS["dim"][0], PROGRAM_SOURCE, "created_on",
                [("P1", D[1], "N1", 10, 100), ("P2", D[2], "N2", 20, 200)],
                [("P1", D[1], "N1", 11, 100), ("P2", D[2], "N2", 20, 200)]),
        "ft": (KINDS["ft"][0], KINDS["ft"][1], "_fivetran_start",
               [(1, "x", dt.datetime(2026, 2, 1), "upsert")],
               [(1, "y", dt.datetime(2025, 12, 1), "upsert"), (2, "z", dt.datetime(2026, 1, 2), "upsert")]),
    }
    sources = ["version: 2", "sources:", "  - name: s", f"    schema: {project.schema}", "    tables:"]
    for kind, (config, ddl, event_time, first, _) in sampled.items():
        project.create_source(f"src_{kind}", ddl, first)
        project.model(f"s_{kind}", f"{{{{ config({config}) }}}} select * from {{{{ source('s', 'src_{kind}') }}}}")
        sources += [f"      - name: src_{kind}", f"        config: {{event_time: {event_time}}}"]
    project.write("models/sources.yml", "\n".join(sources) + "\n")
    project.create_source("src_whole", "id int, name string", [(1, "a"), (2, "b")])
    project.model("s_whole", "{{ config(materialized='scd2_hist', unique_key='id') }} "
                             "select * from {{ target.schema }}.src_whole")
    project.model("s_new", "{{ config(materialized='scd2_hist', unique_key='id') }} select * from {{ source('s', 'src_hist') }}")
    project.run("run", "--exclude", "s_new", variables={"load_timestamp": "2026-01-01 06:00:00"})
    for kind, (_, ddl, _, _, second) in sampled.items():
        project.create_source(f"src_{kind}", ddl, second)
    project.create_source("src_whole", "id int, name string", [(1, "a")])

    window = "{'start': '2026-01-02', 'end': '2026-01-03'}"
    with project.unchanged("s_hist", "s_dim", "s_dim_audit", "s_ft"):
        result = project.run("run", "--sample", window, variables={"load_timestamp": "2026-01-02 06:00:00"})
    responses = {node.node.name: (node.adapter_response["_message"], node.adapter_response["rows_affected"])
                 for node in result.result.results}
    assert responses == {**{f"s_{kind}": ("nothing written (--sample)", 0) for kind in sampled},
                         "s_whole": ("0 new, 0 changed, 1 deleted (merge)", 1),
                         "s_new": (f"1 new, 0 changed, 0 deleted (created {project.schema}.s_new)", 1)}
    assert project.table("s_whole", "id, name, version_started_at, version_ended_at, version_state", "id") == [
        (1, "a", T1, None, "new"), (2, "b", T1, T2, "deleted")]
    assert project.table("s_new", "id, name, version_started_at, version_ended_at", "id") == [(1, "a2", T2, None)]
