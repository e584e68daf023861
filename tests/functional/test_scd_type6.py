"""scd_type6: per-column SCD types, versions, deletes and returns, the audit
trail, reruns and bad input, against tables computed by hand."""
from __future__ import annotations

from projects import (AUDIT, DIM, PROGRAM_CONFIG as CONFIG, PROGRAM_SOURCE as SOURCE, SENTINEL, D, T1, T2, T3, T4,
                      load_reports, report)
from reference import hash_key


def dim_model(project, config=CONFIG, name="dim_program"):
    project.model(name, f"{{{{ config({config}) }}}} select * from {{{{ target.schema }}}}.stg_program")


def load(project, rows, at, run_id):
    project.create_source("stg_program", SOURCE, rows)
    return project.run("run", variables={"load_timestamp": at.strftime("%Y-%m-%d %H:%M:%S"), "load_run_id": run_id})




def test_types_versions_deletes_returns_and_audit(project):
    dim_model(project)
    result = load(project, [("P1", D[1], "N1", 10, 100), ("P2", D[2], "M1", 20, 200)], T1, "r1")
    assert load_reports(result) == {"dim_program": report(2, 0, 0, "versions")}
    result = load(project, [("P1", D[9], "N1", 12, 100), ("P2", D[2], "M2", 20, 200), ("P3", D[3], "Q", 30, 300)],
                  T2, "r2")
    # P3 new, P1 a Type 2 change (its Type 0 column ignored), P2 a Type 1 change only; in versions:
    # P3's and P1's new ones inserted, P1's closed and P2's one rewritten in place
    assert load_reports(result) == {"dim_program": report(2, 2, 0, "versions")}
    load(project, [("P1", D[9], "N1", 12, 100), ("P3", D[3], "Q2", 31, 300)], T3, "r3")
    commits = project.commits("dim_program")
    result = load(project, [("P1", D[9], "N1", 12, 100), ("P2", D[8], "M3", 25, 250), ("P3", D[3], "Q2", 31, 300)],
                  T4, "r4")
    assert project.commits("dim_program") == commits + 1  # one MERGE per load
    # P2 back (new), and its Type 1 column rewritten in its earlier version (M2 to M3)
    assert load_reports(result) == {"dim_program": report(1, 1, 0, "versions")}
    assert project.table("dim_program", DIM, "program_id, version") == [
        ("P1", D[1], "N1", 10, 100, None, T1, T2, False, 1, "source_load"),
        ("P1", D[1], "N1", 12, 100, 10, T2, SENTINEL, True, 2, "source_load"),  # Type 0 keeps D1; Type 3 holds 10
        ("P2", D[2], "M3", 20, 200, None, T1, T3, False, 1, "deleted_in_source"),  # Type 1 rewrites history
        ("P2", D[2], "M3", 25, 250, 20, T4, SENTINEL, True, 2, "source_load"),  # back: next version number
        ("P3", D[3], "Q2", 30, 300, None, T2, T3, False, 1, "source_load"),
        ("P3", D[3], "Q2", 31, 300, 30, T3, SENTINEL, True, 2, "source_load"),
    ]
    keys = project.table("dim_program", "dim_program_key, program_id, effective_from")
    assert all(key == hash_key([program, start]) for key, program, start in keys)
    everything = ["created_on", "current_program_name", "eligibility_threshold", "funding_cap"]
    assert project.table("dim_program_audit", AUDIT, "change_ts, program_id") == [
        ("P1", "INSERT", everything, T1, "source_load", "r1"),
        ("P2", "INSERT", everything, T1, "source_load", "r1"),
        ("P1", "UPDATE", ["eligibility_threshold"], T2, "source_load", "r2"),
        ("P2", "TYPE1_UPDATE", ["current_program_name"], T2, "source_load", "r2"),
        ("P3", "INSERT", everything, T2, "source_load", "r2"),
        ("P2", "LOGICAL_DELETE", [], T3, "deleted_in_source", "r3"),
        ("P3", "UPDATE", ["current_program_name", "eligibility_threshold"], T3, "source_load", "r3"),
        ("P2", "INSERT", ["current_program_name", "eligibility_threshold", "funding_cap"], T4, "source_load", "r4"),
    ]
    update = project.sql(f"select old_values, new_values, dim_program_key_old, dim_program_key_new "
                         f"from {project.schema}.dim_program_audit where program_id = 'P1' and change_type = 'UPDATE'")[0]
    assert (update[0], update[1]) == ({"eligibility_threshold": "10"}, {"eligibility_threshold": "12"})
    assert (update[2], update[3]) == (hash_key(["P1", T1]), hash_key(["P1", T2]))

    # the same load again, or new variables over the same data, write nothing to either table
    before = (project.table("dim_program", "*", "program_id, version"), project.commits("dim_program"),
              project.table("dim_program_audit", "*", "change_ts, program_id"), project.commits("dim_program_audit"))
    result = load(project, [("P1", D[9], "N1", 12, 100), ("P2", D[8], "M3", 25, 250), ("P3", D[3], "Q2", 31, 300)],
                  T4, "r4")
    assert load_reports(result) == {"dim_program": report(0, 0, 0, "versions")}
    project.run("run", "--full-refresh", variables={"load_timestamp": "2026-01-05 06:00:00", "load_run_id": "r5"})
    assert (project.table("dim_program", "*", "program_id, version"), project.commits("dim_program"),
            project.table("dim_program_audit", "*", "change_ts, program_id"), project.commits("dim_program_audit")) == before


