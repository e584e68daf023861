"""Property: a bitemporal scd2_hist table, from events or from snapshots, loaded batch
after batch, holds after every load exactly the beliefs of the pure-Python model of its
rules (tests/reference.py: beliefs_from_loads, beliefs_from_snapshots).

From events: each load's events recorded at its recorded
time, a later image of a key and sequence replacing the earlier one (a correction), the
belief the events path's rules give from every event recorded so far, a version believed
over consecutive loads one row. The invariant tests and consistent_beliefs pass after
every load, and as_of at random pairs of business and recorded time equals the model's
belief at that recorded time, evaluated at that business time.

A stream holds events of keys 1 to 4 at a few instants, cut into three loads at random:
upserts with NULL attributes, values that come back, deletes, events replayed and events
corrected in a later load (another image, a delete where an upsert was, or the reverse).
From snapshots: each load's snapshot recorded at its recorded time, a later snapshot of a
load_timestamp replacing the earlier one (a restatement), the belief the snapshot rules
give from the snapshots recorded so far in load_timestamp order. A history is a snapshot
of keys 1 to 4 for each load of SCHEDULES (NULL attributes, keys absent and back, values
that come back, a snapshot repeated); each schedule's load_timestamps come in time order,
late, and again (restatements of the newest, of one between, of the first), one table
each.

Every run checks PROPERTY_SEQUENCES random streams and histories (200 by default) at once,
each as its own group of keys. More on demand: HISTORIZE_PROPERTY_SEQUENCES=10000
./scripts/test.sh -k properties"""
from __future__ import annotations

import datetime as dt
import random

from properties import PROPERTY_SEED, check_sequences, differing_groups, grouped_key
from reference import believed_at, beliefs_from_loads, beliefs_from_snapshots

from historize_tools import dbt_runner as dbt

TEXT = [None, "", "x", "y"]
NUMBERS = [None, 0, 1]
INSTANTS = [dt.datetime(2026, 3, 1, 6) + dt.timedelta(hours=6 * n) for n in range(5)]
LOADS = 3
RECORDED = [dt.datetime(2026, 4, 1 + n, 9) for n in range(LOADS)]
TESTS = ("one_open_version", "no_overlapping_versions", "no_gaps", "open_version_unbounded", "consistent_beliefs")
CONFIG = ("materialized='scd2_hist', unique_key='id', meta={'bitemporal': true, 'input': 'changes', "
          "'sequence_by': ['changed_at', 'tie'], 'deleted_when': 'deleted'}")
PAIRS = 8  # as_of's (business time, recorded time) pairs
EXAMPLES = [
    # key 1 corrected at load 1 and back at load 2; key 2 upserted, then corrected to a delete;
    # key 3 late at load 2, before its event of load 0
    [(1, 1, 0, False, "x", 1, 0), (1, 1, 0, False, "y", 1, 1), (1, 1, 0, False, "x", 1, 2),
     (2, 0, 0, False, "x", None, 0), (2, 0, 0, True, None, None, 1),
     (3, 3, 0, False, "y", 0, 0), (3, 1, 0, False, None, 0, 2)],
]


def generate(rng: random.Random) -> list[tuple]:
    """1 to 12 events (key, instant, tie, deleted, a, b, load). An event of a key, instant and
    tie already drawn in the same load repeats its image (one load cannot hold two); in
    another load it repeats one of its images half the time, and is a correction otherwise."""
    images: dict[tuple, list] = {}
    stream = []
    for _ in range(rng.randint(1, 12)):
        identity = (rng.randint(1, 4), rng.randrange(len(INSTANTS)), rng.randint(0, 2))
        load = rng.randrange(LOADS)
        same_load = [event[3:6] for event in stream if event[:3] == identity and event[6] == load]
        if same_load:
            image = same_load[0]
        elif images.get(identity) and rng.random() < 0.5:
            image = rng.choice(images[identity])
        else:
            image = (rng.random() < 0.25, rng.choice(TEXT), rng.choice(NUMBERS))
        images.setdefault(identity, []).append(image)
        stream.append((*identity, *image, load))
    return stream


