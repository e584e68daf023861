"""Tables built by the release before compact keys and hashes (HEX_KEYS_RELEASE: version keys
and row hashes stored as SHA-256 hex text) are rewritten compact by the next load of this
release: every version kept with its identity (its key the first 16 bytes of the key it had),
every hash as this release computes it (so no version opens for an unchanged row, and a late
load finds its neighbours by their hashes), the audit's keys too, the invariant tests passing,
and the table's Delta history kept. Expected tables are written by hand; keys and hashes come
from the reference model (tests/reference.py)."""
from __future__ import annotations

import datetime as dt

from projects import load_reports, release_project
from reference import hash_key, row_hash

T1, T2, T3, T4 = (dt.datetime(2026, 5, d, 6) for d in (1, 2, 3, 4))
S1, S2, S3 = (dt.datetime(2026, 4, d, 12) for d in (1, 2, 3))
RUNS = {T1: "r1", T2: "r2", T3: "r3", T4: "r4"}
INVARIANTS = ("one_open_version", "no_overlapping_versions", "no_gaps", "open_version_unbounded")

MODELS = {
    "hist": "{{ config(materialized='scd2_hist', unique_key='id', out_of_order='reconcile') }} "
            "select * from {{ target.schema }}.snapshot",
    "dim": "{{ config(materialized='scd_type6', unique_key='k', type1_columns=['b'], audit=true) }} "
           "select * from {{ target.schema }}.dim_snapshot",
    "events_hist": "{{ config(materialized='scd2_hist', unique_key='id', input='changes', sequence_by='changed_at', "
                   "deleted_when=\"op = 'D'\") }} select * from {{ target.schema }}.events",
}
SNAPSHOTS = {
    T1: [(1, "a"), (2, "b"), (3, "c")],
    T2: [(1, "a"), (2, "b2"), (4, "d")],  # 2 changed, 3 deleted, 4 new
    T3: [(1, "a"), (2, "b2"), (4, "d")],  # late, after T4: what T2 left, so nothing to write
    T4: [(1, "a"), (2, "b3"), (4, "d")],  # 2 changed
}
DIM_SNAPSHOTS = {
    T1: [(1, 10, "x"), (2, 20, "y")],
    T2: [(1, 10, "x"), (2, 21, "y")],  # 2: a Type 2 change
    T4: [(1, 10, "x2"), (2, 21, "y")],  # 1: a Type 1 change only
}
EVENTS = {
    T1: [(1, "a", S1, "U"), (2, "b", S1, "U")],
    T2: [(2, "b2", S2, "U"), (1, None, S2, "D")],
    T4: [(2, "b2", S3, "U"), (3, "c", S3, "U")],  # 2's image unchanged: no version
}


def write_models(project) -> None:
    for name, sql in MODELS.items():
        project.model(name, sql)
    tests = "".join(f"\n      - historize.{test}" for test in INVARIANTS)
    project.write("models/hist.yml", f"version: 2\nmodels:\n  - name: hist\n    data_tests:{tests}\n")


def load(project, at, select: str = "hist dim events_hist") -> dict:
    project.create_source("snapshot", "id int, name string", SNAPSHOTS[at])
    project.create_source("dim_snapshot", "k int, a int, b string", DIM_SNAPSHOTS.get(at, DIM_SNAPSHOTS[T2]))
    project.create_source("events", "id int, name string, changed_at timestamp, op string", EVENTS.get(at, []))
    result = project.run("run", "-s", *select.split(), variables={"load_timestamp": f"{at:%Y-%m-%d %H:%M:%S}", "load_run_id": RUNS[at]})
    return {name: response["_message"] for name, response in load_reports(result).items()}


def types(project, name: str) -> dict:
    return {column[0]: column[1] for column in project.columns(name)}


