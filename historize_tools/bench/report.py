"""The summary of the targets' ratios, the benchmark page's table (docs/benchmark.md) and the chart."""
from __future__ import annotations

from pathlib import Path


def summarize(results: list[dict]) -> dict:
    """The targets' ratios (each a contender's median over another's, same run)."""
    def seconds(contender, **case):
        found = [r["seconds_median"] for r in results
                 if r["contender"] == contender and all(r.get(k) == v for k, v in case.items())]
        return found[0] if found else None

    def ratio(a, b):
        return round(a / b, 2) if a and b else None

    def within_noise(a, b, **case):
        """Whether the two contenders' min-max ranges overlap: their medians then differ within noise."""
        ra, rb = ([r for r in results if r["contender"] == name and all(r.get(k) == v for k, v in case.items())]
                  for name in (a, b))
        return bool(ra and rb and ra[0]["seconds_min"] <= rb[0]["seconds_max"] and rb[0]["seconds_min"] <= ra[0]["seconds_max"])

    size = [r for r in results if r.get("series") == "size"]
    summary = {}
    if size:
        summary.update(size_summary(size, seconds, ratio, within_noise))
    n = summary.get("keys")
    depth = [r for r in results if r.get("series") == "depth" and r["contender"] == "scd2_hist"]
    for keys in sorted({r["keys"] for r in depth}):
        rows = sorted((r["depth"], r["seconds_median"], r["rows_written"]) for r in depth if r["keys"] == keys)
        if keys == n and rows[0][0] > 1:  # the depth-1 load of this N is the size series'
            shallow = next(r for r in size if r["contender"] == "scd2_hist" and r["keys"] == n)
            rows.insert(0, (1, shallow["seconds_median"], shallow["rows_written"]))
        summary[f"depth_{keys}"] = {"depths": [d for d, _, _ in rows], "rows_written": [w for _, _, w in rows],
                                    "deepest_over_shallowest": ratio(rows[-1][1], rows[0][1])}
    unchanged = [r for r in results if r.get("series") == "rate" and r["changed"] == 0]
    if unchanged:
        summary["no_change_commits"] = next(r["commits"] for r in unchanged if r["contender"] == "scd2_hist")
        summary["no_change_over_lower_bound"] = ratio(seconds("scd2_hist", series="rate", changed=0.0),
                                                      seconds("lower_bound", series="rate", changed=0.0))
    backfill = [r for r in results if r.get("series") == "backfill"]
    if backfill:
        summary["late_load_over_rebuild"] = ratio(seconds("scd2_hist_late_load", series="backfill"),
                                                  seconds("rebuild_from_snapshots", series="backfill"))
    summary["fivetran_history_over_pyspark"] = ratio(seconds("fivetran_history"), seconds("pyspark_fivetran"))
    summary["scd_type6_over_pyspark"] = ratio(seconds("scd_type6"), seconds("pyspark_type6"))
    small = [r for r in results if r.get("series") == "small_models"]
    for threads in sorted({r["threads"] for r in small}):
        mine = next(r for r in small if r["threads"] == threads and r["contender"] == "scd2_hist")
        theirs = next(r for r in small if r["threads"] == threads and r["contender"] == "dbt_snapshot")
        summary[f"small_models_threads_{threads}"] = {
            "scd2_hist_over_snapshot": ratio(mine["seconds_median"], theirs["seconds_median"]),
            "statements_per_model": [mine["statements_per_model"], theirs["statements_per_model"]],
            "statement_seconds_per_model": [mine["statement_seconds_per_model"], theirs["statement_seconds_per_model"]],
        }
    changes = [r for r in results if r.get("series") == "changes"]
    if changes:
        by_keys = sorted({r["keys"] for r in changes})
        summary["changes"] = {"keys": by_keys}
        empty = [seconds("scd2_hist_events_empty_batch", series="changes", keys=k) for k in by_keys]
        if None not in empty:
            summary["changes"]["events_empty_batch_seconds"] = [round(s, 2) for s in empty]
        for feed in ("events", "cdf"):
            loads = {k: seconds(f"scd2_hist_{feed}", series="changes", keys=k) for k in by_keys}
            if None in loads.values():
                continue  # a run before the Change Data Feed was measured
            summary["changes"].update({
                f"{feed}_over_snapshot_load": [ratio(loads[k], seconds("scd2_hist", series="changes", keys=k))
                                               for k in by_keys],
                f"{feed}_over_dbt_snapshot": [ratio(loads[k], seconds("dbt_snapshot", series="changes", keys=k))
                                              for k in by_keys],
                f"{feed}_largest_over_smallest": ratio(loads[by_keys[-1]], loads[by_keys[0]]),
            })
    adopt = [r for r in results if r.get("series") == "adopt"]
    if adopt:
        summary["adopt"] = {"keys": adopt[0]["keys"], "rows": adopt[0]["rows"],
                            "adopt_over_first_load": ratio(seconds("scd2_hist_adopt", series="adopt"),
                                                           seconds("scd2_hist_first_load", series="adopt")),
                            "adopt_over_copy": ratio(seconds("scd2_hist_adopt", series="adopt"),
                                                     seconds("copy", series="adopt"))}
    invariants = [r for r in results if r.get("series") == "invariants"]
    if invariants:
        summary["invariant_tests_seconds"] = {r["scope"]: r["seconds"] for r in invariants}
    return summary


