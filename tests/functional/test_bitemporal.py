"""Bitemporal scd2_hist (meta bitemporal: true) from change events: each rule of
docs/bitemporal.md against tables computed by hand. A load's recorded time is the
var recorded_at (R1, R2, ...); business time comes from sequence_by (T1, T2, ...)."""
from __future__ import annotations

import datetime as dt

import pytest

from probes import StatementProbe, WriteBeforeMerge, kill_after_each_write, schema_folder, tables_and_versions
from projects import load_reports, report

from historize_tools import dbt_runner as dbt

EVENTS = "id int, name string, changed_at timestamp, seq int, op string"
CONFIG = ("materialized='scd2_hist', unique_key='id', meta={'bitemporal': true, 'input': 'changes', "
          "'sequence_by': ['changed_at', 'seq'], 'deleted_when': \"op = 'D'\"}")
SHOWN = "id, name, version_started_at, version_ended_at, version_state, recorded_at, superseded_at"
ORDER = "id, recorded_at, version_started_at"
T = {n: dt.datetime(2026, 1, n, 6) for n in range(1, 8)}
R = {n: dt.datetime(2026, 2, n, 12) for n in range(1, 8)}
DETAIL = "versions recorded (new) and superseded (changed), from events"


def events_model(project, config=CONFIG, name="hist"):
    project.model(name, f"""
        {{{{ config({config}) }}}}
        select * from {{{{ target.schema }}}}.events
        """)


