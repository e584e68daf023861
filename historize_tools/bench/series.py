"""The benchmark's series, one entry each in SERIES: the cases it runs (as the command line
sizes them), its part of the summary, how one of its results reads in the page's table,
and its chart. A new series is one entry here."""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Callable, Iterator

from historize_tools.bench.cases import (MEASURED_AT, Bench, Scd2Load, adopt_case, backfill_case, changes_case,
                                         fivetran_case, invariant_tests_case, scd2_case, small_models_case, type6_case)
from historize_tools.bench.measure import Result

Results = list[Result]


def numbers(text: str, kind=float) -> list:
    return [kind(part) for part in text.split(",") if part]


def seconds(results: Results, contender: str, **case) -> float | None:
    """A contender's median in the results of one case (the first that matches)."""
    found = [r["seconds_median"] for r in results
             if r["contender"] == contender and all(r.get(k) == v for k, v in case.items())]
    return found[0] if found else None


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a and b else None


def within_noise(results: Results, a: str, b: str, **case) -> bool:
    """Whether the two contenders' min-max ranges overlap: their medians then differ within noise."""
    ra, rb = ([r for r in results if r["contender"] == name and all(r.get(k) == v for k, v in case.items())]
              for name in (a, b))
    return bool(ra and rb and ra[0]["seconds_min"] <= rb[0]["seconds_max"]
                and rb[0]["seconds_min"] <= ra[0]["seconds_max"])


def of(results: Results, *series: str) -> Results:
    return [r for r in results if r.get("series") in series]


@dataclass(frozen=True)
class Chart:
    """A chart of a series: the value on the x axis, the axis's label, the title, and
    whether both axes are logarithmic."""
    x: str
    label: str
    title: str
    logarithmic: bool


@dataclass(frozen=True)
class Series:
    """One series: `cases(bench, args)` runs its cases, yielding each case's results
    (each result names its series); `summary(results)` is its part of the summary, from
    all the results of a run; `load(result)` describes the load one result times, for
    the page's table (none: the result is no load, e.g. a timed test); `chart`, if any,
    draws its loads."""
    name: str
    cases: Callable[[Bench, argparse.Namespace], Iterator[Results]]
    load: Callable[[Result], str] | None
    summary: Callable[[Results], dict] = lambda results: {}
    chart: Chart | None = None


def named(series: str, results: Results) -> Results:
    return [{"series": series, **r} for r in results]


def scd2_load_text(r: Result) -> str:
    return (f"N={r['keys']:,}, depth {r['depth']}, {r['changed']:.0%} changed, {r['deleted']:.0%} deleted, "
            f"{r['new']:.0%} new")


# --- size: one load against N

def size_cases(bench: Bench, args: argparse.Namespace) -> Iterator[Results]:
    for keys in numbers(args.keys, int):
        yield named("size", scd2_case(bench, Scd2Load(keys, attributes=args.attributes)))


def size_summary(results: Results) -> dict:
    """scd2_hist over the snapshot at each N, over PySpark and the lower bound at the largest."""
    size = of(results, "size")
    if not size:
        return {}
    n = max(r["keys"] for r in size)
    main_case = {"series": "size", "keys": n}
    hist = seconds(results, "scd2_hist", **main_case)
    return {
        "keys": n,
        "scd2_hist_over_snapshot_by_keys": {r["keys"]: ratio(seconds(results, "scd2_hist", series="size", keys=r["keys"]),
                                                           seconds(results, "dbt_snapshot", series="size", keys=r["keys"]))
                                            for r in size if r["contender"] == "scd2_hist"},
        "scd2_hist_and_snapshot_within_noise_by_keys": {
            r["keys"]: within_noise(results, "scd2_hist", "dbt_snapshot", series="size", keys=r["keys"])
            for r in size if r["contender"] == "scd2_hist"},
        "scd2_hist_over_pyspark": ratio(hist, seconds(results, "pyspark_two_pass", **main_case)),
        "scd2_hist_over_lower_bound": ratio(hist, seconds(results, "lower_bound", **main_case)),
        **bitemporal_summary(size),
    }


