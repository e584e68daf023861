"""Real dbt snapshots taken over by scd2_hist (option adopt_from): made by `dbt snapshot`
through three loads, for each strategy (timestamp, check) and each hard_deletes mode
(new_record with timestamp; invalidate, with custom meta column names and
dbt_valid_to_current, and ignore with check); adopted, loaded twice more and checked by the
invariant tests; against the history scd2_hist builds from the same loads from the start,
and against tables computed by hand. One scenario, on either target:
tests/cluster/test_snapshots_adopted.py runs it on the cluster (the test suite),
tests/lanes/test_snapshots_adopted_embedded.py on the embedded Spark with every strategy
and hard_deletes pair (the dbt-1.12 lane, whose dbt 1.12 makes the snapshots). Defects,
repairs and kills: tests/functional/test_adopt_snapshots.py."""
from __future__ import annotations

import datetime as dt

from projects import TargetTables, as_text

SOURCE = "id int, name string, tier int, updated_at timestamp"
T = {n: dt.datetime(2026, 1, n, 6) for n in range(1, 7)}
U = {n: T[n] - dt.timedelta(hours=1) for n in T}  # when a row's values changed, before load n
FAR = dt.datetime(9999, 12, 31)


def row(key, name, changed_in):
    return (key, name, key, U[changed_in])


# The source at each load: changes, deletions (3 at load 2, 4 at load 3, 5 at load 4,
# 2 at load 5) and returns (3 at load 3, 4 at load 4, 5 at load 5). A returning row comes
# back with a new updated_at, as a source that re-inserts it gives it.
LOADS = {
    1: [row(1, "a", 1), row(2, "b", 1), row(3, "c", 1), row(4, "d", 1)],
    2: [row(1, "a2", 2), row(2, "b", 1), row(4, "d", 1), row(5, "e", 2)],
    3: [row(1, "a2", 2), row(2, "b2", 3), row(3, "c", 3), row(5, "e", 2)],
    4: [row(1, "a3", 4), row(2, "b2", 3), row(3, "c", 3), row(4, "d", 4)],
    5: [row(1, "a3", 4), row(3, "c3", 5), row(4, "d", 4), row(5, "e", 5)],
    6: [row(1, "a3", 4), row(3, "c3", 5), row(4, "d", 4), row(5, "e", 5)],
}
TIMESTAMP, CHECK = "strategy='timestamp', updated_at='updated_at'", "strategy='check', check_cols='all'"
SNAPSHOTS = {  # each strategy and each hard_deletes mode, the meta columns renamed in one
    "snap_ts_new_record": f"{TIMESTAMP}, hard_deletes='new_record'",
    "snap_check_invalidate": (f"{CHECK}, hard_deletes='invalidate', "
                              "snapshot_meta_column_names={'dbt_valid_from': 'valid_from', 'dbt_valid_to': 'valid_to'}, "
                              "dbt_valid_to_current=\"timestamp'9999-12-31 00:00:00'\""),
    "snap_check_ignore": f"{CHECK}, hard_deletes='ignore'",
}
# every strategy with every hard_deletes mode (the dbt-1.12 lane's)
EVERY_PAIR = {**SNAPSHOTS, "snap_ts_invalidate": f"{TIMESTAMP}, hard_deletes='invalidate'",
              "snap_ts_ignore": f"{TIMESTAMP}, hard_deletes='ignore'",
              "snap_check_new_record": f"{CHECK}, hard_deletes='new_record'"}
SHOWN = "id, name, tier, updated_at, version_started_at, version_ended_at, version_state"
ORDER = "id, version_started_at"


def expected_from_load_times(starts):
    """The history after load 6, a version's start (and a change's end) at `starts[n]` for
    a change at load n; deletions close at load times, and so does every change from load 4
    on, loaded by scd2_hist itself."""
    s = starts
    return [
        (1, "a", 1, U[1], s[1], s[2], "changed"),
        (1, "a2", 1, U[2], s[2], T[4], "changed"),
        (1, "a3", 1, U[4], T[4], None, "changed"),
        (2, "b", 2, U[1], s[1], s[3], "changed"),
        (2, "b2", 2, U[3], s[3], T[5], "deleted"),
        (3, "c", 3, U[1], s[1], T[2], "deleted"),
        (3, "c", 3, U[3], s[3], T[5], "changed"),
        (3, "c3", 3, U[5], T[5], None, "changed"),
        (4, "d", 4, U[1], s[1], T[3], "deleted"),
        (4, "d", 4, U[4], T[4], None, "new"),
        (5, "e", 5, U[2], s[2], T[4], "deleted"),
        (5, "e", 5, U[5], T[5], None, "new"),
    ]


