"""Property: scd_type6 builds, load after load, exactly the dimension the
pure-Python model of its rules builds (tests/reference.py).

Every run checks PROPERTY_SEQUENCES random sequences (200 by default) at once, each
as its own group of keys in one dimension; more on demand:
HISTORIZE_PROPERTY_SEQUENCES=10000 ./scripts/test.sh -k properties"""
from __future__ import annotations

import datetime as dt
import random

from properties import check_sequences, differing_groups, fewer_loads_and_keys, grouped_key, padded, random_snapshots
from reference import Type6Model

# A sequence is a list of snapshots {key: (type 0, type 1, type 2 value)}, keys 1..4; from
# the third load on, a new column `n` (Type 2, as every column not listed) is a fourth value.
VALUES = [None, "", "a", "b", "a|b", "'"]
BASE = dt.datetime(2026, 1, 1, 6)
SOURCE = "id int, t0 string, t1 string, t2 string"
ADDED = ", n string"
ADDED_AT = 2
CONFIG = ("materialized='scd_type6', unique_key='id', type0_columns=['t0'], type1_columns=['t1'], "
          "type3_columns={'t2': 'prev'}")
RERUN_AT = 1  # this load is also rerun: it must change nothing
TABLES = ("dim",)
EXAMPLES = [
    [{1: ("a", "a", "a")}, {}, {1: ("b", "b", None)}],
    [{1: ("a", "a", "a"), 2: ("b", "b", "b")}, {1: ("a", "a", "a")}, {1: ("a", "a", "a", "n"), 2: ("b", "b", "b", None)}],
]


def generate(rng: random.Random) -> list[dict]:
    return random_snapshots(rng, lambda number: tuple(rng.choice(VALUES) for _ in range(4 if number >= ADDED_AT else 3)))


def as_loaded(values: tuple, number: int) -> tuple:
    """A key's values as load `number` has them: `n` only from ADDED_AT on (NULL if not given)."""
    return values[:3] + ((values[3] if len(values) > 3 else None,) if number >= ADDED_AT else ())


def reductions(sequence: list[dict]):
    """Each one-step smaller sequence: a load fewer, a key fewer, a value NULL."""
    yield from fewer_loads_and_keys(sequence)
    for number, snapshot in enumerate(sequence):
        for key, values in snapshot.items():
            for column, value in enumerate(values):
                if value is not None:
                    nulled = values[:column] + (None,) + values[column + 1:]
                    yield [*sequence[:number], {**snapshot, key: nulled}, *sequence[number + 1:]]


def test_dimension_matches_the_model_of_the_rules(project):
    check_sequences(generate, EXAMPLES, lambda sequences: load_all(project, sequences), reductions)


def load_all(project, sequences: list[list[dict]]) -> set[int]:
    """Loads sequence g as group g of one dimension; returns the groups that differ from
    the model. A rerun of a load and refused loads change nothing."""
    project.sql(f"drop table if exists {project.schema}.dim")
    project.model("dim", f"{{{{ config({CONFIG}) }}}} select * from {{{{ target.schema }}}}.src")
    model = Type6Model()
    loads = list(zip(*padded(sequences, lambda s: s[-1])))
    for number, load in enumerate(loads):
        at = BASE + dt.timedelta(days=number)
        snapshot = {grouped_key(g, k): as_loaded(values, number)
                    for g, group_snapshot in enumerate(load) for k, values in group_snapshot.items()}
        variables = {"load_timestamp": at.strftime("%Y-%m-%d %H:%M:%S")}
        project.create_source("src", source(number), [(k, *v) for k, v in snapshot.items()])
        project.run("run", variables=variables)
        model.load(snapshot, at)
        if number == RERUN_AT:
            with project.unchanged(*TABLES):
                project.run("run", variables=variables)
    refuse_bad_keys(project, snapshot, variables, len(loads) - 1)
    with_added = len(loads) > ADDED_AT
    actual = project.table("dim", "id, t0, t1, t2, prev, effective_from, effective_to, current_flag, version, change_reason"
                           + (", n" if with_added else ""))
    return differing_groups(actual, model.table(with_added))


def source(number: int) -> str:
    return SOURCE + (ADDED if number >= ADDED_AT else "")


def refuse_bad_keys(project, snapshot: dict, variables: dict, number: int) -> None:
    """Load `number` again with a key twice, then with a NULL key: refused, nothing written."""
    key = grouped_key(0, 9)  # a key no sequence has
    for extra, error in (
        ([(key, ("a", "a", "a", "a")), (key, ("b", "b", "b", "b"))],
         f"unique_key (id) is duplicated for 1 key(s) in the select, e.g. ({key}) x2"),
        ([(None, ("a", "a", "a", "a"))], "unique_key (id) is NULL in 1 row(s) of the select"),
    ):
        rows = [(k, *v) for k, v in snapshot.items()] + [(k, *as_loaded(v, number)) for k, v in extra]
        project.create_source("src", source(number), rows)
        with project.unchanged(*TABLES):
            check_error(project, variables, error)


def check_error(project, variables: dict, error: str) -> None:
    message = project.fail("run", variables=variables)
    assert error in message, message