def at_var(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S")


def load(project, rows, run_id, recorded, expect_success=True, callbacks=()):
    project.create_source("events", EVENTS, rows)
    return project.run("run", variables={"load_run_id": run_id, "recorded_at": at_var(recorded)},
                       expect_success=expect_success, callbacks=callbacks)


LOAD_1 = [(1, "a", T[1], 0, "U"), (1, "b", T[3], 0, "U"), (2, "x", T[1], 0, "U")]
BELIEF_1 = [
    (1, "a", T[1], T[3], "changed", R[1], None),
    (1, "b", T[3], None, "changed", R[1], None),
    (2, "x", T[1], None, "new", R[1], None),
]
LOAD_2 = [
    (1, "c", T[3], 0, "U"),  # a correction: key 1 at T3 was b
    (2, "y", T[2], 0, "U"),  # a late event: closes x at T2
    (3, "p", T[2], 0, "U"),  # a new key
]
AFTER_2 = [
    (1, "a", T[1], T[3], "changed", R[1], None),  # still believed: never rewritten
    (1, "b", T[3], None, "changed", R[1], R[2]),
    (1, "c", T[3], None, "changed", R[2], None),
    (2, "x", T[1], None, "new", R[1], R[2]),  # believed open until R2
    (2, "x", T[1], T[2], "changed", R[2], None),  # then closed by the late event
    (2, "y", T[2], None, "changed", R[2], None),
    (3, "p", T[2], None, "new", R[2], None),
]
LOAD_4 = [
    (1, "b", T[3], 0, "U"),  # corrected back: b again
    (3, None, T[2], 0, "D"),  # a delete where an upsert was: key 3 had no version
]
AFTER_4 = [
    (1, "a", T[1], T[3], "changed", R[1], None),
    (1, "b", T[3], None, "changed", R[1], R[2]),
    (1, "c", T[3], None, "changed", R[2], R[4]),
    (1, "b", T[3], None, "changed", R[4], None),
    (2, "x", T[1], None, "new", R[1], R[2]),
    (2, "x", T[1], T[2], "changed", R[2], None),
    (2, "y", T[2], None, "changed", R[2], None),
    (3, "p", T[2], None, "new", R[2], R[4]),
]


def test_corrections_and_late_events_keep_every_belief(project):
    events_model(project)
    result = load(project, LOAD_1, "r1", R[1])
    assert project.table("hist", SHOWN, ORDER) == BELIEF_1
    assert load_reports(result)["hist"] == report(3, 0, 0, DETAIL)
    assert [c[0] for c in project.columns("hist")] == [
        "hist_key", "id", "name", "row_hash", "version_started_at", "version_ended_at", "version_state",
        "load_run_id", "loaded_at", "recorded_at", "superseded_at"]
    # the current belief apart from the rows no longer believed, then open versions apart
    properties = dict(project.sql(f"show tblproperties {project.schema}.hist"))
    assert (properties["historize.bitemporal"], properties["historize.partitioned_by"]) == (
        "true", "superseded_at,version_ended_at")

    commits = project.commits("hist")
    result = load(project, LOAD_2, "r2", R[2])
    assert project.table("hist", SHOWN, ORDER) == AFTER_2
    assert load_reports(result)["hist"] == report(4, 2, 0, DETAIL)
    assert project.commits("hist") == commits + 1  # one commit on the history table
    # the row it did not supersede is the one load 1 wrote (the same file, never rewritten)
    assert project.sql(f"select load_run_id from {project.schema}.hist where name = 'a'") == [("r1",)]

    # the same events recorded again, by another run: nothing changes
    commits = project.commits("hist"), project.commits("hist__historize_events")
    result = load(project, LOAD_2, "r3", R[3])
    assert project.table("hist", SHOWN, ORDER) == AFTER_2
    assert (project.commits("hist"), project.commits("hist__historize_events")) == commits
    assert load_reports(result)["hist"] == report(0, 0, 0, DETAIL)

    result = load(project, LOAD_4, "r4", R[4])
    assert project.table("hist", SHOWN, ORDER) == AFTER_4
    assert load_reports(result)["hist"] == report(1, 2, 0, DETAIL)
    # every event is kept with when it was recorded
    assert project.table("hist__historize_events", "id, get_json_object(_historize_image, '$.name'), recorded_at",
                         "recorded_at, id, changed_at") == [
        (1, "a", R[1]), (1, "b", R[1]), (2, "x", R[1]),
        (1, "c", R[2]), (2, "y", R[2]), (3, "p", R[2]),
        (1, "b", R[4]), (3, None, R[4])]
    # a version key is its key, where it begins and when it was recorded: one per row
    assert project.sql(f"select count(*), count(distinct hist_key) from {project.schema}.hist") == [(8, 8)]


def test_as_of_answers_what_was_believed_and_recorded_since_what_changed(project):
    events_model(project)
    for rows, run_id, recorded in ((LOAD_1, "r1", R[1]), (LOAD_2, "r2", R[2]), (LOAD_4, "r4", R[4])):
        load(project, rows, run_id, recorded)

    def lit(value: dt.datetime) -> str:
        return f"timestamp'{value:%Y-%m-%d %H:%M:%S}+00:00'"

    asked = {  # model: (at, known_at)
        "now_r1": (T[4], R[1] + dt.timedelta(hours=1)),
        "now_r3": (T[4], R[3]),
        "now_current": (T[4], None),
        "t2_r1": (T[2], R[1]),
        "t2_current": (T[2], None),
        "before_any": (T[4], R[1] - dt.timedelta(seconds=1)),
    }
    for name, (at, known_at) in asked.items():
        known = f", known_at=\"{lit(known_at)}\"" if known_at else ""
        project.model(name, f"{{{{ config(materialized='table') }}}}\n"
                            f"select id, name from ({{{{ historize.as_of(ref('hist'), \"{lit(at)}\"{known}) }}}}) as v")
    project.model("since_r3", "{{ config(materialized='table') }}\n"
                              f"select id, name, change_kind, change_at, recorded_at, superseded_at from "
                              f"({{{{ historize.recorded_since(ref('hist'), \"{lit(R[3])}\") }}}}) as r")
    project.model("now", "{{ config(materialized='table') }}\nselect * from ({{ historize.current(ref('hist')) }}) as c")
    project.run("run", "-s", "now_r1", "now_r3", "now_current", "t2_r1", "t2_current", "before_any", "since_r3",
                "now")
    assert project.table("now_r1", "id, name", "id") == [(1, "b"), (2, "x")]
    assert project.table("now_r3", "id, name", "id") == [(1, "c"), (2, "y"), (3, "p")]
    assert project.table("now_current", "id, name", "id") == [(1, "b"), (2, "y")]
    assert project.table("t2_r1", "id, name", "id") == [(1, "a"), (2, "x")]
    assert project.table("t2_current", "id, name", "id") == [(1, "a"), (2, "y")]
    assert project.table("before_any", "id, name", "id") == []
    assert project.table("since_r3", "*", "change_kind, id, recorded_at") == [
        (1, "b", "recorded", R[4], R[4], None),
        (1, "c", "superseded", R[4], R[2], R[4]),
        (3, "p", "superseded", R[4], R[2], R[4]),
    ]
    # the current table: key and attributes of the current belief's open versions
    assert project.table("now", "*", "id") == [(1, "b"), (2, "y")]


# A batch in order: every event after those applied (key 1 changed at T5, key 2 deleted there).
LOAD_IN_ORDER = [(1, "d", T[5], 0, "U"), (2, None, T[5], 0, "D")]
AFTER_IN_ORDER = [
    (1, "a", T[1], T[3], "changed", R[1], None),
    (1, "b", T[3], None, "changed", R[1], R[2]),
    (1, "b", T[3], T[5], "changed", R[2], None),
    (1, "d", T[5], None, "changed", R[2], None),
    (2, "x", T[1], None, "new", R[1], R[2]),
    (2, "x", T[1], T[5], "deleted", R[2], None),
]


@pytest.mark.parametrize("batch, expected, events", [(LOAD_2, AFTER_2, 6), (LOAD_IN_ORDER, AFTER_IN_ORDER, 5)],
                         ids=["late_and_correcting", "in_order"])
def test_a_bitemporal_load_killed_after_any_statement_ends_correct_when_rerun(project, batch, expected, events):
    """As the events path's kill test: a load after load 1 (a correction and a late event, or
    a batch in order) runs once uninterrupted, then from the same start it is killed after its
    first write, its rerun after its own first write, and so on; after each kill the current
    belief has no key open twice, and the end equals the uninterrupted load's."""
    events_model(project)
    load(project, LOAD_1, "r1", R[1])
    schema_dir = schema_folder(project)
    start = dict(tables_and_versions(schema_dir))
    probe = lambda: tables_and_versions(schema_dir)  # noqa: E731
    reference = StatementProbe("hist", probe).started()
    recorder = dbt.EventRecorder()
    load(project, batch, "r2", R[2], callbacks=[reference, recorder])
    assert project.table("hist", SHOWN, ORDER) == expected
    # a batch in order continues the key's open versions; a late or correcting one rebuilds them
    merges = [sql for _, sql in recorder.statements if "merge into" in sql]
    assert len(merges) == 1 and ("as open_versions" in merges[0]) == (batch is LOAD_IN_ORDER), merges
    writing = reference.writes()
    assert len(writing) == 3, writing  # the events recorded, the MERGE, the events marked applied

    for table, version in start.items():
        project.sql(f"restore table {project.schema}.{table} to version as of {version}")

    def no_key_open_twice(kills):
        assert project.sql(f"select id from {project.schema}.hist where version_ended_at is null "
                           "and superseded_at is null group by id having count(*) > 1") == [], kills

    kills = kill_after_each_write("hist", probe, writing, lambda callbacks: load(
        project, batch, "r2", R[2], expect_success=False, callbacks=callbacks), no_key_open_twice)
    assert len(kills) >= len(writing)
    assert project.table("hist", SHOWN, ORDER) == expected
    assert project.table("hist__historize_events", "count(*), count_if(_historize_applied)") == [(events, events)]


def test_a_write_between_the_loads_read_and_its_merge_fails_it_and_writes_nothing(project):
    """Another writer commits to the history table after the load read its version (for
    its guard) and before its MERGE: the MERGE fails naming the table and the version read,
    the other writer's commit stands, and the history holds nothing of the load (its events
    stay pending, for its rerun)."""
    events_model(project)
    load(project, LOAD_1, "r1", R[1])
    session, table = dbt.spark(), f"{project.schema}.hist"
    read = session.sql(f"describe history {table} limit 1").collect()[0]["version"]
    other_writer = WriteBeforeMerge("hist", session, table, f"update {table} set name = 'z' where id = 2")
    result = load(project, LOAD_2, "r2", R[2], expect_success=False, callbacks=[other_writer])
    assert other_writer.committed == [read + 1]  # the other write landed between the read and the MERGE
    assert (f"historize: model hist: {table} was written by another run after version {read}, which this run "
            "read; nothing of this run was written to it. Rerun the model") in dbt.failure_messages(result)
    assert project.table("hist", SHOWN, ORDER) == [row if row[0] != 2 else (2, "z", *row[2:]) for row in BELIEF_1]
    assert session.sql(f"describe history {table} limit 1").collect()[0]["version"] == read + 1


def test_refusals_write_nothing(project):
    events_model(project)
    events_model(project, CONFIG.replace("'bitemporal': true, ", ""), name="one")
    load(project, LOAD_1, "r1", R[2])
    tables = ("hist", "hist__historize_events", "one", "one__historize_events")
    schema = project.schema
    project.create_source("events", EVENTS, LOAD_2)
    with project.unchanged(*tables):
        failures = project.failures("run", "-s", "hist", variables={"load_run_id": "r2", "recorded_at": at_var(R[1])})
        assert (f"historize: model hist: recorded_at 2026-02-01 12:00:00.000000 is older than "
                f"2026-02-02 12:00:00.000000, the newest recorded time of {schema}.hist; recorded time only moves "
                "forward. Nothing was written") in failures["hist"]
        failures = project.failures("run", "-s", "hist", variables={"load_run_id": "r3", "recorded_at": at_var(R[2])})
        assert (f"historize: model hist: recorded_at 2026-02-02 12:00:00.000000 is the newest recorded time of "
                f"{schema}.hist, recorded by run r1; another run's recorded time must be later. Nothing was "
                "written") in failures["hist"]
        # within one load, one key and sequence with two images is still refused
        project.create_source("events", EVENTS, [(1, "c", T[3], 0, "U"), (1, "d", T[3], 0, "U")])
        failures = project.failures("run", "-s", "hist", variables={"load_run_id": "r4", "recorded_at": at_var(R[4])})
        assert ("historize: model hist: 1 event(s) of the same key and sequence (id, changed_at, seq) have different "
                "images, in the select, e.g. (1, 2026-01-03 06:00:00, 0); the same event twice is one event, two "
                "events need two sequences. Nothing was written") in failures["hist"]
        # turning bitemporal on, or off, is a new model
        events_model(project, CONFIG.replace("'bitemporal': true, ", ""))
        events_model(project, CONFIG, name="one")
        project.create_source("events", EVENTS, LOAD_2)
        failures = project.failures("run", variables={"load_run_id": "r5", "recorded_at": at_var(R[5])})
        assert (f"historize: model hist: bitemporal is false, but its table {schema}.hist was built bitemporal; a "
                "table keeps the timelines it was built with (its rows are versions as believed), so switching is a "
                "new model. Nothing was written") in failures["hist"]
        assert (f"historize: model one: bitemporal is true, but its table {schema}.one was built with one "
                "timeline; a table keeps the timelines it was built with (its rows are versions as true), so "
                "switching is a new model. Nothing was written") in failures["one"]
    # the options and the readers that need two timelines
    events_model(project)
    project.model("known_one", "select * from ({{ historize.as_of(ref('one'), 'current_timestamp()', "
                               "known_at='current_timestamp()') }}) as v")
    project.model("since_one", "select * from ({{ historize.recorded_since(ref('one'), 'current_timestamp()') }}) as r")
    failures = project.failures("run", "-s", "known_one", "since_one", variables={"load_run_id": "r6"})
    assert (f"historize: as_of: known_at applies to a bitemporal table; {schema}.one keeps one timeline, what was "
            "true when, and no earlier belief") in failures["known_one"]
    assert (f"historize: recorded_since: {schema}.one is not bitemporal; it keeps no record of what it believed "
            "when (a model with meta bitemporal: true does)") in failures["since_one"]


BITEMPORAL = ("id int, name string, version_started_at timestamp, version_ended_at timestamp, version_state string, "
              "recorded_at timestamp, superseded_at timestamp")
MADE_BY_HAND = [  # the current belief is valid; the belief between R1 and R2 breaks each invariant
    (1, "a", T[1], None, "new", R[1], None),
    (2, "x", T[1], None, "new", R[1], R[2]),  # two open versions believed from R1 to R2
    (2, "y", T[2], None, "changed", R[1], R[2]),
    (2, "y", T[2], None, "new", R[2], None),
    (3, "p", T[1], None, "new", R[3], R[2]),  # superseded before it was recorded: in no belief
    (4, "m", T[1], T[2], "changed", R[1], R[2]),  # a gap from T2 to T3, believed from R1 to R2
    (4, "n", T[3], None, "changed", R[1], R[2]),
    (4, "m", T[1], T[3], "changed", R[2], None),
    (4, "n", T[3], None, "changed", R[2], None),
    (5, "q", T[1], T[2], "changed", R[1], R[2]),  # closed but not deleted, believed from R1 to R2
    (5, "q", T[1], None, "new", R[2], None),
]
INVARIANTS = ("one_open_version", "no_overlapping_versions", "no_gaps", "open_version_unbounded")


def test_the_invariant_tests_check_a_belief_and_consistent_beliefs_every_belief(project):
    project.create_table("beliefs", BITEMPORAL, MADE_BY_HAND)
    project.sql(f"alter table {project.schema}.beliefs set tblproperties ('historize.kind' = 'scd2_hist', "
                "'historize.unique_key' = 'id', 'historize.bitemporal' = 'true')")
    between = "timestamp'2026-02-01 18:00:00+00:00'"
    tests = []
    for test in INVARIANTS:
        tests.append(f"          - historize.{test}:\n              name: {test}__current")
        tests.append(f"          - historize.{test}:\n              name: {test}__between\n"
                     f"              arguments: {{known_at: \"{between}\"}}")
    tests.append("          - historize.consistent_beliefs:\n              name: consistent_beliefs")
    project.write("models/sources.yml", f"version: 2\nsources:\n  - name: h\n    schema: {project.schema}\n"
                                        "    tables:\n      - name: beliefs\n        data_tests:\n"
                  + "\n".join(tests) + "\n")
    result = project.run("test", "--store-failures", expect_success=False)
    outcome = {r.node.name: (str(r.status), r.failures) for r in result.result.results}
    assert outcome == {
        **{f"{test}__current": ("pass", 0) for test in INVARIANTS},
        "one_open_version__between": ("fail", 1),
        "no_overlapping_versions__between": ("fail", 1),
        "no_gaps__between": ("fail", 1),
        "open_version_unbounded__between": ("fail", 1),
        "consistent_beliefs": ("fail", 2),
    }
    assert project.sql(f"select id, valid_from, recorded_at, superseded_at, other_valid_from, other_recorded_at, "
                       f"violation from {project.schema}_dbt_test__audit.consistent_beliefs order by id") == [
        (2, T[1], R[1], R[2], T[2], R[1], "overlaps another row in business and recorded time"),
        (3, T[1], R[3], R[2], None, None, "superseded before it was recorded"),
    ]


PENS = "pen_id int, price decimal(6, 2), ink string, effective_at timestamp"
PEN_CONFIG = ("materialized='scd2_hist', unique_key='pen_id', "
              "meta={'bitemporal': true, 'input': 'changes', 'sequence_by': 'effective_at'}")


def test_the_pen_example_answers_mid_january_before_and_after_the_correction(project):
    """The seeds' effective-dated prices: on 1 January the price for next week and the
    one for February are set in advance; on 3 February January's price is corrected."""
    project.model("pen_prices_hist", f"{{{{ config({PEN_CONFIG}) }}}}\n"
                                     "select pen_id, price, ink, effective_at from {{ target.schema }}.stg_pen_prices")
    january, next_week, february = (dt.datetime(2026, 1, 1), dt.datetime(2026, 1, 8), dt.datetime(2026, 2, 1))
    project.create_source("stg_pen_prices", PENS, [
        (1, 2.50, "blue", january), (1, 2.75, "blue", next_week), (1, 3.00, "blue", february)])
    project.run("run", variables={"load_run_id": "set", "recorded_at": "2026-01-01 09:00:00"})
    project.create_source("stg_pen_prices", PENS, [(1, 2.70, "blue", next_week)])
    project.run("run", variables={"load_run_id": "corrected", "recorded_at": "2026-02-03 09:00:00"})
    mid_january = "timestamp'2026-01-15 00:00:00+00:00'"
    for name, known_at in (("before", "timestamp'2026-01-20 00:00:00+00:00'"), ("after", None)):
        known = f", known_at=\"{known_at}\"" if known_at else ""
        project.model(f"price_{name}", f"{{{{ config(materialized='table') }}}}\nselect pen_id, price from "
                                       f"({{{{ historize.as_of(ref('pen_prices_hist'), \"{mid_january}\"{known}) }}}}) as v")
    project.run("run", "-s", "price_before", "price_after")
    assert [(pen, float(price)) for pen, price in project.table("price_before", "*")] == [(1, 2.75)]
    assert [(pen, float(price)) for pen, price in project.table("price_after", "*")] == [(1, 2.70)]
    assert [(float(price), started, ended, recorded, superseded) for price, started, ended, recorded, superseded in
            project.table("pen_prices_hist", "price, version_started_at, version_ended_at, recorded_at, superseded_at",
                          "recorded_at, version_started_at")] == [
        (2.50, january, next_week, dt.datetime(2026, 1, 1, 9), None),
        (2.75, next_week, february, dt.datetime(2026, 1, 1, 9), dt.datetime(2026, 2, 3, 9)),
        (3.00, february, None, dt.datetime(2026, 1, 1, 9), None),
        (2.70, next_week, february, dt.datetime(2026, 2, 3, 9), None),
    ]
