"""Property: for any sequence of snapshots, both strategies build exactly the
history the pure-Python model of the rules builds (tests/reference.py).

Every run checks PROPERTY_SEQUENCES random sequences (200 by default) at once, each
as its own group of keys in one table; more on demand:
HISTORIZE_PROPERTY_SEQUENCES=10000 ./scripts/test.sh -k properties"""
from __future__ import annotations

import datetime as dt
import random

from properties import check_sequences, differing_groups, fewer_loads_and_keys, grouped_key, padded, random_snapshots
from reference import Scd2Model, hash_key

# A sequence is a list of snapshots {key: {column: value}}, keys 1..4. Values include
# NULLs, empty strings and delimiter-like text; a column `c` is added from the third load.
TEXT = [None, "", "x", "x|y", "y", "1:x", "'", "`", "a,b"]
NUMBERS = [None, 0, 1]
ADDED_AT = 2
BASE = dt.datetime(2026, 1, 1, 6, 0, 0, 123456)
STRATEGIES = ("merge", "ordered")
TABLES = tuple(f"hist_{s}" for s in STRATEGIES)
RERUN_AT = 1  # this load is also rerun: it must change nothing
EXAMPLES = [
    [{1: {"a": "x", "b": 1}, 2: {"a": None, "b": None}}, {2: {"a": "", "b": None}},
     {1: {"a": "x", "b": 1, "c": None}, 2: {"a": "", "b": 0, "c": "z"}}],
]


def generate(rng: random.Random) -> list[dict]:
    def values(number: int) -> dict:
        drawn = {"a": rng.choice(TEXT), "b": rng.choice(NUMBERS)}
        return {**drawn, "c": rng.choice(TEXT)} if number >= ADDED_AT else drawn

    return random_snapshots(rng, values)


def reductions(sequence: list[dict]):
    """Each one-step smaller sequence: a load fewer, a key fewer, a value NULL."""
    yield from fewer_loads_and_keys(sequence)
    for number, snapshot in enumerate(sequence):
        for key, values in snapshot.items():
            for column, value in values.items():
                if value is not None:
                    yield [*sequence[:number], {**snapshot, key: {**values, column: None}}, *sequence[number + 1:]]


def test_history_matches_the_model_of_the_rules(project):
    check_sequences(generate, EXAMPLES, lambda sequences: load_all(project, sequences), reductions)


def load_all(project, sequences: list[list[dict]]) -> set[int]:
    """Loads sequence g as group g of one table per strategy; returns the groups that
    differ from the model. A rerun of a load and refused loads change nothing."""
    for strategy in STRATEGIES:
        project.sql(f"drop table if exists {project.schema}.hist_{strategy}")
        project.model(
            f"hist_{strategy}",
            f"{{{{ config(materialized='scd2_hist', unique_key='id', strategy='{strategy}') }}}} "
            "select * from {{ target.schema }}.snapshot",
        )
    model = Scd2Model()
    loads = list(zip(*padded(sequences, lambda s: s[-1])))
    for number, load in enumerate(loads):
        at = BASE + dt.timedelta(days=number)
        snapshot = {grouped_key(g, k): as_loaded(values, number)
                    for g, group_snapshot in enumerate(load) for k, values in group_snapshot.items()}
        variables = {"load_timestamp": at.strftime("%Y-%m-%d %H:%M:%S.%f"), "load_run_id": f"r{number}"}
        write_snapshot(project, snapshot, with_added=number >= ADDED_AT)
        project.run("run", variables=variables)
        model.load({(k,): v for k, v in snapshot.items()}, at, variables["load_run_id"])
        if number == RERUN_AT:
            with project.unchanged(*TABLES):
                project.run("run", variables=variables)
    refuse_bad_keys(project, snapshot, variables, with_added=len(loads) > ADDED_AT)

    expected = [
        (v.key[0], hash_key([v.key[0], v.started_at]), v.attributes["a"], v.attributes["b"], v.attributes.get("c"),
         v.started_at, v.ended_at, v.state, v.load_run_id)
        for v in model.versions
    ]
    differing = set()
    for strategy in STRATEGIES:
        actual = project.table(
            f"hist_{strategy}",
            f"id, hist_{strategy}_key, a, b, {'c' if len(loads) > ADDED_AT else 'null'}, version_started_at, "
            "version_ended_at, version_state, load_run_id",
        )
        differing |= differing_groups(actual, expected)
    return differing


def as_loaded(values: dict, number: int) -> dict:
    """A key's values as load `number` has them: `c` only from ADDED_AT on (NULL if not given)."""
    return {"a": values["a"], "b": values["b"], **({"c": values.get("c")} if number >= ADDED_AT else {})}


def write_snapshot(project, snapshot: dict, with_added: bool, extra: tuple = ()) -> None:
    """The select's table: one row per key, plus `extra` rows."""
    rows = [(k, v["a"], v["b"], v.get("c")) for k, v in snapshot.items()] + list(extra)
    project.create_source("snapshot", "id int, a string, b int" + (", c string" if with_added else ""),
                          [row if with_added else row[:3] for row in rows])


def refuse_bad_keys(project, snapshot: dict, variables: dict, with_added: bool) -> None:
    """The last load again with a key twice, then with a NULL key: refused, nothing written."""
    key = grouped_key(0, 9)  # a key no sequence has
    for extra, error in (
        (((key, "x", 1, None), (key, "y", 1, None)),
         f"unique_key (id) is duplicated for 1 key(s) in the select, e.g. ({key}) x2; nothing was written"),
        (((None, "x", 1, None),), "unique_key (id) is NULL in 1 row(s) of the select; nothing was written"),
    ):
        write_snapshot(project, snapshot, with_added, extra)
        with project.unchanged(*TABLES):
            check_error(project, variables, error)


def check_error(project, variables: dict, error: str) -> None:
    failures = project.failures("run", variables=variables)
    assert set(failures) == set(TABLES) and all(error in message for message in failures.values()), failures
