"""Property: with out_of_order='reconcile', the snapshots of any sequence loaded in
any order give exactly the history that loading them in time order gives, as the
pure-Python model of the rules builds it (tests/reference.py); the invariant tests
pass after every load.

Every run checks PROPERTY_SEQUENCES random sequences (200 by default) at once, each as
its own group of keys in one table per order: the loads in reverse and in ORDERS - 1
random orders. More on demand:
HISTORIZE_PROPERTY_SEQUENCES=10000 ./scripts/test.sh -k properties"""
from __future__ import annotations

import datetime as dt
import random

from properties import (PROPERTY_SEED, check_sequences, differing_groups, fewer_loads_and_keys, grouped_key, padded,
                        random_snapshots)
from reference import Scd2Model, hash_key

TEXT = [None, "", "x", "y", "x|y"]
NUMBERS = [None, 0, 1]
BASE = dt.datetime(2026, 3, 1, 6, 0, 0, 250000)
ORDERS = 3
INVARIANTS = ("one_open_version", "no_overlapping_versions", "no_gaps", "open_version_unbounded")
EXAMPLES = [
    # a key new in a late load, absent before and after it; one that changes and changes back
    [{1: {"a": "x", "b": 1}}, {1: {"a": "y", "b": 1}, 2: {"a": "x", "b": None}}, {1: {"a": "x", "b": 1}}],
]


def generate(rng: random.Random) -> list[dict]:
    return random_snapshots(rng, lambda number: {"a": rng.choice(TEXT), "b": rng.choice(NUMBERS)})


def reductions(sequence: list[dict]):
    yield from fewer_loads_and_keys(sequence)


def orders(loads: int) -> list[list[int]]:
    """The loads in reverse (every load after the first is late), then random orders."""
    rng = random.Random(PROPERTY_SEED)
    found = [list(reversed(range(loads)))]
    while len(found) < ORDERS:
        found.append(rng.sample(range(loads), loads))
    return found


def test_any_order_of_loads_gives_the_history_of_time_order(project):
    check_sequences(generate, EXAMPLES, lambda sequences: load_all(project, sequences), reductions)


def load_all(project, sequences: list[list[dict]]) -> set[int]:
    """Loads sequence g as group g, in each order into its own table; returns the groups
    that differ from the model of the rules applied in time order."""
    loads = list(zip(*padded(sequences, lambda s: s[-1])))
    snapshots = [{grouped_key(g, k): values for g, group in enumerate(load) for k, values in group.items()}
                 for load in loads]
    project.create_source("snapshots", "load_number int, id int, a string, b int",
                          [(n, k, v["a"], v["b"]) for n, snapshot in enumerate(snapshots) for k, v in snapshot.items()])
    tests = "".join(f"\n      - historize.{test}" for test in INVARIANTS)
    models = []
    for number in range(ORDERS):
        name = f"hist_{number}"
        project.sql(f"drop table if exists {project.schema}.{name}")
        project.model(name, "{{ config(materialized='scd2_hist', unique_key='id', out_of_order='reconcile') }} "
                            "select id, a, b from {{ target.schema }}.snapshots where load_number = {{ var('load_number', -1) }}")
        models.append(f"  - name: {name}\n    data_tests:{tests}")
    project.sql(f"drop table if exists {project.schema}.historize_loads")
    project.write("models/hist.yml", "version: 2\nmodels:\n" + "\n".join(models) + "\n")

    model = Scd2Model()
    for number, snapshot in enumerate(snapshots):
        model.load({(k,): v for k, v in snapshot.items()}, at(number), f"r{number}")
    expected = [(v.key[0], hash_key([v.key[0], v.started_at]), v.attributes["a"], v.attributes["b"],
                 v.started_at, v.ended_at, v.state, v.load_run_id) for v in model.versions]

    differing = set()
    for table, order in enumerate(orders(len(loads))):
        for number in order:
            project.run("build", "-s", f"hist_{table}", variables={
                "load_timestamp": at(number).strftime("%Y-%m-%d %H:%M:%S.%f"), "load_run_id": f"r{number}",
                "load_number": number})
        actual = project.table(f"hist_{table}", f"id, hist_{table}_key, a, b, version_started_at, version_ended_at, "
                                                "version_state, load_run_id")
        differing |= differing_groups(actual, expected)
    return differing


def at(number: int) -> dt.datetime:
    return BASE + dt.timedelta(days=number)