def test_change_reason_from_the_select_and_deletes_ignored(project):
    project.model("dim_player", "{{ config(materialized='scd_type6', unique_key='player_id', deletes='ignore') }} "
                                "select * from {{ target.schema }}.players")
    project.create_source("players", "player_id int, tier string, change_reason string", [(1, "gold", "signup"), (2, "silver", None)])
    project.run("run", variables={"load_timestamp": "2026-01-01 06:00:00"})
    project.create_source("players", "player_id int, tier string, change_reason string", [(1, "platinum", "tier_upgrade")])
    project.run("run", variables={"load_timestamp": "2026-01-02 06:00:00"})
    assert project.table("dim_player", "player_id, tier, version, current_flag, change_reason", "player_id, version") == [
        (1, "gold", 1, False, "signup"),
        (1, "platinum", 2, True, "tier_upgrade"),
        (2, "silver", 1, True, "source_load"),  # absent, but deletes='ignore'
    ]


def test_bad_configuration_and_keys_fail_and_leave_tables(project):
    dim_model(project)
    load(project, [("P1", D[1], "N1", 10, 100)], T1, "r1")
    before = (project.table("dim_program", "*"), project.commits("dim_program"), project.commits("dim_program_audit"))
    cases = {
        "type0_columns=['created_on'], type1_columns=['created_on']":
            "column(s) created_on listed under two SCD types",
        "type1_columns=['current_program_name'], type3_columns={'current_program_name': 'prev_name'}":
            "type3_columns names current_program_name, which is not a Type 2 column",
        "type3_columns={'eligibility_threshold': 'funding_cap'}":
            "the previous-value column funding_cap of eligibility_threshold collides with a column",
        "deletes='drop'": "option 'deletes' is 'drop'; allowed: close, ignore",
    }
    for options, message in cases.items():
        dim_model(project, f"materialized='scd_type6', unique_key='program_id', {options}")
        assert message in project.fail("run", variables={"load_timestamp": "2026-01-02 06:00:00"})
    dim_model(project)
    project.create_source("stg_program", SOURCE, [("P1", D[1], "N1", 10, 100), ("P1", D[1], "N2", 11, 100)])
    assert "unique_key (program_id) is duplicated for 1 key(s) in the select, e.g. (P1) x2" in project.fail(
        "run", variables={"load_timestamp": "2026-01-02 06:00:00"})
    assert (project.table("dim_program", "*"), project.commits("dim_program"), project.commits("dim_program_audit")) == before
