"""The measured cases: an SCD2 load, many small models in one run, a Fivetran
batch, a Type 6 load, a missed day loaded late, the invariant tests on a deep
history, a load of change events against the same change as snapshots, and a
dbt snapshot's history taken over."""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from historize_tools import dbt_runner as dbt
from historize_tools.bench import SCHEMA
from historize_tools.bench.contenders import (LEDGER_CONTENDERS, SCD2_CONTENDERS, dbt_load, load_into, lower_bound,
                                              pyspark_fivetran, pyspark_type6)
from historize_tools.bench.data import (FATE, generate_fivetran, generate_type6, make_daily_snapshot, make_dbt_snapshot,
                                       make_snapshot)
from historize_tools.bench.measure import (Contender, Profile, Result, assert_same_history, delta_version,
                                           history_signature, query_signature, race, restore, vacuum)

MEASURED_AT = "2026-02-01 00:00:00"


@dataclass(frozen=True)
class Bench:
    """What every case shares: the SparkSession, the dbt project of the dbt contenders,
    the seed of the generated data, and how often a load is timed (`repeat` up to
    100,000 keys, `repeat_large` above)."""
    session: Any
    project: Path
    seed: int
    repeat: int
    repeat_large: int

    def repetitions(self, keys: int) -> int:
        return self.repeat if keys <= 100_000 else self.repeat_large


@dataclass(frozen=True)
class Scd2Load:
    """One measured SCD2 load: `keys` keys of `attributes` columns each, a history
    `depth` loads deep before it, the fractions of keys it changes, deletes and adds,
    and the contenders that load it."""
    keys: int
    depth: int = 1
    changed: float = 0.10
    deleted: float = 0.01
    new: float = 0.01
    attributes: int = 6
    contenders: tuple[str, ...] = SCD2_CONTENDERS


def build_history(bench: Bench, load: Scd2Load) -> dict[str, int]:
    """Each contender's table through `load.depth` loads (every key changes in each);
    returns each table's version after them, and the ledger's when a contender keeps it."""
    session = bench.session
    for name in load.contenders + ("lower_bound_output", "historize_loads"):
        session.sql(f"drop table if exists {SCHEMA}.{name}")
    columns = None
    bases = {}
    for version in range(load.depth):
        make_snapshot(session, f"history_{version}", load.keys, load.attributes, bench.seed, base=version)
        columns = columns or [c for c in session.table(f"{SCHEMA}.history_{version}").columns if c != "id"]
        for name in load.contenders:
            load_into(session, bench.project, name, f"history_{version}", f"2026-01-{version + 1:02d} 00:00:00", columns)
    for name in load.contenders:
        bases[name] = delta_version(session, f"{SCHEMA}.{name}")
    if set(load.contenders) & set(LEDGER_CONTENDERS):
        bases["historize_loads"] = delta_version(session, f"{SCHEMA}.historize_loads")
    return bases


def restore_contender(session, name: str, bases: dict[str, int]) -> int:
    """A contender's table back to its version in `bases`, with the ledger if it keeps it;
    returns the table's version."""
    if name in LEDGER_CONTENDERS:
        restore(session, f"{SCHEMA}.historize_loads", bases["historize_loads"])
    return restore(session, f"{SCHEMA}.{name}", bases[name])


def scd2_case(bench: Bench, load: Scd2Load) -> list[Result]:
    """One measured load: each contender's table is built through `depth` loads,
    then the load with the given fractions is timed, contenders interleaved, each
    table restored in between; the lower bound too. Checks that all contenders
    hold the same history after it."""
    session, project, contenders = bench.session, bench.project, load.contenders
    bases = build_history(bench, load)
    make_snapshot(session, "measured", load.keys, load.attributes, bench.seed, base=load.depth - 1,
                  changed=load.changed, deleted=load.deleted, new=load.new)
    columns = [c for c in session.table(f"{SCHEMA}.measured").columns if c != "id"]
    case = {"keys": load.keys, "depth": load.depth, "changed": load.changed, "deleted": load.deleted, "new": load.new}
    racing = [
        Contender(name, f"{SCHEMA}.{name}",
                  reset=lambda name=name: restore_contender(session, name, bases),
                  load=lambda profile, name=name: load_into(session, project, name, "measured", MEASURED_AT, columns,
                                                            profile))
        for name in contenders
    ]
    if "pyspark_two_pass" in contenders:
        output = f"{SCHEMA}.lower_bound_output"
        opened = f"{SCHEMA}.pyspark_two_pass version as of {bases['pyspark_two_pass']}"

        def empty_output() -> int:
            session.sql(f"create or replace table {output} using delta as select *, '' as h from {SCHEMA}.measured where false")
            return delta_version(session, output)

        racing.append(Contender("lower_bound", output, reset=empty_output,
                                load=lambda profile: lower_bound(session, f"{SCHEMA}.measured", opened, output, columns,
                                                                 profile)))
    results = race(session, racing, bench.repetitions(load.keys), **case)
    assert_same_history(list(contenders), lambda name: history_signature(session, name, columns), case)
    return results