def expected_without_deletions(starts):
    """hard_deletes='ignore' recorded no deletion before the switch: key 3 stays open through
    load 2 and changes at load 3 (back with a new updated_at), key 4 stays open through load 3
    and changes at load 4; `starts` as in expected_from_load_times."""
    s = starts
    return [
        (1, "a", 1, U[1], s[1], s[2], "changed"), (1, "a2", 1, U[2], s[2], T[4], "changed"),
        (1, "a3", 1, U[4], T[4], None, "changed"),
        (2, "b", 2, U[1], s[1], s[3], "changed"), (2, "b2", 2, U[3], s[3], T[5], "deleted"),
        (3, "c", 3, U[1], s[1], s[3], "changed"), (3, "c", 3, U[3], s[3], T[5], "changed"),
        (3, "c3", 3, U[5], T[5], None, "changed"),
        (4, "d", 4, U[1], s[1], T[4], "changed"), (4, "d", 4, U[4], T[4], None, "changed"),
        (5, "e", 5, U[2], s[2], T[4], "deleted"), (5, "e", 5, U[5], T[5], None, "new"),
    ]


def load(project, tables, number, *args):
    tables.create("src", SOURCE, LOADS[number])
    variables = {"load_timestamp": T[number].strftime("%Y-%m-%d %H:%M:%S"), "load_run_id": f"r{number}"}
    return project.run(*args, variables=variables)


def history_model(project, name, options=""):
    project.model(name, f"""
        {{{{ config(materialized='scd2_hist', unique_key='id'{options}) }}}}
        select id, name, tier, updated_at from {{{{ target.schema }}}}.src
        """)


def adopt_real_snapshots(project, snapshots=SNAPSHOTS) -> None:
    """The scenario, in `project` on the current target, for each of `snapshots` (name: config)."""
    tables = TargetTables(project.schema)
    # the snapshots' time is the load's, as scd2_hist's load_timestamp
    project.write("macros/snapshot_time.sql", """
        {% macro spark__snapshot_get_time() %}{{ historize.load_timestamp_sql() }}{% endmacro %}
        """)
    for name, config in snapshots.items():
        project.write(f"snapshots/{name}.sql", f"""
            {{% snapshot {name} %}}
            {{{{ config(unique_key='id', file_format='delta', {config}) }}}}
            select * from {{{{ target.schema }}}}.src
            {{% endsnapshot %}}
            """)
        repair = ", adopt_repair=['keyless_deletion_record']" if "new_record" in name else ""
        history_model(project, f"hist_{name}", f", adopt_from='{name}'{repair}")
    history_model(project, "plain")
    project.write("models/histories.yml", "version: 2\nmodels:\n" + "".join(f"""
  - name: hist_{name}
    data_tests:
      - historize.one_open_version
      - historize.no_overlapping_versions
      - historize.no_gaps
      - historize.open_version_unbounded
""" for name in snapshots))
    for number in (1, 2, 3):
        load(project, tables, number, "build", "--select", "resource_type:snapshot", "plain")
    snapshot_rows = {name: tables.rows(name, "to_json(struct(*))", "1") for name in snapshots}
    snapshot_commits = {name: tables.commits(name) for name in snapshots}
    # the open versions' end of dbt_valid_to_current, and what new_record leaves (dbt-core 11949:
    # deletion records without their key, never closed)
    assert tables.rows("snap_check_invalidate", "id, valid_from, valid_to", "valid_from, id")[-2:] == as_text([
        (2, T[3], FAR), (3, T[3], FAR)])
    written = tables.rows("snap_ts_new_record", "id, name, dbt_valid_from, dbt_valid_to, dbt_is_deleted",
                          "dbt_valid_from, id")
    assert [row for row in written if row[4] == "True"] == as_text([
        (None, None, T[2], None, "True"), (None, None, T[3], None, "True")])
    load(project, tables, 4, "run")  # its rerun changes nothing: test_an_adoption_killed_after_any_statement_...
    load(project, tables, 5, "run")
    load(project, tables, 6, "build", "--exclude", "resource_type:snapshot")  # the invariant tests after it

    from_the_start = as_text(expected_from_load_times(T))
    assert tables.rows("plain", SHOWN, ORDER) == from_the_start
    for name in snapshots:
        shown = tables.rows(f"hist_{name}", SHOWN, ORDER)
        if "ignore" in name:
            # no deletion recorded before the switch: the keys absent then stayed open
            assert shown == as_text(expected_without_deletions(T if "check" in name else U)), name
        elif "check" in name:
            # the check strategy starts a version at the snapshot's time: the history is scd2_hist's,
            # version keys included
            assert shown == from_the_start, name
            assert (tables.rows(f"hist_{name}", f"hist_{name}_key", ORDER) == tables.rows("plain", "plain_key", ORDER))
        else:
            # the timestamp strategy starts it at the source's updated_at (deletions still close at load times)
            assert shown == as_text(expected_from_load_times(U)), name
        # the versions adopted keep the adopting run's id; those written since, their own
        assert sorted(set(tables.rows(f"hist_{name}", "load_run_id", "load_run_id"))) == [("r4",), ("r5",)], name
        if "new_record" in name:
            assert tables.rows(f"hist_{name}__adopt_set_aside", "id, historize_defect, historize_load_run_id",
                               "historize_defect") == [(None, "keyless_deletion_record", "r4")] * 2, name
        assert tables.rows(name, "to_json(struct(*))", "1") == snapshot_rows[name], name
        assert tables.commits(name) == snapshot_commits[name], name


