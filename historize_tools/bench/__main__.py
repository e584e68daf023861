"""The benchmark's command line: python -m historize_tools.bench [--quick]."""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from historize_tools import dbt_runner as dbt
from historize_tools.bench import SCHEMA
from historize_tools.bench import __doc__ as DESCRIPTION
from historize_tools.bench.cases import Bench
from historize_tools.bench.measure import Result
from historize_tools.bench.contenders import (ADOPT_SNAPSHOT, BENCH_YML, MODELS, PROJECT_YML, SMALL_MODEL, SMALL_SNAPSHOT,
                                              SNAPSHOT)
from historize_tools.bench.report import chart, markdown_table, page_with_tables, profile_table, summarize
from historize_tools.bench.series import RUNNABLE, SERIES
# The cases the targets are set on (docs/benchmark.md): a write-path change is measured with
# these within a working session; the full run stays the reference.
TARGET_SERIES, TARGET_RATES = "size,small_models,fivetran,scd_type6,rate", "0"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, with what --targets and --quick set: the series and sizes to run,
    and where the results go."""
    parser = argparse.ArgumentParser(description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes, one repetition, no depth series: checks the harness runs")
    parser.add_argument("--targets", action="store_true",
                        help="only the cases the targets are set on: the size series, the small models, "
                             "fivetran_history, scd_type6 and the load that changes nothing "
                             "(written to bench/results/tmp/targets.json unless --output says otherwise)")
    parser.add_argument("--keys", default="10000,100000,1000000", help="N of the size and deletion_vectors series")
    parser.add_argument("--series-keys", type=int, default=100_000, help="N of the depth and change-rate series")
    parser.add_argument("--depths", default="1,5,20")
    parser.add_argument("--deep-keys", type=int, default=1_000_000,
                        help="N of the deep case (the largest depth), which the invariant tests then check")
    parser.add_argument("--small-models", type=int, default=20)
    parser.add_argument("--small-keys", type=int, default=1000)
    parser.add_argument("--rates", default="0,0.01,0.1,0.5")
    parser.add_argument("--attributes", type=int, default=6)
    parser.add_argument("--fivetran-versions", type=int, default=1_000_000)
    parser.add_argument("--fivetran-events", type=int, default=100_000)
    parser.add_argument("--type6-keys", type=int, default=100_000)
    parser.add_argument("--backfill-keys", type=int, default=100_000, help="N of the late-load case")
    parser.add_argument("--backfill-days", type=int, default=5, help="daily loads of the late-load case; the middle one comes late")
    parser.add_argument("--changes-keys", default="100000,1000000",
                        help="N of the changes series (a load of --changed-keys changed keys as events)")
    parser.add_argument("--changed-keys", type=int, default=10_000)
    parser.add_argument("--changes-depth", type=int, default=5)
    parser.add_argument("--adopt-keys", type=int, default=1_000_000,
                        help="N of the adopt case (a dbt snapshot of N keys, --adopt-depth versions each, taken over)")
    parser.add_argument("--adopt-depth", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5, help="repetitions up to 100,000 keys")
    parser.add_argument("--repeat-large", type=int, default=3, help="repetitions above 100,000 keys")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--series", default=",".join(RUNNABLE),
                        help="the series to run, in this order: " + ", ".join(RUNNABLE))
    parser.add_argument("--deep-depth", type=int, default=20, help="history depth of the deep case")
    parser.add_argument("--append", action="store_true",
                        help="add this run's results to those already in --output (a long run resumed)")
    parser.add_argument("--output", type=Path,
                        help="default: bench/results.json; with --targets bench/results/tmp/targets.json; "
                             "with --quick bench/results/tmp/quick.json")
    parser.add_argument("--table", type=Path, help="only print this results file as a Markdown table, and its chart")
    parser.add_argument("--page", type=Path,
                        help="with --table: render the file's tables into this page (docs/benchmark.md), "
                             "between its markers")
    args = parser.parse_args(argv)
    if args.page and not args.table:
        parser.error("--page needs --table: the results file whose tables it renders")
    if args.targets:
        args.series, args.rates = TARGET_SERIES, TARGET_RATES
    unknown = set(args.series.split(",")) - set(RUNNABLE)
    if unknown:
        parser.error(f"unknown series {sorted(unknown)}; known: {', '.join(RUNNABLE)}")
    if args.quick:
        args.keys, args.series_keys, args.depths, args.rates, args.repeat = "1000", 1000, "2", "0", 1
        args.deep_keys, args.deep_depth, args.small_models, args.small_keys = 1000, 2, 2, 100
        args.fivetran_versions, args.fivetran_events, args.type6_keys = 400, 100, 1000
        args.backfill_keys, args.backfill_days = 1000, 3
        args.changes_keys, args.changed_keys, args.changes_depth = "1000", 100, 2
        args.adopt_keys, args.adopt_depth = 1000, 2
    if args.output is None:
        args.output = dbt.ROOT / "bench" / ("results/tmp/quick.json" if args.quick
                                            else "results/tmp/targets.json" if args.targets else "results.json")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    chosen = set(args.series.split(","))
    if args.table:
        saved = json.loads(args.table.read_text())
        if args.page:
            args.page.write_text(page_with_tables(args.page.read_text(), saved))
            print(f"bench: rendered {args.table}'s tables into {args.page}")
            return 0
        print(markdown_table(saved["results"]))
        print("\nsummary: " + json.dumps(saved["summary"], indent=1))
        if "keys" in saved["summary"]:  # a run of the size series (a `changes` or `adopt` run has none)
            print("\n" + profile_table(saved["results"], saved["summary"]["keys"]))
        chart(saved["results"], args.table.with_suffix(".png"))
        return 0

    dbt.environment()
    os.environ["HISTORIZE_SCHEMA"] = SCHEMA
    project = dbt.package_project(Path(tempfile.mkdtemp(prefix="historize-bench-")), PROJECT_YML)
    for name, sql in MODELS.items():
        (project / "models" / f"{name}.sql").write_text(sql)
    (project / "models" / "bench.yml").write_text(BENCH_YML)
    (project / "snapshots").mkdir(exist_ok=True)
    (project / "snapshots" / "dbt_snapshot.sql").write_text(SNAPSHOT)
    (project / "snapshots" / "adopt_snapshot.sql").write_text(ADOPT_SNAPSHOT)
    for index in range(args.small_models):
        (project / "models" / f"small_hist_{index:02d}.sql").write_text(SMALL_MODEL.format(index=f"{index:02d}"))
        (project / "snapshots" / f"small_snap_{index:02d}.sql").write_text(SMALL_SNAPSHOT.format(index=f"{index:02d}"))
    dbt.run(["debug", "--quiet"], project_dir=project)
    session = dbt.spark()
    session.sql(f"drop schema if exists {SCHEMA} cascade")
    session.sql(f"create schema {SCHEMA}")

    results: list[Result] = json.loads(args.output.read_text())["results"] if args.append else []
    args.output.parent.mkdir(parents=True, exist_ok=True)

    def keep(found: list[Result]) -> None:
        """Adds a case's results, and saves all so far (a long run keeps what it measured)."""
        results.extend(found)
        args.output.write_text(json.dumps({"summary": summarize(results), "results": results}, indent=2) + "\n")

    bench = Bench(session, project, args.seed, args.repeat, args.repeat_large)
    for name in RUNNABLE:
        if name in chosen:
            for found in SERIES[name].cases(bench, args):
                keep(found)

    print("bench: summary " + json.dumps(summarize(results)), flush=True)
    charted = chart(results, args.output.with_suffix(".png"))
    print(f"bench: wrote {args.output}" + (f" and {args.output.with_suffix('.png')}" if charted else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