def invariant_tests_case(bench: Bench, model: str, since: str) -> list[Result]:
    """The five invariant tests on `model`'s table, over the whole history and
    with `since` (only the versions written since that load), each timed."""
    session, project = bench.session, bench.project
    results = []
    for label, selector in (("whole history", "tag:invariants_all"), (f"since {since}", "tag:invariants_since")):
        profile = Profile()
        started = time.perf_counter()
        dbt.run(["test", "--select", selector], project_dir=project, variables={"since": since},
                callbacks=[profile])
        results.append({"contender": "invariant_tests", "scope": label, "table": model,
                        "rows": session.table(f"{SCHEMA}.{model}").count(),
                        "seconds": round(time.perf_counter() - started, 2),
                        "profile": {"statements": profile.statements}})
        print(f"bench: invariant tests on {model}, {label}: {results[-1]['seconds']} s", flush=True)
    return results


def small_models_case(bench: Bench, models: int, keys: int, threads: tuple[int, ...]) -> list[Result]:
    """`models` scd2_hist models of `keys` keys each in one `dbt run`, against
    one `dbt snapshot` of as many snapshots, at each thread count; and the
    fixed cost per model (its statements and their time, from one thread's run).
    Each repetition is a whole run of every model: at most 3, as at 10^6."""
    session, project, seed, repeat = bench.session, bench.project, bench.seed, min(3, bench.repeat)
    for index in range(models):
        make_snapshot(session, f"small_{index:02d}_0", keys, 6, seed + index)
        make_snapshot(session, f"small_{index:02d}_1", keys, 6, seed + index, changed=0.10, deleted=0.01, new=0.01)
    tables = {"scd2_hist": [f"{SCHEMA}.small_hist_{i:02d}" for i in range(models)],
              "dbt_snapshot": [f"{SCHEMA}.small_snap_{i:02d}" for i in range(models)]}
    commands = {"scd2_hist": "run", "dbt_snapshot": "snapshot"}
    first = {"small_load": "0", "load_timestamp": "2026-01-01 00:00:00", "load_run_id": "small@0"}
    measured = {"small_load": "1", "load_timestamp": MEASURED_AT, "load_run_id": "small@1"}
    bases = {}
    for name, command in commands.items():
        dbt.run([command, "--select", "tag:small", "--threads", "4"], project_dir=project, variables=first)
        bases[name] = {table: delta_version(session, table) for table in tables[name]}

    def reset(name: str) -> int:
        """All the contender's tables back; returns the first one's version (its commits are reported)."""
        for table, version in bases[name].items():
            restore(session, table, version)
        return delta_version(session, tables[name][0])

    results = []
    for count in threads:
        racing = [Contender(name, tables[name][0], reset=lambda name=name: reset(name),
                            load=lambda profile, name=name, count=count: dbt.run(
                                [commands[name], "--select", "tag:small", "--threads", str(count)],
                                project_dir=project, variables=measured, callbacks=[profile]))
                  for name in commands]
        for result in race(session, racing, repeat, keys=keys, models=models, threads=count):
            statements = result["profile"]["statements"]
            per_model = {}
            for statement in statements:
                per_model.setdefault(statement["node"], []).append(statement["seconds"])
            result.update({
                "statements_per_model": statistics.median(len(v) for v in per_model.values()),
                "statement_seconds_per_model": round(statistics.median(sum(v) for v in per_model.values()), 3),
            })
            results.append(result)
    assert_same_history(["small_hist_00", "small_snap_00"],
                        lambda name: history_signature(session, name, [f"a{i}" for i in range(6)]), {"small": keys})
    return results