def reductions(stream: list[tuple]):
    """One event fewer; the same stream in fewer loads (where that leaves no load two images
    of one key, instant and tie)."""
    for number in range(len(stream)):
        yield stream[:number] + stream[number + 1:]
    one_load = [(*event[:-1], 0) for event in stream]
    if len({event[:3] for event in one_load}) == len({event[:6] for event in one_load}):
        yield one_load


def pairs(loads_recorded: list[dt.datetime] = RECORDED) -> list[tuple[dt.datetime, dt.datetime]]:
    """(business time, recorded time) pairs: instants and the times between them, recorded
    times before, at and between the loads."""
    rng = random.Random(PROPERTY_SEED)
    business = INSTANTS + [at + dt.timedelta(hours=3) for at in INSTANTS]
    recorded = ([loads_recorded[0] - dt.timedelta(hours=1)] + loads_recorded
                + [at + dt.timedelta(hours=1) for at in loads_recorded])
    return [(rng.choice(business), rng.choice(recorded)) for _ in range(PAIRS)]


def test_loads_with_corrections_keep_the_beliefs_of_the_model(project):
    check_sequences(generate, EXAMPLES, lambda streams: load_all(project, streams), reductions)


def literal(value: dt.datetime) -> str:
    return f"timestamp'{value:%Y-%m-%d %H:%M:%S}+00:00'"


def load_all(project, streams: list[list[tuple]]) -> set[int]:
    """Loads stream g as group g, its loads in order; returns the groups whose table, after
    any load, or whose as_of answers, after the last, differ from the model's.

    A second table, hist_in_order, is given every stream's events as last recorded (the
    image of each key, instant and tie from its latest load) cut by time: its load n holds
    the events of the n-th third of the instants, so each load after the first comes after
    every event recorded, and continues the open versions of the current belief (counted)."""
    last_load = {}
    for g, stream in enumerate(streams):
        for key, at, tie, deleted, a, b, load in stream:
            last_load[(g, key, at, tie)] = max(load, last_load.get((g, key, at, tie), load))
    rows = [(load, at * LOADS // len(INSTANTS), load == last_load[(g, key, at, tie)], grouped_key(g, key),
             INSTANTS[at], tie, deleted, a, b)
            for g, stream in enumerate(streams) for key, at, tie, deleted, a, b, load in stream]
    project.create_source("events", "load int, time_load int, last_recorded boolean, id int, changed_at timestamp, "
                          "tie int, deleted boolean, a string, b int", rows)
    cuts = {"hist": "load = {{ var('load', -1) }}",
            "hist_in_order": "last_recorded and time_load = {{ var('load', -1) }}"}
    tests = "".join(f"\n      - historize.{test}" for test in TESTS)
    for name, cut in cuts.items():
        for table in (name, f"{name}__historize_events"):
            project.sql(f"drop table if exists {project.schema}.{table}")
        project.model(name, f"{{{{ config({CONFIG}) }}}} select id, changed_at, tie, deleted, a, b "
                            f"from {{{{ target.schema }}}}.events where {cut}")
    project.write("models/hist.yml", "version: 2\nmodels:\n" + "".join(
        f"  - name: {name}\n    data_tests:{tests}\n" for name in cuts))

    def events_of(cut) -> list[list[tuple]]:
        return [[((key,), at, tie, deleted, {"a": a, "b": b}) for load, time_load, last, key, at, tie, deleted, a, b
                 in rows if cut(load, time_load, last) == number] for number in range(LOADS)]

    loads = {"hist": events_of(lambda load, time_load, last: load),
             "hist_in_order": events_of(lambda load, time_load, last: time_load if last else -1)}
    differing = set()
    recorder = dbt.EventRecorder()
    for number in range(LOADS):
        project.run("build", "-s", *cuts, variables={
            "load": number, "load_run_id": f"l{number}", "recorded_at": f"{RECORDED[number]:%Y-%m-%d %H:%M:%S}"},
            callbacks=[recorder])
        for name in cuts:
            expected = [(row.key[0], dict(row.attributes)["a"], dict(row.attributes)["b"], row.started_at,
                         row.ended_at, row.state, row.recorded_at, row.superseded_at)
                        for row in beliefs_from_loads(loads[name][:number + 1], RECORDED[:number + 1])]
            actual = project.table(name, "id, a, b, version_started_at, version_ended_at, version_state, recorded_at, "
                                         "superseded_at")
            differing |= differing_groups(actual, expected)
    # hist_in_order's loads after the first with events each continue the open versions (one
    # MERGE each); hist's loads, with corrections and late events, rebuild
    continued = [node.split(".")[-1] for node, sql in recorder.statements
                 if "merge into" in sql and "as open_versions" in sql]
    assert continued == ["hist_in_order"] * len([events for events in loads["hist_in_order"][1:] if events]), continued

    asked = pairs()
    project.model("answers", "{{ config(materialized='table') }}\n" + "\nunion all\n".join(
        f"select id, {number} as pair, a, b from ({{{{ historize.as_of(ref('hist'), \"{literal(at)}\", "
        f"known_at=\"{literal(known_at)}\") }}}}) as v{number}" for number, (at, known_at) in enumerate(asked)))
    project.run("run", "-s", "answers")
    everything = beliefs_from_loads(loads["hist"], RECORDED)
    expected = [(row.key[0], number, dict(row.attributes)["a"], dict(row.attributes)["b"])
                for number, (at, known_at) in enumerate(asked) for row in believed_at(everything, known_at, at)]
    return differing | differing_groups(project.table("answers", "id, pair, a, b"), expected)


