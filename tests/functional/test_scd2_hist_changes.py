"""scd2_hist with input='changes': each rule of an events load, and each refusal,
against tables computed by hand. One model walks a sequence of batches: events
in and out of order, ties, NULL attributes, deletes of absent keys, a late event
that falls before one that changed nothing, a replayed batch."""
from __future__ import annotations

import datetime as dt

import pytest

from historize_tools import dbt_runner as dbt

from probes import StatementProbe, kill_after_each_write, schema_folder, tables_and_versions
from projects import load_reports, report

EVENTS = "id int, name string, tier int, changed_at timestamp, seq int, op string"
CONFIG = ("materialized='scd2_hist', unique_key='id', input='changes', sequence_by=['changed_at', 'seq'], "
          "deleted_when=\"op = 'D'\"")
SHOWN = "id, name, tier, version_started_at, version_ended_at, version_state, load_run_id"
ORDER = "id, version_started_at"
T = {n: dt.datetime(2026, 1, n, 6) for n in range(1, 8)}
T1B = dt.datetime(2026, 1, 1, 18)
LOADED = "2026-01-10 00:00:00"


def events_model(project, config=CONFIG, name="hist"):
    project.model(name, f"""
        {{{{ config({config}) }}}}
        select * from {{{{ target.schema }}}}.events
        """)


def load(project, rows, run_id, expect_success=True, callbacks=()):
    project.create_source("events", EVENTS, rows)
    return project.run("run", variables={"load_timestamp": LOADED, "load_run_id": run_id},
                       expect_success=expect_success, callbacks=callbacks)


def refused(project, rows, run_id="bad"):
    project.create_source("events", EVENTS, rows)
    return project.fail("run", variables={"load_timestamp": LOADED, "load_run_id": run_id})


BATCH_1 = [
    (1, "a", 1, T[1], 0, "U"),
    (1, "a", 1, T[2], 0, "U"),  # equal to the open version: nothing
    (1, "b", 1, T[3], 0, "U"),  # a change: closes a, opens b
    (2, "x", 2, T[1], 0, "D"),  # a delete with no version: nothing
    (2, "x", 2, T[2], 0, "U"),
    (2, "x", 2, T[4], 0, "D"),  # closes x as deleted
    (2, "y", 2, T[5], 0, "U"),  # back: a new version
    (3, "p", 3, T[2], 1, "U"),  # two events at one instant: the later sequence decides
    (3, "q", 3, T[2], 2, "U"),
    (3, None, 3, T[3], 0, "U"),  # a NULL attribute is a value like any other
]
AFTER_1 = [
    (1, "a", 1, T[1], T[3], "changed", "r1"),
    (1, "b", 1, T[3], None, "changed", "r1"),
    (2, "x", 2, T[2], T[4], "deleted", "r1"),
    (2, "y", 2, T[5], None, "new", "r1"),
    (3, "q", 3, T[2], T[3], "changed", "r1"),
    (3, None, 3, T[3], None, "changed", "r1"),
]
BATCH_2 = [
    (1, "c", 1, T1B, 0, "U"),  # late, before the event of T2 that changed nothing: a is back at T2
    (2, "x", 2, T[2], 0, "U"),  # the same event again: one event
    (4, "m", 4, T[3], 0, "U"),  # a new key, its events out of order
    (4, "n", 4, T[1], 0, "U"),
]
AFTER_2 = [
    (1, "a", 1, T[1], T1B, "changed", "r2"),
    (1, "c", 1, T1B, T[2], "changed", "r2"),
    (1, "a", 1, T[2], T[3], "changed", "r2"),
    (1, "b", 1, T[3], None, "changed", "r1"),
    (2, "x", 2, T[2], T[4], "deleted", "r1"),
    (2, "y", 2, T[5], None, "new", "r1"),
    (3, "q", 3, T[2], T[3], "changed", "r1"),
    (3, None, 3, T[3], None, "changed", "r1"),
    (4, "n", 4, T[1], T[3], "changed", "r2"),
    (4, "m", 4, T[3], None, "changed", "r2"),
]