def backfill_case(bench: Bench, keys: int, attributes: int, days: int, late_day: int) -> list[Result]:
    """A missed day loaded late: `days` daily snapshots loaded in order but for
    `late_day`, which then comes late (scd2_hist with out_of_order='reconcile';
    its table and the load ledger restored between repetitions), against
    rebuilding the history from all the snapshots in order. Checks that both
    hold the same history, every version's interval, state and run id."""
    session, project = bench.session, bench.project
    for day in range(days):
        make_daily_snapshot(session, f"daily_{day}", keys, attributes, bench.seed, day)
    for name in ("backfill_hist", "rebuilt_hist", "historize_loads"):
        session.sql(f"drop table if exists {SCHEMA}.{name}")

    def at(day: int) -> str:
        return f"2026-03-{day + 1:02d} 00:00:00"

    for day in range(days):
        if day != late_day:
            dbt_load(project, "backfill_hist", f"daily_{day}", at(day))
    late, ledger = f"{SCHEMA}.backfill_hist", f"{SCHEMA}.historize_loads"
    bases = {late: delta_version(session, late), ledger: delta_version(session, ledger)}

    def restore_late() -> int:
        restore(session, ledger, bases[ledger])
        return restore(session, late, bases[late])

    def drop_rebuilt() -> int:
        session.sql(f"drop table if exists {SCHEMA}.rebuilt_hist")
        return -1  # every commit of the rebuilt table is the rebuild's

    def rebuild(profile) -> None:
        for day in range(days):
            dbt_load(project, "rebuilt_hist", f"daily_{day}", at(day), profile)

    racing = [
        Contender("scd2_hist_late_load", late, reset=restore_late,
                  load=lambda profile: dbt_load(project, "backfill_hist", f"daily_{late_day}", at(late_day), profile)),
        Contender("rebuild_from_snapshots", f"{SCHEMA}.rebuilt_hist", reset=drop_rebuilt, load=rebuild),
    ]
    case = {"keys": keys, "days": days, "late_day": late_day, "versions_before": session.table(late).count()}
    results = race(session, racing, bench.repetitions(keys), **case)
    columns = ", ".join(f"a{i}" for i in range(attributes))
    assert_same_history(["backfill_hist", "rebuilt_hist"], query_signature(session, (
        f"select id, {columns}, version_started_at, version_ended_at, version_state, load_run_id from {{table}}")), case)
    return results


def restoring(session, name: str, table: str, load) -> Contender:
    """A contender whose table is put back to its version now before each repetition."""
    base = delta_version(session, table)
    return Contender(name, table, reset=lambda: restore(session, table, base), load=load)


