"""Property: fivetran_history builds, batch after batch, exactly the table the
sequential Python model of the rules builds (tests/reference.py).

Every run checks PROPERTY_SEQUENCES random sequences (200 by default) at once, each
as its own group of keys in one table; more on demand:
HISTORIZE_PROPERTY_SEQUENCES=10000 ./scripts/test.sh -k properties"""
from __future__ import annotations

import datetime as dt
import random

from historize_tools.dbt_runner import EventRecorder

from properties import check_sequences, differing_groups, grouped_key, padded
from reference import UNMODIFIED, FivetranModel

# A sequence is a list of batches, each a list of events (key, op, start in hours, a, b, c),
# keys 1..3, at most one event per key and start in a batch, at most one per key in the
# second (so that its load, one batch of every sequence, is applied without the walk);
# the column c is new in the third batch (its value in an earlier batch's event is not loaded).
OPS = ["upsert", "update", "delete"]
A_VALUES = ["a", "b", None, "", "a|b", UNMODIFIED]
B_VALUES = ["x", None, "'", UNMODIFIED]
DAY = dt.datetime(2026, 1, 1)
BATCH = "id int, _fivetran_op string, _fivetran_start timestamp, a string, b string, _fivetran_synced timestamp"
ADDED = ", c string"
ADDED_AT = 2
CONFIG = "materialized='fivetran_history', unique_key='id', unmodified_string='unmod'"
RERUN_AT = 1  # this batch is also rerun: it must change nothing
ONE_EVENT_AT = 1  # this batch holds one event per key at most
TABLES = ("ft_hist",)
EXAMPLES = [
    [[(1, "upsert", 1, "a", "x", None), (1, "delete", 3, None, None, None)], [],
     [(1, "update", 2, "b", UNMODIFIED, None), (1, "upsert", 5, None, None, None)]],
    # updates of a key with no version, all ignored
    [[(1, "upsert", 0, "a", "x", None)], [],
     [(2, "update", 0, "a", None, None), (2, "update", 7, None, None, None), (1, "update", 3, UNMODIFIED, None, None)]],
    # the new column: an update before the last version leaves it unmodified (NULL), one after sets it
    [[(1, "upsert", 4, "a", "x", None)], [], [(1, "update", 2, "b", UNMODIFIED, UNMODIFIED), (1, "update", 6, UNMODIFIED, "y", "c")]],
    # one event per key: an update at the key's first start (no version before it: ignored, and
    # the versions from it on replaced), a delete before the version began (nothing), an update
    # filling its cells from an ended version
    [[(1, "upsert", 1, "a", "x", None), (1, "upsert", 4, "b", "y", None), (2, "upsert", 3, "a", None, None),
      (3, "upsert", 0, "a", "x", None), (3, "delete", 2, None, None, None)],
     [(1, "update", 1, UNMODIFIED, "z", None), (2, "delete", 1, None, None, None), (3, "update", 5, UNMODIFIED, "w", None)]],
]


def generate(rng: random.Random) -> list[list[tuple]]:
    """1 to 3 batches of up to 6 events (of up to 3 in the second), starts in the first 8
    hours (so a later batch often goes back before an earlier one's events)."""
    batches = []
    for number in range(rng.randint(1, 3)):
        events, starts = [], set()
        for _ in range(rng.randint(0, 6)):
            key, start = rng.randint(1, 3), rng.randint(0, 8)
            if (key, start) not in starts and not (number == ONE_EVENT_AT and key in {k for k, _ in starts}):
                starts.add((key, start))
                events.append((key, rng.choice(OPS), start, rng.choice(A_VALUES), rng.choice(B_VALUES),
                               rng.choice(A_VALUES)))
        batches.append(events)
    return batches