def bitemporal_summary(size: Results) -> dict:
    """The bitemporal model's load over the same model's of one timeline at each N, and
    its rows written per key the load changes (changed, deleted or new)."""
    mine = [r for r in size if r["contender"] == "scd2_hist_bitemporal"]
    if not mine:
        return {}
    return {
        "bitemporal_over_scd2_hist_by_keys": {
            r["keys"]: ratio(r["seconds_median"], seconds(size, "scd2_hist", keys=r["keys"])) for r in mine},
        "bitemporal_rows_written_per_changed_key_by_keys": {
            r["keys"]: round(r["rows_written"] / (r["keys"] * (r["changed"] + r["deleted"] + r["new"])), 2)
            for r in mine},
    }


# --- deletion_vectors: the size series' load with deletion vectors and without

DELETION_VECTOR_CONTENDERS = ("dv_hist", "no_dv_hist", "dbt_snapshot")


def deletion_vectors_cases(bench: Bench, args: argparse.Namespace) -> Iterator[Results]:
    for keys in numbers(args.keys, int):
        yield named("deletion_vectors", scd2_case(bench, Scd2Load(keys, attributes=args.attributes,
                                                                  contenders=DELETION_VECTOR_CONTENDERS)))


def deletion_vectors_summary(results: Results) -> dict:
    """At each N, the load with deletion vectors over the load without, each over the
    snapshot, and the rows each wrote."""
    loads = of(results, "deletion_vectors")
    if not loads:
        return {}
    by_keys = sorted({r["keys"] for r in loads})
    with_dv, without_dv, snapshot = ([seconds(loads, name, keys=k) for k in by_keys]
                                     for name in DELETION_VECTOR_CONTENDERS)
    return {"deletion_vectors": {
        "keys": by_keys,
        "with_over_without": [ratio(a, b) for a, b in zip(with_dv, without_dv)],
        "with_over_snapshot": [ratio(a, b) for a, b in zip(with_dv, snapshot)],
        "without_over_snapshot": [ratio(a, b) for a, b in zip(without_dv, snapshot)],
        "rows_written_with_and_without": [[next(r["rows_written"] for r in loads
                                                if r["contender"] == name and r["keys"] == k)
                                           for name in ("dv_hist", "no_dv_hist")] for k in by_keys],
    }}


# --- small_models: many small models in one run

def small_models_cases(bench: Bench, args: argparse.Namespace) -> Iterator[Results]:
    yield named("small_models", small_models_case(bench, args.small_models, args.small_keys, (1, 4)))


def small_models_text(r: Result) -> str:
    return (f"{r['models']} models of N={r['keys']:,} in one run, threads {r['threads']}; per model "
            f"{r['statements_per_model']:g} statements, {r['statement_seconds_per_model']:.2f} s")


def small_models_summary(results: Results) -> dict:
    small = of(results, "small_models")
    summary = {}
    for threads in sorted({r["threads"] for r in small}):
        mine = next(r for r in small if r["threads"] == threads and r["contender"] == "scd2_hist")
        theirs = next(r for r in small if r["threads"] == threads and r["contender"] == "dbt_snapshot")
        summary[f"small_models_threads_{threads}"] = {
            "scd2_hist_over_snapshot": ratio(mine["seconds_median"], theirs["seconds_median"]),
            "statements_per_model": [mine["statements_per_model"], theirs["statements_per_model"]],
            "statement_seconds_per_model": [mine["statement_seconds_per_model"], theirs["statement_seconds_per_model"]],
        }
    return summary


# --- fivetran and scd_type6: against their hand-written jobs

def fivetran_cases(bench: Bench, args: argparse.Namespace) -> Iterator[Results]:
    yield named("fivetran", fivetran_case(bench, args.fivetran_versions, args.fivetran_events))


def type6_cases(bench: Bench, args: argparse.Namespace) -> Iterator[Results]:
    yield named("scd_type6", type6_case(bench, args.type6_keys))


# --- backfill: a missed day loaded late

