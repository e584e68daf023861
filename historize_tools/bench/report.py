"""The summary of the targets' ratios, the README's table and the chart."""
from __future__ import annotations

from pathlib import Path


def summarize(results: list[dict]) -> dict:
    """The targets' ratios, on the largest N at depth 1 and 10% changed, and the
    depth and no-change cases."""
    def seconds(contender, **case):
        found = [r["seconds_median"] for r in results
                 if r["contender"] == contender and all(r.get(k) == v for k, v in case.items())]
        return found[0] if found else None

    def ratio(a, b):
        return round(a / b, 2) if a and b else None

    size = [r for r in results if r.get("series") == "size"]
    if not size:
        return {}
    n = max(r["keys"] for r in size)
    main_case = {"series": "size", "keys": n}
    merge = seconds("scd2_hist_merge", **main_case)
    summary = {
        "keys": n,
        "snapshot_over_scd2_hist": ratio(seconds("dbt_snapshot", **main_case), merge),
        "scd2_hist_over_pyspark": ratio(merge, seconds("pyspark_two_pass", **main_case)),
        "scd2_hist_over_lower_bound": ratio(merge, seconds("lower_bound", **main_case)),
        "scd2_hist_dv_over_scd2_hist": ratio(seconds("scd2_hist_merge_dv", **main_case), merge),
    }
    depths = sorted({r["depth"] for r in results if r.get("series") == "depth"})
    if depths:
        summary["depth_range"] = [depths[0], depths[-1]]
        summary["deepest_over_shallowest"] = ratio(seconds("scd2_hist_merge", series="depth", depth=depths[-1]),
                                                   seconds("scd2_hist_merge", series="depth", depth=depths[0]))
    unchanged = [r for r in results if r.get("series") == "rate" and r["changed"] == 0]
    if unchanged:
        summary["no_change_commits"] = next(r["commits"] for r in unchanged if r["contender"] == "scd2_hist_merge")
        summary["no_change_over_lower_bound"] = ratio(seconds("scd2_hist_merge", series="rate", changed=0.0),
                                                      seconds("lower_bound", series="rate", changed=0.0))
    return summary


def markdown_table(results: list[dict]) -> str:
    """The results as the README's table."""
    lines = ["| series | contender | load | median s (min-max) | commits | files +/- | rows written |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        if "versions" in r:
            load = f"{r['events']:,} events onto {r['versions']:,} versions"
        elif "type2_changed" in r:
            load = f"N={r['keys']:,}, {r['type2_changed']:.0%} Type 2 and {r['type1_changed']:.0%} Type 1 changes"
        else:
            load = (f"N={r['keys']:,}, depth {r['depth']}, {r['changed']:.0%} changed, {r['deleted']:.0%} deleted, "
                    f"{r['new']:.0%} new")
        lines.append(f"| {r['series']} | {r['contender']} | {load} | {r['seconds_median']:.2f} "
                     f"({r['seconds_min']:.2f}-{r['seconds_max']:.2f}) | {r['commits']} | "
                     f"{r['files_added']}/{r['files_removed']} | {r['rows_written']:,} |")
    return "\n".join(lines)


def chart(results: list[dict], path: Path) -> None:
    """Time against N (one line per contender), and against the change rate."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (by_size, by_rate) = plt.subplots(1, 2, figsize=(12, 4.5))
    # one colour per contender in both charts
    colours = {name: f"C{i}" for i, name in enumerate(dict.fromkeys(r["contender"] for r in results))}
    for series, axis, x in (("size", by_size, "keys"), ("rate", by_rate, "changed")):
        rows = [r for r in results if r.get("series") == series]
        for contender in dict.fromkeys(r["contender"] for r in rows):
            points = sorted((r[x], r["seconds_median"]) for r in rows if r["contender"] == contender)
            axis.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=contender,
                      color=colours[contender])
        axis.set_ylabel("wall time of the load, s (median)")
        axis.grid(True, alpha=0.3)
    by_size.set_xscale("log")
    by_size.set_yscale("log")
    by_size.set_xlabel("keys (N); 10% changed, 1% deleted, 1% new; depth 1")
    by_size.set_title("one load against N")
    by_rate.set_xlabel("fraction of keys changed (1% deleted and 1% new when > 0)")
    by_rate.set_title("one load against the change rate")
    by_size.legend(fontsize=8)
    by_rate.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
