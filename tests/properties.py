"""The property tests' engine: many random load sequences per run, each as its own group
of keys in one table, so that one dbt run per load checks them all; a failure is shrunk
and reported as a literal to add to the test's examples."""
from __future__ import annotations

import os
import pprint
import random
from typing import Any, Callable, Iterable, Iterator, Sequence

from reference import sorted_rows

# Fixed seed by default, so CI is reproducible; HISTORIZE_PROPERTY_SEED picks others, HISTORIZE_PROPERTY_SEQUENCES more.
PROPERTY_SEQUENCES = int(os.environ.get("HISTORIZE_PROPERTY_SEQUENCES", "200"))
PROPERTY_SEED = int(os.environ.get("HISTORIZE_PROPERTY_SEED", "0"))
GROUP = 10  # keys of sequence g are g * GROUP + k, 0 < k < GROUP
SHRINK_ROUNDS = 8


def grouped_key(group: int, key: int) -> int:
    assert 0 < key < GROUP, key
    return group * GROUP + key


def group_of(key: int) -> int:
    return key // GROUP


def padded(sequences: Sequence[list], empty: Callable[[list], Any]) -> list[list]:
    """Every sequence as long as the longest: a shorter one continues with `empty` loads
    (a load that changes nothing, e.g. its last snapshot again)."""
    length = max(len(s) for s in sequences)
    return [list(s) + [empty(s)] * (length - len(s)) for s in sequences]


def random_snapshots(rng: random.Random, values: Callable[[int], Any]) -> list[dict]:
    """1 to 4 snapshots {key: values} of keys 1 to 4: a key is absent from a fifth of them (so
    keys leave and return) and keeps its values in about half of the others; `values(number)`
    draws new values for load `number`."""
    snapshots: list[dict] = []
    for number in range(rng.randint(1, 4)):
        snapshot = {}
        for key in range(1, 5):
            if rng.random() < 0.2:
                continue
            before = snapshots[-1].get(key) if snapshots else None
            snapshot[key] = before if before and rng.random() < 0.5 else values(number)
        snapshots.append(snapshot)
    return snapshots


def fewer_loads_and_keys(sequence: list[dict]) -> Iterator[list[dict]]:
    """One-step smaller variants of a sequence of snapshots {key: values}: a load fewer,
    then a key fewer in every load."""
    for number in range(len(sequence)):
        yield sequence[:number] + sequence[number + 1:]
    for key in {k for snapshot in sequence for k in snapshot}:
        yield [{k: v for k, v in snapshot.items() if k != key} for snapshot in sequence]


def differing_groups(actual: Iterable[Sequence[Any]], expected: Iterable[Sequence[Any]]) -> set[int]:
    """The groups whose rows differ; each row's first value is its grouped key."""
    by_group: dict[int, list] = {}
    for side, rows in enumerate((actual, expected)):
        for row in rows:
            by_group.setdefault(group_of(row[0]), [[], []])[side].append(row)
    return {g for g, (mine, model) in by_group.items() if sorted_rows(mine) != sorted_rows(model)}


def check_sequences(generate: Callable[[random.Random], list], examples: Sequence[list],
                    run: Callable[[list[list]], set[int]], reductions: Callable[[list], Iterable[list]]) -> None:
    """Runs the examples and PROPERTY_SEQUENCES generated sequences as one batch:
    `run(sequences)` loads sequence g as group g and returns the groups whose table
    differs from the model of the rules. A failure is shrunk, each round running every
    one-step reduction of the smallest failing sequence as one batch, and reported as a
    literal to add to the test's EXAMPLES."""
    rng = random.Random(PROPERTY_SEED)
    sequences = list(examples) + [generate(rng) for _ in range(PROPERTY_SEQUENCES)]
    failing = run(sequences)
    if not failing:
        return
    smallest = min((sequences[g] for g in failing), key=lambda s: len(repr(s)))
    for _ in range(SHRINK_ROUNDS):
        candidates = [c for c in reductions(smallest) if c]
        found = run(candidates) if candidates else set()
        if not found:
            break
        smallest = min((candidates[g] for g in found), key=lambda s: len(repr(s)))
    raise AssertionError(
        f"{len(failing)} of {len(sequences)} sequences (seed {PROPERTY_SEED}) differ from the model; "
        f"the smallest, shrunk, to add to EXAMPLES:\n{pprint.pformat(smallest)}")