def backfill_cases(bench: Bench, args: argparse.Namespace) -> Iterator[Results]:
    yield named("backfill", backfill_case(bench, args.backfill_keys, args.attributes, args.backfill_days,
                                          args.backfill_days // 2))


def backfill_summary(results: Results) -> dict:
    if not of(results, "backfill"):
        return {}
    return {"late_load_over_rebuild": ratio(seconds(results, "scd2_hist_late_load", series="backfill"),
                                            seconds(results, "rebuild_from_snapshots", series="backfill"))}


# --- rate: one load against the change rate

def rate_cases(bench: Bench, args: argparse.Namespace) -> Iterator[Results]:
    for rate in numbers(args.rates):
        other = 0.01 if rate > 0 else 0.0
        yield named("rate", scd2_case(bench, Scd2Load(args.series_keys, changed=rate, deleted=other, new=other,
                                                      attributes=args.attributes)))


def rate_summary(results: Results) -> dict:
    unchanged = [r for r in of(results, "rate") if r["changed"] == 0]
    if not unchanged:
        return {}
    return {"no_change_commits": next(r["commits"] for r in unchanged if r["contender"] == "scd2_hist"),
            "no_change_over_lower_bound": ratio(seconds(results, "scd2_hist", series="rate", changed=0.0),
                                                seconds(results, "lower_bound", series="rate", changed=0.0))}


# --- depth and deep: one load against the history's depth

def depth_cases(bench: Bench, args: argparse.Namespace) -> Iterator[Results]:
    for depth in numbers(args.depths, int):
        yield named("depth", scd2_case(bench, Scd2Load(args.series_keys, depth=depth, attributes=args.attributes,
                                                       contenders=("scd2_hist", "pyspark_two_pass"))))


def deep_cases(bench: Bench, args: argparse.Namespace) -> Iterator[Results]:
    """The deepest history at the deep N; the invariant tests then check it."""
    yield named("deep", scd2_case(bench, Scd2Load(args.deep_keys, depth=args.deep_depth, attributes=args.attributes,
                                                  contenders=("scd2_hist", "pyspark_two_pass"))))
    yield named("invariants", invariant_tests_case(bench, "scd2_hist", MEASURED_AT))


def depth_summary(results: Results) -> dict:
    """scd2_hist's load against the history's depth, at each N of the depth series and the
    deep case; the depth-1 load of the size series' N is the size series'."""
    depth = [r for r in of(results, "depth", "deep") if r["contender"] == "scd2_hist"]
    size = of(results, "size")
    n = max((r["keys"] for r in size), default=None)
    summary = {}
    for keys in sorted({r["keys"] for r in depth}):
        rows = sorted((r["depth"], r["seconds_median"], r["rows_written"]) for r in depth if r["keys"] == keys)
        if keys == n and rows[0][0] > 1:
            shallow = next(r for r in size if r["contender"] == "scd2_hist" and r["keys"] == n)
            rows.insert(0, (1, shallow["seconds_median"], shallow["rows_written"]))
        summary[f"depth_{keys}"] = {"depths": [d for d, _, _ in rows], "rows_written": [w for _, _, w in rows],
                                    "deepest_over_shallowest": ratio(rows[-1][1], rows[0][1])}
    return summary


def invariants_summary(results: Results) -> dict:
    invariants = of(results, "invariants")
    return {"invariant_tests_seconds": {r["scope"]: r["seconds"] for r in invariants}} if invariants else {}


# --- changes: a load of change events against the same change as snapshots

def changes_cases(bench: Bench, args: argparse.Namespace) -> Iterator[Results]:
    for keys in numbers(args.changes_keys, int):
        yield named("changes", changes_case(bench, keys, args.changed_keys, args.changes_depth, args.attributes))


def changes_summary(results: Results) -> dict:
    changes = of(results, "changes")
    if not changes:
        return {}
    by_keys = sorted({r["keys"] for r in changes})
    summary = {"keys": by_keys}
    empty = [seconds(results, "scd2_hist_events_empty_batch", series="changes", keys=k) for k in by_keys]
    if None not in empty:
        summary["events_empty_batch_seconds"] = [round(s, 2) for s in empty]
    for feed in ("events", "events_bitemporal", "cdf"):
        loads = {k: seconds(results, f"scd2_hist_{feed}", series="changes", keys=k) for k in by_keys}
        if None in loads.values():
            continue  # a run before the Change Data Feed was measured
        summary.update({
            f"{feed}_over_snapshot_load": [ratio(loads[k], seconds(results, "scd2_hist", series="changes", keys=k))
                                           for k in by_keys],
            f"{feed}_over_dbt_snapshot": [ratio(loads[k], seconds(results, "dbt_snapshot", series="changes", keys=k))
                                          for k in by_keys],
            f"{feed}_largest_over_smallest": ratio(loads[by_keys[-1]], loads[by_keys[0]]),
        })
    bitemporal = {k: seconds(results, "scd2_hist_events_bitemporal", series="changes", keys=k) for k in by_keys}
    if None not in bitemporal.values():
        summary["events_bitemporal_over_events"] = [
            ratio(bitemporal[k], seconds(results, "scd2_hist_events", series="changes", keys=k)) for k in by_keys]
        summary["events_bitemporal_rows_written_per_changed_key"] = [
            round(next(r["rows_written"] for r in changes if r["contender"] == "scd2_hist_events_bitemporal"
                       and r["keys"] == k) / next(r["changed_keys"] for r in changes if r["keys"] == k), 2)
            for k in by_keys]
    return {"changes": summary}


# --- adopt: a dbt snapshot's history taken over

def adopt_cases(bench: Bench, args: argparse.Namespace) -> Iterator[Results]:
    yield named("adopt", adopt_case(bench, args.adopt_keys, args.adopt_depth, args.attributes))


def adopt_summary(results: Results) -> dict:
    adopt = of(results, "adopt")
    if not adopt:
        return {}
    return {"adopt": {"keys": adopt[0]["keys"], "rows": adopt[0]["rows"],
                      "adopt_over_first_load": ratio(seconds(results, "scd2_hist_adopt", series="adopt"),
                                                     seconds(results, "scd2_hist_first_load", series="adopt")),
                      "adopt_over_copy": ratio(seconds(results, "scd2_hist_adopt", series="adopt"),
                                               seconds(results, "copy", series="adopt"))}}


# The series, in the order a run runs them; "invariants" is the deep case's timed tests.
SERIES: dict[str, Series] = {series.name: series for series in (
    Series("size", size_cases, scd2_load_text, size_summary,
           Chart("keys", "keys (N); 10% changed, 1% deleted, 1% new; depth 1", "one load against N", True)),
    Series("small_models", small_models_cases, small_models_text, small_models_summary),
    Series("fivetran", fivetran_cases, lambda r: f"{r['events']:,} events onto {r['versions']:,} versions",
           lambda results: {"fivetran_history_over_pyspark": ratio(seconds(results, "fivetran_history"),
                                                                   seconds(results, "pyspark_fivetran"))}),
    Series("scd_type6", type6_cases,
           lambda r: f"N={r['keys']:,}, {r['type2_changed']:.0%} Type 2 and {r['type1_changed']:.0%} Type 1 changes",
           lambda results: {"scd_type6_over_pyspark": ratio(seconds(results, "scd_type6"),
                                                            seconds(results, "pyspark_type6"))}),
    Series("backfill", backfill_cases,
           lambda r: (f"N={r['keys']:,}, day {r['late_day'] + 1} of {r['days']} daily loads late "
                      f"({r['versions_before']:,} versions before it)"),
           backfill_summary),
    Series("rate", rate_cases, scd2_load_text, rate_summary,
           Chart("changed", "fraction of keys changed (1% deleted and 1% new when > 0)",
                 "one load against the change rate", False)),
    Series("depth", depth_cases, scd2_load_text, depth_summary),
    Series("deep", deep_cases, scd2_load_text),
    Series("invariants", lambda bench, args: iter(()), None, invariants_summary),
    Series("changes", changes_cases, lambda r: f"N={r['keys']:,}, depth {r['depth']}, {r['changed_keys']:,} keys changed",
           changes_summary,
           Chart("keys", "keys (N) of a history 5 loads deep; 10,000 keys changed", "change events: one load against N",
                 True)),
    Series("adopt", adopt_cases, lambda r: f"a dbt snapshot of N={r['keys']:,}, depth {r['depth']} ({r['rows']:,} rows)",
           adopt_summary),
    Series("deletion_vectors", deletion_vectors_cases, scd2_load_text, deletion_vectors_summary),
)}
# What the command line runs: every series but the deep case's tests, which come with it.
RUNNABLE = tuple(name for name in SERIES if name != "invariants")