# Snapshots: the load_timestamps (indexes of INSTANTS) of each table's loads, one a load.
SCHEDULES = [
    [1, 3, 0, 3, 2, 4],  # in order, in order, late before all, the newest again, late between, in order
    [0, 1, 2, 1, 0, 2],  # in order twice, one between again, the first again, the newest again
]
SNAPSHOT_RECORDED = [dt.datetime(2026, 4, 1 + n, 9) for n in range(len(SCHEDULES[0]))]
SNAPSHOT_CONFIG = "materialized='scd2_hist', unique_key='id', meta={'bitemporal': true}"
SNAPSHOT_EXAMPLES = [
    # key 1 changed at the second load, restated back at the fourth; key 2 only in the late load;
    # key 3 absent from a restatement
    [{1: ("x", 1), 3: ("y", 0)}, {1: ("y", 1), 3: ("y", 0)}, {1: ("x", 1), 2: ("x", None), 3: ("y", 0)},
     {1: ("x", 1)}, {1: ("x", 1), 3: ("y", 0)}, {}],
]


def generate_snapshots(rng: random.Random) -> list[dict]:
    """A snapshot {key: (a, b)} of keys 1 to 4 for each load of a schedule: a key is absent
    from a fifth of them and keeps its values in about half of the others; a quarter of the
    snapshots after the first repeat an earlier one whole."""
    snapshots: list[dict] = []
    for _ in SCHEDULES[0]:
        if snapshots and rng.random() < 0.25:
            snapshots.append(dict(rng.choice(snapshots)))
            continue
        snapshot = {}
        for key in range(1, 5):
            if rng.random() < 0.2:
                continue
            before = snapshots[-1].get(key) if snapshots else None
            snapshot[key] = before if before and rng.random() < 0.5 else (rng.choice(TEXT), rng.choice(NUMBERS))
        snapshots.append(snapshot)
    return snapshots


