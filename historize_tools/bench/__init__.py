"""Benchmark of the history materializations against what users use today.

    python -m historize_tools.bench            # the full run (the figures of docs/benchmark.md)
    python -m historize_tools.bench --quick    # tiny sizes, one repetition (CI)
    python -m historize_tools.bench --table bench/results.json --page docs/benchmark.md
                                               # the page's tables, from the saved results

For each case it generates snapshots of N keys (K typed attribute columns with
NULLs; deterministic from --seed), builds each contender's history through
`depth` loads, then times one load with the given fractions of changed,
deleted and new keys: --repeat times up to 10^5 keys and --repeat-large times
above, the contenders interleaved (A B C, A B C, ...), each table restored to
its version before the load in between; median, min and max. Contenders:
scd2_hist (default settings), dbt's snapshot (check strategy on all columns,
hard_deletes: invalidate), the hand-written PySpark two-pass job, and the
lower bound (read the snapshot and the open versions once, write only the
changed rows). After each case, every contender must hold the same history.
Series: N (size), history depth (at N = --series-keys, and the deepest at
--deep-keys, on which the invariant tests are then timed, whole and `since`),
change rate, many small models in one run against as many snapshots (threads
1 and 4), fivetran_history and scd_type6 loads against hand-written
equivalents, and `changes`: a load of --changed-keys changed keys as change events
(scd2_hist with input='changes') on a history --changes-depth loads deep, against
the same change as a snapshot load and dbt's snapshot, at each N of --changes-keys;
`adopt`: a dbt snapshot of --adopt-keys keys, --adopt-depth versions each, taken
over by an scd2_hist model's first load (adopt_from), against a first load of its
current rows and a plain copy of its table; `deletion_vectors`: the size series' load at
each N of --keys, by the same model with deletion vectors from its first load
(deletion_vectors_from_mb 0) and with them kept off (tblproperties), against dbt's
snapshot. Each load's profile (every statement and its wall time, every commit's Delta
metrics) is kept. Writes JSON (--output) and a PNG chart beside it.

Modules: `data` generates the inputs, `contenders` holds the hand-written jobs
and the dbt models they race, `measure` times loads, compares histories and
defines a result (`Result`), `cases` runs the measured cases, `series` is the
registry of series (each one entry: its cases, its part of the summary, its
table rows and its chart), `report` summarizes, tabulates and charts from it,
`__main__` is the command line.
"""
from __future__ import annotations

SCHEMA = "historize_bench"
