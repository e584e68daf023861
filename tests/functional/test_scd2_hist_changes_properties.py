"""Property: with input='changes', the events of any stream, cut into batches applied
in any order, give exactly the history that applying every event in sequence order
gives, as the pure-Python model of the rules builds it (tests/reference.py:
versions_from_events); the invariant tests pass after every batch.

A stream holds events of keys 1 to 4 at a few instants, so that keys share
instants and one key has several events at one (its ties broken by `tie`, the
second entry of sequence_by): upserts with NULL attributes, values that come back,
deletes (of absent keys too), and the same event twice. Every run checks
PROPERTY_SEQUENCES random streams (200 by default) at once, each as its own group
of keys in one table per order: the batches in order and in a random order. More on demand:
HISTORIZE_PROPERTY_SEQUENCES=10000 ./scripts/test.sh -k properties"""
from __future__ import annotations

import datetime as dt
import random

from historize_tools import dbt_runner as dbt

from properties import PROPERTY_SEED, check_sequences, differing_groups, grouped_key
from reference import hash_key, versions_from_events

TEXT = [None, "", "x", "y"]
NUMBERS = [None, 0, 1]
INSTANTS = [dt.datetime(2026, 3, 1, 6) + dt.timedelta(hours=6 * n) for n in range(5)]
BATCHES = 3
ORDERS = 2
INVARIANTS = ("one_open_version", "no_overlapping_versions", "no_gaps", "open_version_unbounded")
CONFIG = ("materialized='scd2_hist', unique_key='id', input='changes', sequence_by=['changed_at', 'tie'], "
          "deleted_when='deleted'")
EXAMPLES = [
    # a late event before one that changed nothing; a delete of an absent key, then the key; a tie
    [(1, 0, 0, False, "x", 1, 0), (1, 2, 0, False, "x", 1, 0), (1, 1, 0, False, "y", 1, 1),
     (2, 1, 0, True, None, None, 0), (2, 0, 0, False, "x", None, 1),
     (3, 2, 1, False, "y", 0, 0), (3, 2, 0, True, None, None, 1)],
]


def generate(rng: random.Random) -> list[tuple]:
    """1 to 12 events (key, instant, tie, deleted, a, b, batch); an event drawn again
    at the same key, instant and tie is the same event (its batch may differ)."""
    images: dict[tuple, tuple] = {}
    stream = []
    for _ in range(rng.randint(1, 12)):
        identity = (rng.randint(1, 4), rng.randrange(len(INSTANTS)), rng.randint(0, 2))
        image = images.setdefault(identity, (rng.random() < 0.25, rng.choice(TEXT), rng.choice(NUMBERS)))
        stream.append((*identity, *image, rng.randrange(BATCHES)))
    return stream


def reductions(stream: list[tuple]):
    """One event fewer; the same stream in fewer batches."""
    for number in range(len(stream)):
        yield stream[:number] + stream[number + 1:]
    yield [(*event[:-1], 0) for event in stream]


def orders() -> list[list[int]]:
    """In order, then at random. The first table is given the streams cut by time (batch 0
    their earliest instants): each batch then comes after every event applied before it,
    the way a day's change feed does; the other is given them cut at random."""
    rng = random.Random(PROPERTY_SEED)
    found = [list(range(BATCHES))]
    while len(found) < ORDERS:
        found.append(rng.sample(range(BATCHES), BATCHES))
    return found


def test_batches_in_any_order_give_the_history_of_all_events_in_sequence_order(project):
    check_sequences(generate, EXAMPLES, lambda streams: load_all(project, streams), reductions)


def load_all(project, streams: list[list[tuple]]) -> set[int]:
    """Loads stream g as group g, its batches in each order into a table of its own;
    returns the groups that differ from the model of the rules."""
    rows = [(batch, at * BATCHES // len(INSTANTS), grouped_key(g, key), INSTANTS[at], tie, deleted, a, b)
            for g, stream in enumerate(streams) for key, at, tie, deleted, a, b, batch in stream]
    project.create_source("events", "batch int, time_batch int, id int, changed_at timestamp, tie int, deleted boolean, "
                          "a string, b int", rows)
    tests = "".join(f"\n      - historize.{test}" for test in INVARIANTS)
    models = []
    for number in range(ORDERS):
        name = f"hist_{number}"
        for table in (name, f"{name}__historize_events"):
            project.sql(f"drop table if exists {project.schema}.{table}")
        cut = "time_batch" if number == 0 else "batch"
        project.model(name, f"{{{{ config({CONFIG}) }}}} select id, changed_at, tie, deleted, a, b "
                            f"from {{{{ target.schema }}}}.events where {cut} = {{{{ var('batch', -1) }}}}")
        models.append(f"  - name: {name}\n    data_tests:{tests}")
    project.write("models/hist.yml", "version: 2\nmodels:\n" + "\n".join(models) + "\n")

    events = [((key,), at, tie, deleted, {"a": a, "b": b}) for _, _, key, at, tie, deleted, a, b in rows]
    expected = [(v.key[0], hash_key([v.key[0], v.started_at]), v.attributes["a"], v.attributes["b"], v.started_at,
                 v.ended_at, v.state) for v in versions_from_events(events)]
    differing = set()
    for table, order in enumerate(orders()):
        recorder = dbt.EventRecorder()
        for batch in order:
            project.run("build", "-s", f"hist_{table}", variables={"batch": batch, "load_run_id": f"b{batch}"},
                        callbacks=[recorder])
        if table == 0:
            # in order, every batch after the first continues the open versions (one MERGE each)
            continued = [sql for _, sql in recorder.statements if "merge into" in sql and "as open_versions" in sql]
            assert len(continued) == max(len({row[1] for row in rows}) - 1, 0), len(continued)
        actual = project.table(f"hist_{table}", f"id, hist_{table}_key, a, b, version_started_at, version_ended_at, "
                                                "version_state")
        differing |= differing_groups(actual, expected)
    return differing