def snapshot_reductions(history: list[dict]):
    """A key fewer in every snapshot; a key fewer in one snapshot."""
    for key in sorted({k for snapshot in history for k in snapshot}):
        yield [{k: v for k, v in snapshot.items() if k != key} for snapshot in history]
    for number, snapshot in enumerate(history):
        for key in sorted(snapshot):
            yield history[:number] + [{k: v for k, v in snapshot.items() if k != key}] + history[number + 1:]


def test_restated_and_late_snapshots_keep_the_beliefs_of_the_model(project):
    check_sequences(generate_snapshots, SNAPSHOT_EXAMPLES, lambda histories: load_snapshots(project, histories),
                    snapshot_reductions)


def load_snapshots(project, histories: list[list[dict]]) -> set[int]:
    """Loads history g as group g into one table per schedule, load after load; returns the
    groups whose table, after any load, or whose as_of answers, after the last, differ from
    the model's."""
    rows = [(number, grouped_key(g, key), a, b)
            for g, history in enumerate(histories) for number, snapshot in enumerate(history)
            for key, (a, b) in snapshot.items()]
    project.create_source("snapshots", "load int, id int, a string, b int", rows)
    tests = "".join(f"\n      - historize.{test}" for test in TESTS)
    models = []
    for table in range(len(SCHEDULES)):
        project.sql(f"drop table if exists {project.schema}.hist_{table}")
        project.model(f"hist_{table}", f"{{{{ config({SNAPSHOT_CONFIG}) }}}} select id, a, b "
                                       "from {{ target.schema }}.snapshots where load = {{ var('load', -1) }}")
        models.append(f"  - name: hist_{table}\n    data_tests:{tests}")
    project.sql(f"drop table if exists {project.schema}.historize_loads")
    project.write("models/hist.yml", "version: 2\nmodels:\n" + "\n".join(models) + "\n")

    differing = set()
    asked = pairs(SNAPSHOT_RECORDED)
    for table, schedule in enumerate(SCHEDULES):
        loads = [(INSTANTS[at], {(grouped_key(g, key),): {"a": a, "b": b} for g, history in enumerate(histories)
                                 for key, (a, b) in history[number].items()})
                 for number, at in enumerate(schedule)]
        for number, at in enumerate(schedule):
            project.run("build", "-s", f"hist_{table}", variables={
                "load": number, "load_run_id": f"l{number}", "load_timestamp": f"{INSTANTS[at]:%Y-%m-%d %H:%M:%S}",
                "recorded_at": f"{SNAPSHOT_RECORDED[number]:%Y-%m-%d %H:%M:%S}"})
            expected = [(row.key[0], dict(row.attributes)["a"], dict(row.attributes)["b"], row.started_at,
                         row.ended_at, row.state, row.recorded_at, row.superseded_at)
                        for row in beliefs_from_snapshots(loads[:number + 1], SNAPSHOT_RECORDED[:number + 1])]
            actual = project.table(f"hist_{table}", "id, a, b, version_started_at, version_ended_at, version_state, "
                                                    "recorded_at, superseded_at")
            differing |= differing_groups(actual, expected)

        project.model(f"answers_{table}", "{{ config(materialized='table') }}\n" + "\nunion all\n".join(
            f"select id, {number} as pair, a, b from ({{{{ historize.as_of(ref('hist_{table}'), \"{literal(at)}\", "
            f"known_at=\"{literal(known_at)}\") }}}}) as v{number}"
            for number, (at, known_at) in enumerate(asked)))
        project.run("run", "-s", f"answers_{table}")
        everything = beliefs_from_snapshots(loads, SNAPSHOT_RECORDED)
        expected = [(row.key[0], number, dict(row.attributes)["a"], dict(row.attributes)["b"])
                    for number, (at, known_at) in enumerate(asked)
                    for row in believed_at(everything, known_at, at)]
        differing |= differing_groups(project.table(f"answers_{table}", "id, pair, a, b"), expected)
    return differing