def test_a_table_built_by_the_release_with_hex_keys_is_rewritten_compact_by_its_next_load(project, tmp_path):
    released = release_project(tmp_path / "release", project.schema)
    write_models(released)
    for at in (T1, T2):
        load(released, at)
    assert types(project, "hist")["hist_key"] == "string" and types(project, "hist")["row_hash"] == "string"
    hex_keys = {name: {(r[0], r[1]): r[2] for r in project.table(name, f"{key}, {start}, {name}_key")}
                for name, key, start in (("hist", "id", "version_started_at"), ("dim", "k", "effective_from"),
                                         ("events_hist", "id", "version_started_at"))}
    audit_keys = sorted(project.table("dim_audit", "k, change_ts, dim_key_old, dim_key_new"), key=repr)
    hist_commits = project.commits("hist")

    write_models(project)
    assert load(project, T4) == {
        "hist": "0 new, 1 changed, 0 deleted (merge)",
        "dim": "0 new, 1 changed, 0 deleted (versions)",  # key 1's one version: its Type 1 value
        "events_hist": "1 new, 0 changed, 0 deleted (versions, from events)",
    }

    # scd2_hist: compact columns, every version kept, the new one added
    assert {c: types(project, "hist")[c] for c in ("hist_key", "row_hash")} == {"hist_key": "binary", "row_hash": "bigint"}
    expected = [
        (1, "a", T1, None, "new", "r1"),
        (2, "b", T1, T2, "changed", "r2"),
        (2, "b2", T2, T4, "changed", "r4"),
        (2, "b3", T4, None, "changed", "r4"),
        (3, "c", T1, T2, "deleted", "r2"),
        (4, "d", T2, None, "new", "r2"),
    ]
    shown = "hist_key, id, name, row_hash, version_started_at, version_ended_at, version_state, load_run_id"
    assert project.table("hist", shown, "id, version_started_at") == [
        (hash_key([i, start]), i, name, row_hash({"name": name}), start, end, state, run)
        for i, name, start, end, state, run in expected]
    # each version's identity: its key is the first 16 bytes of the hex key the release gave it
    for (i, start), key in hex_keys["hist"].items():
        assert project.sql(f"select hist_key from {project.schema}.hist where id = {i} "
                           f"and version_started_at = timestamp'{start}'") == [(bytes.fromhex(key[:32]),)]
    # the rewrite is one commit of the same table, before the load's: the release's table still readable
    history = project.history("hist")
    assert [h["operation"] for h in history[:2]] == ["MERGE", "REPLACE TABLE AS SELECT"]
    assert project.commits("hist") == hist_commits + 2
    assert project.sql(f"select count(*), max(length(hist_key)) from {project.schema}.hist "
                       f"version as of {history[2]['version']}") == [(5, 64)]
    project.run("test", "-s", "hist")

    # a late load finds its neighbours by their rewritten hashes: T3 holds what T2 left
    assert load(project, T3, "hist")["hist"] == "0 new, 0 changed, 0 deleted (late, before 2026-05-04 06:00:00.000000)"
    assert project.commits("hist") == hist_commits + 2

    # scd_type6: the dimension and its audit compact; key 1 kept its version (Type 1 change only)
    assert {c: types(project, "dim")[c] for c in ("dim_key", "_hash")} == {"dim_key": "binary", "_hash": "bigint"}
    assert project.table("dim", "dim_key, k, a, b, effective_from, current_flag, version, _hash", "k, version") == [
        (hash_key([1, T1]), 1, 10, "x2", T1, True, 1, row_hash({"a": 10})),
        (hash_key([2, T1]), 2, 20, "y", T1, False, 1, row_hash({"a": 20})),
        (hash_key([2, T2]), 2, 21, "y", T2, True, 2, row_hash({"a": 21})),
    ]
    for (k, start), key in hex_keys["dim"].items():
        assert hash_key([k, start]) == bytes.fromhex(key[:32])
    assert {c: types(project, "dim_audit")[c] for c in ("dim_key_old", "dim_key_new")} == {
        "dim_key_old": "binary", "dim_key_new": "binary"}
    compact = lambda key: bytes.fromhex(key[:32]) if key else None  # noqa: E731
    assert sorted(project.table("dim_audit", "k, change_ts, dim_key_old, dim_key_new"), key=repr) == sorted(
        [(k, ts, compact(old), compact(new)) for k, ts, old, new in audit_keys]
        + [(1, T4, hash_key([1, T1]), hash_key([1, T1]))], key=repr)
    assert dict(project.sql(f"show tblproperties {project.schema}.dim_audit"))["delta.appendOnly"] == "true"

    # scd2_hist from events: compact, every version kept, 3 new, 2's unchanged image no version
    assert project.table("events_hist", "events_hist_key, id, name, row_hash, version_started_at, version_ended_at, "
                                        "version_state", "id, version_started_at") == [
        (hash_key([1, S1]), 1, "a", row_hash({"name": "a"}), S1, S2, "deleted"),
        (hash_key([2, S1]), 2, "b", row_hash({"name": "b"}), S1, S2, "changed"),
        (hash_key([2, S2]), 2, "b2", row_hash({"name": "b2"}), S2, None, "changed"),
        (hash_key([3, S3]), 3, "c", row_hash({"name": "c"}), S3, None, "new"),
    ]
    for (i, start), key in hex_keys["events_hist"].items():
        assert hash_key([i, start]) == bytes.fromhex(key[:32])

    # the next load finds nothing to rewrite: its statements are the load's alone
    assert load(project, T4) == {"hist": "0 new, 0 changed, 0 deleted (merge)",
                                 "dim": "0 new, 0 changed, 0 deleted (versions)",
                                 "events_hist": "0 new, 0 changed, 0 deleted (versions, from events)"}
    assert project.commits("hist") == hist_commits + 2