def fivetran_case(bench: Bench, versions: int, events: int) -> list[Result]:
    """A batch of events onto `versions` versions: fivetran_history against the hand-written job."""
    session, project = bench.session, bench.project
    generate_fivetran(session, versions // 4, 4, events, bench.seed)
    session.sql(f"create or replace table {SCHEMA}.fivetran_pyspark using delta as select * from {SCHEMA}.fivetran_bench")
    # The generated table lacks the properties the model keeps (row tracking among
    # them): an empty batch sets them once, so the timed load is a daily one.
    session.sql(f"create or replace table {SCHEMA}.fivetran_no_events using delta as "
                f"select * from {SCHEMA}.fivetran_batch where false")
    dbt_load(project, "fivetran_bench", "fivetran_no_events", "2026-01-01 00:00:00")
    at = "2026-01-02 00:00:00"
    racing = [
        restoring(session, "fivetran_history", f"{SCHEMA}.fivetran_bench",
                  lambda profile: dbt_load(project, "fivetran_bench", "fivetran_batch", at, profile)),
        restoring(session, "pyspark_fivetran", f"{SCHEMA}.fivetran_pyspark",
                  lambda profile: pyspark_fivetran(session, f"{SCHEMA}.fivetran_pyspark", f"{SCHEMA}.fivetran_batch",
                                                   at, "unmod", profile)),
    ]
    facts = {"versions": versions, "events": events}
    results = race(session, racing, bench.repetitions(versions), **facts)
    assert_same_history(["fivetran_bench", "fivetran_pyspark"], query_signature(session,
                        "select id, a0, a1, _fivetran_start, _fivetran_end, _fivetran_active from {table} "
                        "order by id, _fivetran_start"), facts)
    return results


def type6_case(bench: Bench, keys: int) -> list[Result]:
    """One load with 10% Type 2 and 10% Type 1 changes: scd_type6 against the hand-written job."""
    session, project = bench.session, bench.project
    generate_type6(session, keys, 0.10, 0.10, bench.seed)
    first, second = "2026-01-01 00:00:00", "2026-01-02 00:00:00"
    tables = {"scd_type6": f"{SCHEMA}.type6_bench", "pyspark_type6": f"{SCHEMA}.type6_pyspark"}
    for table in tables.values():
        session.sql(f"drop table if exists {table}")
    dbt_load(project, "type6_bench", "type6_1", first)
    pyspark_type6(session, tables["pyspark_type6"], f"{SCHEMA}.type6_1", first)
    racing = [
        restoring(session, "scd_type6", tables["scd_type6"],
                  lambda profile: dbt_load(project, "type6_bench", "type6_2", second, profile)),
        restoring(session, "pyspark_type6", tables["pyspark_type6"],
                  lambda profile: pyspark_type6(session, tables["pyspark_type6"], f"{SCHEMA}.type6_2", second, profile)),
    ]
    facts = {"keys": keys, "type2_changed": 0.10, "type1_changed": 0.10}
    results = race(session, racing, bench.repetitions(keys), **facts)
    assert_same_history(["type6_bench", "type6_pyspark"], query_signature(session,
                        "select id, version, created_on, display_name, tier, score, region, current_flag, "
                        "effective_from, effective_to, change_reason from {table} order by id, version"), facts)
    return results


def changes_case(bench: Bench, keys: int, changed: int, depth: int, attributes: int) -> list[Result]:
    """A load of `changed` changed keys onto a history of `keys` keys `depth` loads deep:
    as change events (scd2_hist with input='changes', its history built from every
    load's rows as events at that load's time, in one load; and from the Change Data Feed
    of a table kept as the snapshots, loaded after each of its commits), against the same
    change as a snapshot load (scd2_hist) and dbt's snapshot; and the events model keeping
    every belief (bitemporal). All must hold the same history (a bitemporal one as its
    current belief)."""
    session, project = bench.session, bench.project
    load = Scd2Load(keys, depth=depth, changed=changed / keys, deleted=0.0, new=0.0, attributes=attributes,
                    contenders=("scd2_hist",))
    bases = build_history(bench, load)
    # dbt's snapshot table as its loads of the same snapshots leave it, written at once
    make_dbt_snapshot(session, "dbt_snapshot", [f"history_{version}" for version in range(depth)],
                      [f"2026-01-{version + 1:02d} 00:00:00" for version in range(depth)])
    bases["dbt_snapshot"] = delta_version(session, f"{SCHEMA}.dbt_snapshot")
    for table in ("events_hist", "events_hist__historize_events", "cdf_hist", "cdf_hist__historize_events",
                  "events_bitemporal_hist", "events_bitemporal_hist__historize_events"):
        session.sql(f"drop table if exists {SCHEMA}.{table}")
    session.sql(f"create or replace table {SCHEMA}.history_events using delta as " + " union all ".join(
        f"select *, timestamp'2026-01-{version + 1:02d} 00:00:00' as changed_at from {SCHEMA}.history_{version}"
        for version in range(depth)))
    dbt_load(project, "events_hist", "history_events", MEASURED_AT)
    dbt_load(project, "events_bitemporal_hist", "history_events", MEASURED_AT)
    session.sql(f"drop table {SCHEMA}.history_events")
    make_snapshot(session, "measured", keys, attributes, bench.seed, base=depth - 1, changed=changed / keys)
    session.sql(f"create or replace table {SCHEMA}.measured_events using delta as "
                f"select *, timestamp'{MEASURED_AT}' as changed_at from {SCHEMA}.measured "
                f"where {FATE.format(seed=bench.seed, base=depth - 1)} < {changed / keys}")
    columns = [c for c in session.table(f"{SCHEMA}.measured").columns if c != "id"]
    # The Change Data Feed: a table kept as the snapshots are (one MERGE a load, its
    # history loaded after each), then the measured change as one more commit.
    session.sql(f"create or replace table {SCHEMA}.cdf_source using delta "
                f"tblproperties ('delta.enableChangeDataFeed' = 'true') "
                f"as select * from {SCHEMA}.history_0")
    for version in range(depth):
        if version > 0:
            merge_into_source(session, f"{SCHEMA}.history_{version}", columns)
        dbt_load(project, "cdf_hist", "cdf_source", MEASURED_AT)
    vacuum(session, *(f"{SCHEMA}.{table}" for table in ("scd2_hist", "dbt_snapshot", "cdf_source", "events_hist",
                                                        "events_hist__historize_events", "cdf_hist",
                                                        "cdf_hist__historize_events", "events_bitemporal_hist",
                                                        "events_bitemporal_hist__historize_events")))
    merge_into_source(session, f"{SCHEMA}.measured_events", columns)

    session.sql(f"create or replace table {SCHEMA}.no_events using delta as select * from {SCHEMA}.measured_events where false")

    def restoring_events(name: str, model: str, batch: str) -> Contender:
        """The events model `model` loading `batch`: its history and events tables back to
        their versions before the load between repetitions."""
        tables = (f"{SCHEMA}.{model}", f"{SCHEMA}.{model}__historize_events")
        bases = {table: delta_version(session, table) for table in tables}

        def restore_both() -> int:
            restore(session, tables[1], bases[tables[1]])
            return restore(session, tables[0], bases[tables[0]])

        return Contender(name, tables[0], reset=restore_both,
                         load=lambda profile: dbt_load(project, model, batch, MEASURED_AT, profile))

    # First, the events model loading a batch with no events: what an events load costs
    # before it writes (the model's measured load comes after it in every repetition).
    racing = [restoring_events("scd2_hist_events_empty_batch", "events_hist", "no_events"),
              restoring_events("scd2_hist_events", "events_hist", "measured_events"),
              restoring_events("scd2_hist_events_bitemporal", "events_bitemporal_hist", "measured_events"),
              restoring_events("scd2_hist_cdf", "cdf_hist", "measured_events")]
    racing += [Contender(name, f"{SCHEMA}.{name}", reset=lambda name=name: restore(session, f"{SCHEMA}.{name}", bases[name]),
                         load=lambda profile, name=name: load_into(session, project, name, "measured", MEASURED_AT, columns,
                                                                   profile))
               for name in ("scd2_hist", "dbt_snapshot")]
    case = {"keys": keys, "depth": depth, "changed_keys": changed}
    results = race(session, racing, bench.repetitions(keys), **case)
    assert_same_history(["scd2_hist", "events_hist", "events_bitemporal_hist", "cdf_hist", "dbt_snapshot"],
                        lambda name: history_signature(session, name, columns), case)
    return results


def merge_into_source(session, table: str, columns: list[str]) -> None:
    """The rows of `table` into cdf_source, by id: one commit, whose Change Data Feed
    holds an update for each row that differs."""
    session.sql(f"""
        merge into {SCHEMA}.cdf_source as kept
        using {table} as changed
        on kept.id = changed.id
        when matched and not ({' and '.join(f'kept.{c} <=> changed.{c}' for c in columns)})
            then update set {', '.join(f'{c} = changed.{c}' for c in columns)}
    """)


def adopt_case(bench: Bench, keys: int, depth: int, attributes: int) -> list[Result]:
    """A dbt snapshot of `keys` keys and `depth` versions each taken over by an scd2_hist
    model's first load (adopt_from: checked, written, then its select loaded, which
    changes nothing), against a first load of the same snapshot's current rows and a
    plain copy of the snapshot's table (the floor: read and write it once). The
    adopted history must be the snapshot's."""
    session, project = bench.session, bench.project
    snapshots = [f"history_{version}" for version in range(depth)]
    times = [f"2026-01-{version + 1:02d} 00:00:00" for version in range(depth)]
    for version, snapshot in enumerate(snapshots):
        make_snapshot(session, snapshot, keys, attributes, bench.seed, base=version)
    make_dbt_snapshot(session, "adopt_snapshot", snapshots, times)
    copy = f"{SCHEMA}.adopt_snapshot_copy"

    def dropped(*tables: str) -> int:
        for table in tables:
            session.sql(f"drop table if exists {SCHEMA}.{table}")
        return -1

    def copied(profile) -> None:
        with profile.step("create table as select (the snapshot's rows)"):
            session.sql(f"create or replace table {copy} using delta as select * from {SCHEMA}.adopt_snapshot")

    racing = [
        Contender("scd2_hist_adopt", f"{SCHEMA}.adopted_hist", reset=lambda: dropped("adopted_hist"),
                  load=lambda profile: dbt_load(project, "adopted_hist", snapshots[-1], MEASURED_AT, profile)),
        Contender("scd2_hist_first_load", f"{SCHEMA}.first_hist", reset=lambda: dropped("first_hist"),
                  load=lambda profile: dbt_load(project, "first_hist", snapshots[-1], MEASURED_AT, profile)),
        Contender("copy", copy, reset=lambda: dropped("adopt_snapshot_copy"), load=copied),
    ]
    case = {"keys": keys, "depth": depth, "rows": keys * depth}
    results = race(session, racing, bench.repetitions(keys), **case)
    columns = [c for c in session.table(f"{SCHEMA}.{snapshots[-1]}").columns if c != "id"]
    assert_same_history(["adopt_snapshot", "adopted_hist"], lambda name: history_signature(session, name, columns), case)
    return results
