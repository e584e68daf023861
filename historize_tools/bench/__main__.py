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
from historize_tools.bench.cases import fivetran_case, scd2_case, type6_case
from historize_tools.bench.contenders import FIVETRAN_YML, MODELS, PROJECT_YML, QUICK_CONTENDERS, SCD2_CONTENDERS, SNAPSHOT
from historize_tools.bench.report import chart, markdown_table, summarize


def numbers(text: str, kind=float) -> list:
    return [kind(part) for part in text.split(",") if part]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes, one repetition, three contenders, no depth series: checks the harness runs")
    parser.add_argument("--keys", default="10000,100000,1000000", help="N of the size series")
    parser.add_argument("--series-keys", type=int, default=100_000, help="N of the depth and change-rate series")
    parser.add_argument("--depths", default="1,5,20")
    parser.add_argument("--rates", default="0,0.01,0.1,0.5")
    parser.add_argument("--attributes", type=int, default=6)
    parser.add_argument("--fivetran-versions", type=int, default=1_000_000)
    parser.add_argument("--fivetran-events", type=int, default=100_000)
    parser.add_argument("--type6-keys", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--output", type=Path, default=dbt.ROOT / "bench" / "results.json")
    parser.add_argument("--table", type=Path, help="only print this results file as a Markdown table, and its chart")
    args = parser.parse_args(argv)
    if args.table:
        saved = json.loads(args.table.read_text())
        print(markdown_table(saved["results"]))
        print("\nsummary: " + json.dumps(saved["summary"]))
        chart(saved["results"], args.table.with_suffix(".png"))
        return 0
    if args.quick:
        args.keys, args.series_keys, args.depths, args.rates, args.repeat = "1000", 1000, "", "0", 1
        args.fivetran_versions, args.fivetran_events, args.type6_keys = 400, 100, 1000
        if args.output == dbt.ROOT / "bench" / "results.json":
            args.output = dbt.ROOT / "bench" / "results" / "tmp" / "quick.json"

    dbt.environment()
    os.environ["HISTORIZE_SCHEMA"] = SCHEMA
    project = dbt.package_project(Path(tempfile.mkdtemp(prefix="historize-bench-")), PROJECT_YML)
    for name, sql in MODELS.items():
        (project / "models" / f"{name}.sql").write_text(sql)
    (project / "models" / "bench.yml").write_text(FIVETRAN_YML)
    (project / "snapshots").mkdir(exist_ok=True)
    (project / "snapshots" / "dbt_snapshot.sql").write_text(SNAPSHOT)
    dbt.run(["debug", "--quiet"], project_dir=project)
    session = dbt.spark()
    session.sql(f"drop schema if exists {SCHEMA} cascade")
    session.sql(f"create schema {SCHEMA}")

    results: list[dict] = []
    args.output.parent.mkdir(parents=True, exist_ok=True)

    def keep(found: list[dict], series: str) -> None:
        """Adds a case's results, and saves all so far (a long run keeps what it measured)."""
        results.extend({"series": series, **r} for r in found)
        args.output.write_text(json.dumps({"summary": summarize(results), "results": results}, indent=2) + "\n")

    common = {"attributes": args.attributes, "repeat": args.repeat, "seed": args.seed}
    for keys in numbers(args.keys, int):
        keep(scd2_case(session, project, keys, depth=1, changed=0.10, deleted=0.01, new=0.01,
                       contenders=QUICK_CONTENDERS if args.quick else SCD2_CONTENDERS, **common), "size")
    for depth in numbers(args.depths, int):
        keep(scd2_case(session, project, args.series_keys, depth=depth, changed=0.10, deleted=0.01, new=0.01,
                       contenders=("scd2_hist_merge", "pyspark_two_pass"), **common), "depth")
    for rate in numbers(args.rates):
        other = 0.01 if rate > 0 else 0.0
        keep(scd2_case(session, project, args.series_keys, depth=1, changed=rate, deleted=other, new=other,
                       contenders=("scd2_hist_merge", "dbt_snapshot", "pyspark_two_pass"), **common), "rate")

    keep(fivetran_case(session, project, args.fivetran_versions, args.fivetran_events, args.repeat, args.seed),
         "fivetran")
    keep(type6_case(session, project, args.type6_keys, args.repeat, args.seed), "scd_type6")

    print("bench: summary " + json.dumps(summarize(results)), flush=True)
    chart(results, args.output.with_suffix(".png"))
    print(f"bench: wrote {args.output} and {args.output.with_suffix('.png')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