def test_events_give_versions_by_the_rules_in_any_order_and_a_replay_changes_nothing(project):
    events_model(project)
    result = load(project, BATCH_1, "r1")
    assert project.table("hist", SHOWN, ORDER) == AFTER_1
    assert load_reports(result)["hist"] == report(6, 0, 0, "versions, from events")
    # the table: the key and the attributes, not the sequence or the delete marker
    assert [c[0] for c in project.columns("hist")] == [
        "hist_key", "id", "name", "tier", "row_hash", "version_started_at", "version_ended_at", "version_state",
        "load_run_id", "loaded_at"]
    # every event is remembered, those that changed nothing too, and applied
    assert project.table("hist__historize_events", "count(*), count_if(_historize_applied)") == [(10, 10)]

    result = load(project, BATCH_2, "r2")
    assert project.table("hist", SHOWN, ORDER) == AFTER_2
    # the version a began at T1 ends earlier; c, a again, n and m are new rows
    assert load_reports(result)["hist"] == report(4, 1, 0, "versions, from events")

    commits = project.commits("hist"), project.commits("hist__historize_events")
    result = load(project, BATCH_2, "r2")
    assert project.table("hist", SHOWN, ORDER) == AFTER_2
    assert (project.commits("hist"), project.commits("hist__historize_events")) == commits
    assert load_reports(result)["hist"] == report(0, 0, 0, "versions, from events")
    assert project.table("hist__historize_events", "count(*), count_if(_historize_applied)") == [(13, 13)]

    # a version key is the key and where the version begins
    assert project.sql(
        "select count(*), count(distinct hist_key), count_if(hist_key = unhex(left(sha2(concat(cast(length(cast(id as string)) as "
        "string), ':', cast(id as string), cast(length(cast(version_started_at as string)) as string), ':', "
        f"cast(version_started_at as string)), 256), 32))) from {project.schema}.hist") == [(10, 10, 10)]
    # deletion vectors by default: a load marks the versions it closes
    assert dict(project.sql(f"show tblproperties {project.schema}.hist"))["delta.enableDeletionVectors"] == "true"


def test_a_delete_of_every_key_then_an_empty_batch(project):
    events_model(project)
    load(project, [(1, "a", 1, T[1], 0, "U"), (2, "b", 2, T[1], 0, "U")], "r1")
    result = load(project, [(1, None, None, T[2], 0, "D"), (2, "b", 2, T[2], 0, "D")], "r2")
    assert project.table("hist", SHOWN, ORDER) == [
        (1, "a", 1, T[1], T[2], "deleted", "r2"), (2, "b", 2, T[1], T[2], "deleted", "r2")]
    assert load_reports(result)["hist"] == report(0, 2, 0, "versions, from events")
    commits = project.commits("hist"), project.commits("hist__historize_events")
    result = load(project, [], "r3")
    assert load_reports(result)["hist"] == report(0, 0, 0, "versions, from events")
    assert (project.commits("hist"), project.commits("hist__historize_events")) == commits


def test_without_deleted_when_every_event_is_an_upsert_and_one_sequence_column_will_do(project):
    events_model(project, "materialized='scd2_hist', unique_key='id', input='changes', sequence_by='changed_at'")
    load(project, [(1, "a", 1, T[1], 0, "D"), (1, "b", 1, T[2], 0, "D")], "r1")
    # op is an attribute now: it is no column of sequence_by or deleted_when
    assert project.table("hist", "id, name, op, version_started_at, version_ended_at, version_state", ORDER) == [
        (1, "a", "D", T[1], T[2], "changed"), (1, "b", "D", T[2], None, "changed")]


BAD_EVENTS = [  # rows of a batch after a first load of (5, z) at T1, and the error (model M)
    ([(1, "a", 1, T[1], 0, "U"), (None, "b", 1, T[1], 0, "U"), (None, "c", 1, T[2], 0, "U")],
     "historize: model M: unique_key (id) is NULL in 2 row(s) of the select; nothing was written"),
    ([(1, "a", 1, T[1], None, "U"), (2, "b", 1, None, 0, "U")],
     "historize: model M: sequence_by (changed_at, seq) is NULL in 2 row(s) of the select; nothing was written"),
    ([(1, "a", 1, T[1], 0, "U"), (1, "b", 1, T[1], 0, "U"), (2, "c", 1, T[1], 0, "U"), (2, "c", 1, T[1], 0, "D")],
     "historize: model M: 2 event(s) of the same key and sequence (id, changed_at, seq) have different images, "
     "in the select or against the events already applied, e.g. (1, 2026-01-01 06:00:00, 0); "
     "(2, 2026-01-01 06:00:00, 0); the same event twice is one event, two events need two sequences. "
     "Nothing was written"),
    # against an event applied before: key 5 at T1 was z
    ([(5, "other", 5, T[1], 0, "U")],
     "historize: model M: 1 event(s) of the same key and sequence (id, changed_at, seq) have different images, "
     "in the select or against the events already applied, e.g. (5, 2026-01-01 06:00:00, 0); the same event twice "
     "is one event, two events need two sequences. Nothing was written"),
]


