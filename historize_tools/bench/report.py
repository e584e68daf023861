"""The summary of the targets' ratios, the benchmark page's tables (docs/benchmark.md) and the chart."""
from __future__ import annotations

import re
from pathlib import Path

from historize_tools.bench.measure import Result
from historize_tools.bench.series import SERIES


def summarize(results: list[Result]) -> dict:
    """The targets' ratios (each a contender's median over another's, same run): every
    series' part (series.SERIES)."""
    summary = {}
    for series in SERIES.values():
        summary.update(series.summary(results))
    return summary


def profile_table(results: list[Result], keys: int) -> str:
    """Every statement of each contender's last load at N = `keys` (size
    series), with its wall time, and its commits' Delta metrics."""
    lines = ["| contender | statement | s |", "|---|---|---|"]
    commits = []
    for r in results:
        if r.get("series") != "size" or r["keys"] != keys or "profile" not in r:
            continue
        for statement in r["profile"]["statements"]:
            lines.append(f"| {r['contender']} | `{statement['statement']}` | {statement['seconds']:.2f} |")
        for commit in r["profile"]["commits"]:
            shown = {k: v for k, v in commit.items() if k in PROFILE_METRICS and v}
            commits.append(f"| {r['contender']} | {commit['operation']} | "
                           + ", ".join(f"{k} {v:,}" for k, v in shown.items()) + " |")
    return "\n".join(lines + ["", "| contender | commit | Delta operation metrics |", "|---|---|---|"] + commits)


PROFILE_METRICS = ("numSourceRows", "numTargetRowsCopied", "numTargetRowsUpdated", "numTargetRowsInserted",
                   "numTargetFilesRemoved", "numTargetFilesAdded", "numOutputRows", "numFiles", "numRemovedFiles",
                   "scanTimeMs", "rewriteTimeMs", "executionTimeMs", "materializeSourceTimeMs")


def markdown_table(results: list[Result]) -> str:
    """The results as the benchmark page's table: a row for each load timed."""
    lines = ["| series | contender | load | median s (min-max) | commits | files +/- | rows written |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        load = SERIES[r["series"]].load
        if load is None:
            continue
        lines.append(f"| {r['series']} | {r['contender']} | {load(r)} | {r['seconds_median']:.2f} "
                     f"({r['seconds_min']:.2f}-{r['seconds_max']:.2f}) | {r['commits']} | "
                     f"{r['files_added']}/{r['files_removed']} | {r['rows_written']:,} |")
    return "\n".join(lines)


# The page's tables rendered from a results file, each between its two markers.
PAGE_TABLE = re.compile(r"(<!-- bench: (?P<name>[a-z]+) -->\n).*?(\n<!-- bench: end -->)", re.DOTALL)


def page_with_tables(page: str, saved: dict) -> str:
    """The benchmark page `page` with its tables rendered from `saved` (a results file's
    content): `profile` (the size series' last load at its largest N) and `results`
    (every load timed)."""
    tables = {"profile": profile_table(saved["results"], saved["summary"]["keys"]),
              "results": markdown_table(saved["results"])}
    found = {match["name"] for match in PAGE_TABLE.finditer(page)}
    if found != set(tables):
        raise ValueError(f"the page's table markers name {sorted(found)}; expected {sorted(tables)}")
    return PAGE_TABLE.sub(lambda match: match[1] + tables[match["name"]] + match[3], page)


def chart(results: list[Result], path: Path) -> bool:
    """Time against N (one line per contender), and against the change rate; or, for a run of
    the `changes` series, its loads against N. Writes no chart for a run of none of them (the
    `adopt` series, at one N) and says whether it wrote one."""
    drawn = [series for series in SERIES.values()
             if series.chart and any(r.get("series") == series.name for r in results)]
    if not drawn:
        return False
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(drawn), figsize=(6 * len(drawn), 4.5), squeeze=False)
    # one colour per contender in every chart
    colours = {name: f"C{i}" for i, name in enumerate(dict.fromkeys(r["contender"] for r in results))}
    for axis, series in zip(axes[0], drawn):
        spec = series.chart
        rows = [r for r in results if r.get("series") == series.name]
        for contender in dict.fromkeys(r["contender"] for r in rows):
            points = sorted((r[spec.x], r["seconds_median"]) for r in rows if r["contender"] == contender)
            axis.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=contender,
                      color=colours[contender])
        axis.set_ylabel("wall time of the load, s (median)")
        axis.grid(True, alpha=0.3)
        if spec.logarithmic:
            axis.set_xscale("log")
            axis.set_yscale("log")
        axis.set_xlabel(spec.label)
        axis.set_title(spec.title)
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return True