def reductions(sequence: list[list[tuple]]):
    """Each one-step smaller sequence: a batch fewer, an event fewer."""
    for number in range(len(sequence)):
        yield sequence[:number] + sequence[number + 1:]
    for number, batch in enumerate(sequence):
        for event in range(len(batch)):
            yield [*sequence[:number], batch[:event] + batch[event + 1:], *sequence[number + 1:]]


def test_table_matches_the_model_of_the_rules(project):
    check_sequences(generate, EXAMPLES, lambda sequences: load_all(project, sequences), reductions)


def load_all(project, sequences: list[list[list[tuple]]]) -> set[int]:
    """Loads sequence g as group g of one table; returns the groups that differ from the
    model. A rerun of a batch and refused batches change nothing."""
    project.sql(f"drop table if exists {project.schema}.ft_hist")
    project.model("ft_hist", f"{{{{ config({CONFIG}) }}}} select * from {{{{ target.schema }}}}.batch")
    model = FivetranModel()
    loads = list(zip(*padded(sequences, lambda s: [])))
    for number, load in enumerate(loads):
        synced = DAY + dt.timedelta(days=30 + number)
        columns = data_columns(number)
        rows = [event_row(grouped_key(g, key), op, hours, values, synced, len(columns))
                for g, batch in enumerate(load) for key, op, hours, *values in batch]
        project.create_source("batch", BATCH + (ADDED if number >= ADDED_AT else ""), rows)
        statements = EventRecorder()
        project.run("run", callbacks=[statements])
        if number == ONE_EVENT_AT and all(len({event[0] for event in batch}) == len(batch) for batch in load):
            merge = next(sql for _, sql in statements.statements if "merge into" in sql)
            assert "by_key as (" in merge and "walked as (" not in merge, "the load of one event per key walked its events"
        model.apply([((row[0],), row[1], row[2], dict(zip(columns, (*row[3:5], *row[6:]))), synced) for row in rows])
        if number == RERUN_AT:
            with project.unchanged(*TABLES):
                project.run("run")
    refuse_bad_events(project, rows, synced, len(loads) - 1)
    columns = data_columns(len(loads) - 1)
    actual = project.table("ft_hist", f"id, {', '.join(columns)}, _fivetran_start, _fivetran_end, _fivetran_active, "
                                      "_fivetran_synced")
    return differing_groups(actual, model.rows(columns))


def data_columns(number: int) -> list[str]:
    """The data columns of batch `number`'s events (and of the table after it)."""
    return ["a", "b", "c"] if number >= ADDED_AT else ["a", "b"]


def event_row(key, op: str, hours: int, values, synced: dt.datetime, width: int) -> tuple:
    """An event as the batch's row, with the first `width` of its data values."""
    values = tuple(values)[:width]
    # an upsert gives every column: no unmodified markers in it
    if op == "upsert":
        values = tuple("z" if value == UNMODIFIED else value for value in values)
    return (key, op, DAY + dt.timedelta(hours=hours), *values[:2], synced, *values[2:])


def refuse_bad_events(project, rows: list[tuple], synced: dt.datetime, number: int) -> None:
    """Batch `number` again with a key and start twice, then with a NULL key: refused,
    nothing written."""
    key = grouped_key(0, 9)  # a key no sequence has
    width = len(data_columns(number))
    for extra, error in (
        ([event_row(key, "upsert", 1, ("a", "x", "c"), synced, width),
          event_row(key, "update", 1, ("b", "x", "c"), synced, width)],
         f"the key and _fivetran_start (id, _fivetran_start) is duplicated for 1 key(s) in the select, "
         f"e.g. ({key}, 2026-01-01 01:00:00) x2"),
        ([event_row(None, "upsert", 1, ("a", "x", "c"), synced, width)],
         "the key and _fivetran_start (id, _fivetran_start) is NULL in 1 row(s)"),
    ):
        project.create_source("batch", BATCH + (ADDED if number >= ADDED_AT else ""), rows + extra)
        with project.unchanged(*TABLES):
            message = project.fail("run")
            assert error in message, message