def test_bad_events_are_refused_and_nothing_is_written(project):
    """One model per bad batch, all refused in one run."""
    for number in range(len(BAD_EVENTS)):
        project.model(f"bad_{number}", f"""
            {{{{ config({CONFIG}) }}}}
            select * from {{{{ target.schema }}}}.events_{number}
            """)
        project.create_source(f"events_{number}", EVENTS, [(5, "z", 5, T[1], 0, "U")])
    project.run("run", variables={"load_run_id": "r1"})
    tables = [f"bad_{n}{suffix}" for n in range(len(BAD_EVENTS)) for suffix in ("", "__historize_events")]
    for number, (rows, _) in enumerate(BAD_EVENTS):
        project.create_source(f"events_{number}", EVENTS, rows)
    with project.unchanged(*tables):
        failures = project.failures("run", variables={"load_run_id": "bad"})
    for number, (_, message) in enumerate(BAD_EVENTS):
        assert message.replace("model M", f"model bad_{number}") in failures[f"bad_{number}"]


BAD_OPTIONS = [  # a model's options, and the error (model M)
    ("input='changes'",
     "historize: model M: input 'changes' needs sequence_by: the timestamp column that orders a key's events, "
     "then any columns that break its ties"),
    ("input='changes', sequence_by='changed'",
     "historize: model M: the select has no column changed (sequence_by); its columns are: id, name, tier, "
     "changed_at, seq, op"),
    ("input='changes', sequence_by=['seq', 'changed_at']",
     "historize: model M: sequence_by's first column seq is int; it must be a timestamp, where versions begin and end"),
    ("input='changes', sequence_by='changed_at', deleted_when=\"kind = 'D' or op = 'X'\"",
     "historize: model M: deleted_when (kind = 'D' or op = 'X') names kind, which the select has no column of; "
     "its columns are: id, name, tier, changed_at, seq, op"),
    ("input='changes', sequence_by='changed_at', deleted_when=\"(op = 'D'\"",
     "historize: model M: deleted_when ((op = 'D') does not parse: a quote or a parenthesis is not closed"),
    ("input='changes', sequence_by='changed_at', deleted_when=\"op + 1\"",
     "historize: model M: deleted_when (op + 1) is not a condition on the select's columns: "
     "[DATATYPE_MISMATCH.DATA_DIFF_TYPES] Cannot resolve \"coalesce((op + 1), false)\" due to data type mismatch: "
     "Input to `coalesce` should all be the same type, but it's (\"DOUBLE\" or \"BOOLEAN\")."),
    # a syntax error is Spark's, raised by the check, which names what it checked
    ("input='changes', sequence_by='changed_at', deleted_when=\"op = = 'D'\"",
     "explain select coalesce((op = = 'D'), false) and true as deleted_when from M__historize_source"),
    ("sequence_by='changed_at'",
     "historize: model M: sequence_by and deleted_when apply to input 'changes'; input is 'snapshot'"),
    ("input='changes', sequence_by='changed_at', out_of_order='reconcile'",
     "historize: model M: strategy and out_of_order apply to input 'snapshot'; input 'changes' writes one MERGE "
     "and places late events itself"),
]


def test_options_that_name_no_column_or_do_not_parse_are_refused(project):
    """One model per bad option, all refused in one run, none of them writing a table."""
    for number, (config, _) in enumerate(BAD_OPTIONS):
        events_model(project, "materialized='scd2_hist', unique_key='id', " + config, name=f"bad_{number}")
    project.create_source("events", EVENTS, [(1, "a", 1, T[1], 0, "U")])
    failures = project.failures("run", variables={"load_timestamp": LOADED, "load_run_id": "bad"})
    for number, (_, message) in enumerate(BAD_OPTIONS):
        named = message.replace("model M:", f"model bad_{number}:").replace("from M__", f"from bad_{number}__")
        assert named in failures[f"bad_{number}"]
    assert [row[1] for row in project.sql(f"show tables in {project.schema}") if not row[2]] == ["events"]