def size_summary(size: list[dict], seconds, ratio, within_noise) -> dict:
    """The size series' ratios: scd2_hist over the snapshot at each N, over PySpark and the lower bound at the largest."""
    n = max(r["keys"] for r in size)
    main_case = {"series": "size", "keys": n}
    hist = seconds("scd2_hist", **main_case)
    return {
        "keys": n,
        "scd2_hist_over_snapshot_by_keys": {r["keys"]: ratio(seconds("scd2_hist", series="size", keys=r["keys"]),
                                                           seconds("dbt_snapshot", series="size", keys=r["keys"]))
                                            for r in size if r["contender"] == "scd2_hist"},
        "scd2_hist_and_snapshot_within_noise_by_keys": {
            r["keys"]: within_noise("scd2_hist", "dbt_snapshot", series="size", keys=r["keys"])
            for r in size if r["contender"] == "scd2_hist"},
        "scd2_hist_over_pyspark": ratio(hist, seconds("pyspark_two_pass", **main_case)),
        "scd2_hist_over_lower_bound": ratio(hist, seconds("lower_bound", **main_case)),
    }


def profile_table(results: list[dict], keys: int) -> str:
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


def markdown_table(results: list[dict]) -> str:
    """The results as the benchmark page's table."""
    lines = ["| series | contender | load | median s (min-max) | commits | files +/- | rows written |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        if r.get("series") == "invariants":
            continue
        if r.get("series") == "small_models":
            load = (f"{r['models']} models of N={r['keys']:,} in one run, threads {r['threads']}; per model "
                    f"{r['statements_per_model']:g} statements, {r['statement_seconds_per_model']:.2f} s")
        elif r.get("series") == "backfill":
            load = (f"N={r['keys']:,}, day {r['late_day'] + 1} of {r['days']} daily loads late "
                    f"({r['versions_before']:,} versions before it)")
        elif "versions" in r:
            load = f"{r['events']:,} events onto {r['versions']:,} versions"
        elif "changed_keys" in r:
            load = f"N={r['keys']:,}, depth {r['depth']}, {r['changed_keys']:,} keys changed"
        elif r.get("series") == "adopt":
            load = f"a dbt snapshot of N={r['keys']:,}, depth {r['depth']} ({r['rows']:,} rows)"
        elif "type2_changed" in r:
            load = f"N={r['keys']:,}, {r['type2_changed']:.0%} Type 2 and {r['type1_changed']:.0%} Type 1 changes"
        else:
            load = (f"N={r['keys']:,}, depth {r['depth']}, {r['changed']:.0%} changed, {r['deleted']:.0%} deleted, "
                    f"{r['new']:.0%} new")
        lines.append(f"| {r['series']} | {r['contender']} | {load} | {r['seconds_median']:.2f} "
                     f"({r['seconds_min']:.2f}-{r['seconds_max']:.2f}) | {r['commits']} | "
                     f"{r['files_added']}/{r['files_removed']} | {r['rows_written']:,} |")
    return "\n".join(lines)


# The charts a run can draw: its series, the value on the x axis, the axis's label, the title,
# and whether both axes are logarithmic.
CHARTS = (
    ("size", "keys", "keys (N); 10% changed, 1% deleted, 1% new; depth 1", "one load against N", True),
    ("rate", "changed", "fraction of keys changed (1% deleted and 1% new when > 0)",
     "one load against the change rate", False),
    ("changes", "keys", "keys (N) of a history 5 loads deep; 10,000 keys changed", "change events: one load against N",
     True),
)


def chart(results: list[dict], path: Path) -> bool:
    """Time against N (one line per contender), and against the change rate; or, for a run of
    the `changes` series, its loads against N. Writes no chart for a run of none of them (the
    `adopt` series, at one N) and says whether it wrote one."""
    drawn = [c for c in CHARTS if any(r.get("series") == c[0] for r in results)]
    if not drawn:
        return False
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(drawn), figsize=(6 * len(drawn), 4.5), squeeze=False)
    # one colour per contender in every chart
    colours = {name: f"C{i}" for i, name in enumerate(dict.fromkeys(r["contender"] for r in results))}
    for axis, (series, x, label, title, logarithmic) in zip(axes[0], drawn):
        rows = [r for r in results if r.get("series") == series]
        for contender in dict.fromkeys(r["contender"] for r in rows):
            points = sorted((r[x], r["seconds_median"]) for r in rows if r["contender"] == contender)
            axis.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=contender,
                      color=colours[contender])
        axis.set_ylabel("wall time of the load, s (median)")
        axis.grid(True, alpha=0.3)
        if logarithmic:
            axis.set_xscale("log")
            axis.set_yscale("log")
        axis.set_xlabel(label)
        axis.set_title(title)
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return True