def events_state(project) -> dict:
    """The history (but the run's clock) and the events remembered, each once, and whether
    every one is applied."""
    return {
        "history": project.table("hist", "* except (loaded_at)", ORDER),
        "events": project.table("hist__historize_events", "distinct id, changed_at, seq, _historize_deleted, "
                                "_historize_image", "id, changed_at, seq"),
        "pending": project.table("hist__historize_events", "count_if(not _historize_applied)"),
    }


def test_an_empty_batch_applies_the_events_a_killed_run_left_pending(project):
    """A run killed after recording its events leaves them pending (its MERGE undone here);
    the next load, of no event, checks nothing and applies them."""
    events_model(project)
    load(project, BATCH_1, "r1")
    before = project.sql(f"describe history {project.schema}.hist limit 1")[0][0]
    load(project, BATCH_2, "r2")
    project.sql(f"restore table {project.schema}.hist to version as of {before}")
    project.sql(f"update {project.schema}.hist__historize_events set _historize_applied = false where load_run_id = 'r2'")
    recorder = dbt.EventRecorder()
    load(project, [], "r3", callbacks=[recorder])
    assert project.table("hist", SHOWN, ORDER) == [row[:-1] + ("r3" if row[-1] == "r2" else row[-1],) for row in AFTER_2]
    assert project.table("hist__historize_events", "count_if(not _historize_applied)") == [(0,)]
    statements = [sql for _, sql in recorder.statements]
    assert not [sql for sql in statements if "conflicting as (" in sql or "insert into" in sql], statements
    assert len([sql for sql in statements if "merge into" in sql]) == 1


# A batch after every event of BATCH_1: its keys' histories continue from their open versions.
IN_ORDER = [
    (1, "d", 1, T[6], 0, "U"),
    (2, None, None, T[6], 0, "D"),
    (3, None, 3, T[6], 0, "U"),  # equal to the open version: nothing
    (5, "e", 5, T[7], 0, "U"),
]
AFTER_IN_ORDER = sorted(AFTER_1[:1] + [(1, "b", 1, T[3], T[6], "changed", "r2"), (1, "d", 1, T[6], None, "changed", "r2"),
                                       AFTER_1[2], (2, "y", 2, T[5], T[6], "deleted", "r2")]
                        + AFTER_1[4:] + [(5, "e", 5, T[7], None, "new", "r2")], key=lambda row: (row[0], row[3]))


def test_a_batch_in_order_whose_every_event_closes_a_version_writes_twice_its_events(project):
    """The in-order change set's bound (twice the batch's events) is reached: each event
    changes its key's open version, which it closes, and opens one. Nothing is dropped."""
    events_model(project)
    load(project, BATCH_1, "r1")
    recorder = dbt.EventRecorder()
    load(project, [(1, "d", 1, T[6], 0, "U"), (2, "z", 2, T[6], 0, "U"), (3, "w", 3, T[6], 0, "U")], "r2",
         callbacks=[recorder])
    assert project.table("hist", SHOWN, ORDER) == [
        (1, "a", 1, T[1], T[3], "changed", "r1"),
        (1, "b", 1, T[3], T[6], "changed", "r2"),
        (1, "d", 1, T[6], None, "changed", "r2"),
        (2, "x", 2, T[2], T[4], "deleted", "r1"),
        (2, "y", 2, T[5], T[6], "changed", "r2"),
        (2, "z", 2, T[6], None, "changed", "r2"),
        (3, "q", 3, T[2], T[3], "changed", "r1"),
        (3, None, 3, T[3], T[6], "changed", "r2"),
        (3, "w", 3, T[6], None, "changed", "r2"),
    ]
    merges = [sql for _, sql in recorder.statements if "merge into" in sql]
    assert len(merges) == 1 and "as open_versions" in merges[0] and "limit 6" in merges[0]


@pytest.mark.parametrize("batch, after", [(BATCH_2, AFTER_2), (IN_ORDER, AFTER_IN_ORDER)], ids=["late", "in order"])
def test_an_events_load_killed_after_any_statement_ends_correct_when_rerun(project, batch, after):
    """As tests/functional/test_kill_and_rerun.py does for snapshots: the load runs once
    uninterrupted, then from the same start it is killed after its first write, its rerun
    after its own first write, and so on; after each kill no key has two open versions,
    and the end equals the uninterrupted load's. A batch with a late event rebuilds its
    keys; one in order continues their open versions (and its reruns, finding its events
    pending, rebuild them)."""
    events_model(project)
    load(project, BATCH_1, "r1")
    schema_dir = schema_folder(project)
    start = dict(tables_and_versions(schema_dir))
    probe = lambda: tables_and_versions(schema_dir)  # noqa: E731
    reference = StatementProbe("hist", probe).started()
    recorder = dbt.EventRecorder()
    load(project, batch, "r2", callbacks=[reference, recorder])
    continued = [sql for _, sql in recorder.statements if "merge into" in sql and "as open_versions" in sql]
    assert len(continued) == (1 if batch is IN_ORDER else 0)
    expected = events_state(project)
    assert project.table("hist", SHOWN, ORDER) == after
    assert expected["pending"] == [(0,)]
    writing = reference.writes()
    assert len(writing) == 3, writing  # the events recorded, the MERGE, the events marked applied

    for table, version in start.items():
        project.sql(f"restore table {project.schema}.{table} to version as of {version}")

    def no_key_open_twice(kills):
        assert project.sql(f"select id from {project.schema}.hist where version_ended_at is null "
                           "group by id having count(*) > 1") == [], kills

    kills = kill_after_each_write("hist", probe, writing, lambda callbacks: load(
        project, batch, "r2", expect_success=False, callbacks=callbacks), no_key_open_twice)
    assert len(kills) >= len(writing)
    assert events_state(project) == expected
    assert project.table("hist", SHOWN, ORDER) == after


def test_renaming_a_column_is_refused_and_nothing_is_written(project):
    events_model(project)
    load(project, [(1, "a", 1, T[1], 0, "U")], "r1")
    project.model("hist", f"""
        {{{{ config({CONFIG}) }}}}
        select id, name as title, tier, changed_at, seq, op from {{{{ target.schema }}}}.events
        """)
    project.write("models/schema.yml", "version: 2\nmodels:\n  - name: hist\n    columns:\n"
                                       "      - name: title\n        meta: {former_names: [name]}\n")
    with project.unchanged("hist", "hist__historize_events"):
        assert ("historize: model hist: with input 'changes', a column cannot be renamed yet (name to title): the "
                "events already applied hold its former name. Nothing was written") in refused(
                    project, [(1, "b", 1, T[2], 0, "U")])


FEED_CONFIG = ("materialized='scd2_hist', unique_key='id', input='changes', "
               "sequence_by=['_commit_timestamp', '_commit_version', '_change_order'], "
               "deleted_when=\"_change_type = 'delete'\"")


def feed_model(project):
    """The model `hist`, loading the Change Data Feed of the source erp.customers (the table
    customers of the test's schema)."""
    project.write("models/sources.yml", f"version: 2\nsources:\n  - name: erp\n    schema: {project.schema}\n"
                                        "    tables:\n      - name: customers\n")
    project.model("hist", f"""
        {{{{ config({FEED_CONFIG}) }}}}
        select * from {{{{ historize.change_feed(source('erp', 'customers')) }}}}
        """)


def commit_times(project, table: str) -> dict[int, dt.datetime]:
    return {row["version"]: row["timestamp"] for row in project.history(table)}


def test_a_delta_change_data_feed_builds_the_history_its_commits_mean(project):
    customers = f"{project.schema}.customers"
    project.sql(f"create table {customers} (id int, name string, tier int) using delta "
                "tblproperties ('delta.enableChangeDataFeed' = 'true')")
    project.sql(f"insert into {customers} values (1, 'a', 1), (2, 'b', 1), (3, 'c', 1)")  # version 1
    feed_model(project)
    # the first load reads the table as it is, at its current version
    project.run("run", variables={"load_run_id": "r1"})
    project.sql(f"update {customers} set name = 'a2' where id = 1")  # version 2
    project.sql(f"delete from {customers} where id = 2")  # version 3
    project.sql(f"insert into {customers} values (4, 'd', 2)")  # version 4
    project.run("run", variables={"load_run_id": "r2"})
    project.sql(f"update {customers} set tier = 2 where id = 1")  # version 5
    project.sql(f"insert into {customers} values (2, 'b', 1)")  # version 6: back
    project.sql(f"update {customers} set tier = 2 where id = 1")  # version 7: changes nothing
    project.run("run", variables={"load_run_id": "r3"})
    rerun = project.run("run", variables={"load_run_id": "r3"})
    assert load_reports(rerun)["hist"] == report(0, 0, 0, "versions, from events")

    at = commit_times(project, "customers")
    expected = [
        (1, "a", 1, at[1], at[2], "changed"), (1, "a2", 1, at[2], at[5], "changed"), (1, "a2", 2, at[5], None, "changed"),
        (2, "b", 1, at[1], at[3], "deleted"), (2, "b", 1, at[6], None, "new"),
        (3, "c", 1, at[1], None, "new"),
        (4, "d", 2, at[4], None, "new"),
    ]
    assert project.table("hist", "id, name, tier, version_started_at, version_ended_at, version_state", ORDER) == expected

    # a key deleted while the feed is read as a snapshot is closed at the snapshot's version
    project.sql(f"delete from {customers} where id = 3")  # version 8
    project.run("run", variables={"load_run_id": "r4", "change_feed_snapshot": True})
    at = commit_times(project, "customers")
    assert project.table("hist", "id, version_started_at, version_ended_at, version_state",
                         "id, version_started_at")[5] == (3, at[1], at[8], "deleted")


def test_a_source_without_the_change_data_feed_is_refused(project):
    project.sql(f"create table {project.schema}.customers (id int, name string) using delta")
    feed_model(project)
    error = project.fail("run")
    assert (f"historize: model hist: change_feed({project.schema}.customers): {project.schema}.customers does not have "
            "the table property delta.enableChangeDataFeed = true; set it (alter table "
            f"{project.schema}.customers set tblproperties ('delta.enableChangeDataFeed' = 'true')), then load the "
            "table once as a snapshot: --vars '{change_feed_snapshot: true}'") in error
    assert [row[1] for row in project.sql(f"show tables in {project.schema}") if not row[2]] == ["customers"]


def test_a_renamed_model_takes_its_events_along(project):
    """former_names: the history table and its events table are renamed together, and a late
    event after the rename finds the events applied before it (a no-op one among them)."""
    events_model(project, name="old_hist")
    load(project, BATCH_1, "r1")
    (project.path / "models" / "old_hist.sql").unlink()
    events_model(project, CONFIG + ", meta={'former_names': ['old_hist']}", name="new_hist")
    load(project, BATCH_2, "r2")
    tables = sorted(row[1] for row in project.sql(f"show tables in {project.schema}") if not row[2])
    assert tables == ["events", "new_hist", "new_hist__historize_events"]
    assert project.table("new_hist", SHOWN, ORDER) == AFTER_2


def test_versions_gone_from_the_source_log_are_refused(project):
    """Delta's log cleanup removes a table's commit files older than its
    delta.logRetentionDuration once a later checkpoint holds the table: the test removes
    those of versions 0 to 2 as it would (a checkpoint at version 3 stays), so that version
    2, which the model reads next, is gone from the log, and the load says so."""
    customers = f"{project.schema}.customers"
    project.sql(f"create table {customers} (id int, name string) using delta tblproperties ("
                "'delta.enableChangeDataFeed' = 'true', 'delta.checkpointInterval' = '3')")
    project.sql(f"insert into {customers} values (1, 'a')")  # version 1
    feed_model(project)
    project.run("run", variables={"load_run_id": "r1"})  # consumed version 1
    for name in ("a2", "a3", "a4"):
        project.sql(f"update {customers} set name = '{name}' where id = 1")  # versions 2 to 4, a checkpoint at 3
    log = schema_folder(project) / "customers" / "_delta_log"
    for path in log.iterdir():
        if path.name[:20].isdigit() and int(path.name[:20]) < 3 and path.suffix in (".json", ".crc"):
            path.unlink()
    dbt.spark().sql(f"refresh table {customers}")
    assert min(row["version"] for row in project.history("customers")) == 3
    with project.unchanged("hist", "hist__historize_events"):
        error = project.fail("run", variables={"load_run_id": "r2"})
    assert (f"historize: model hist: change_feed({customers}): versions 2 to 4 of {customers} are not all readable "
            "any more (its log starts at version 3), so the changes since version 1, which this model consumed last, "
            "are lost; load the table once as a snapshot: --vars '{change_feed_snapshot: true}'") in error
