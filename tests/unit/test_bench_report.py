"""The benchmark's report: of the `changes` and `adopt` series, the summary's ratios, the
page's table rows and the chart, from results written by hand; the benchmark page's tables,
rendered from the results file it shows."""
import json
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from historize_tools import dbt_runner as dbt
from historize_tools.bench.report import chart, markdown_table, page_with_tables, summarize


def changes_result(contender: str, keys: int, median: float) -> dict:
    return {"series": "changes", "contender": contender, "keys": keys, "depth": 5, "changed_keys": 10_000,
            "seconds_median": median, "seconds_min": median - 1, "seconds_max": median + 1, "repeat": 3,
            "commits": 1, "files_added": 4, "files_removed": 0, "rows_written": 19_846}


CHANGES = [changes_result(contender, keys, median)
           for keys, medians in ((100_000, (2.0, 8.0, 6.0, 4.0, 5.0)), (10_000_000, (3.0, 12.0, 9.6, 120.0, 300.0)))
           for contender, median in zip(("scd2_hist_events_empty_batch", "scd2_hist_events", "scd2_hist_cdf",
                                         "scd2_hist", "dbt_snapshot"), medians)]


def test_the_changes_summary_gives_each_feed_against_both_snapshots_and_its_growth():
    assert summarize(CHANGES)["changes"] == {
        "keys": [100_000, 10_000_000],
        "events_empty_batch_seconds": [2.0, 3.0],
        "events_over_snapshot_load": [2.0, 0.1],  # 8 / 4, 12 / 120
        "events_over_dbt_snapshot": [1.6, 0.04],  # 8 / 5, 12 / 300
        "events_largest_over_smallest": 1.5,  # 12 / 8
        "cdf_over_snapshot_load": [1.5, 0.08],  # 6 / 4, 9.6 / 120
        "cdf_over_dbt_snapshot": [1.2, 0.03],  # 6 / 5, 9.6 / 300 = 0.032
        "cdf_largest_over_smallest": 1.6,  # 9.6 / 6
    }


ADOPT = {"series": "adopt", "contender": "scd2_hist_adopt", "keys": 1_000_000, "depth": 5, "rows": 5_000_000,
         "seconds_median": 52.84, "seconds_min": 52.43, "seconds_max": 62.76, "commits": 1, "files_added": 20,
         "files_removed": 0, "rows_written": 5_000_000}


def test_the_table_names_the_change_and_the_adopted_snapshot():
    lines = markdown_table([CHANGES[1], ADOPT]).splitlines()
    assert lines[2:] == [
        "| changes | scd2_hist_events | N=100,000, depth 5, 10,000 keys changed | 8.00 (7.00-9.00) | 1 | 4/0 | 19,846 |",
        "| adopt | scd2_hist_adopt | a dbt snapshot of N=1,000,000, depth 5 (5,000,000 rows) | 52.84 (52.43-62.76) | 1 "
        "| 20/0 | 5,000,000 |",
    ]


def test_the_changes_chart_draws_each_contender_against_n(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    drawn = []
    saved = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda figure, path, **kw: (drawn.append(figure), saved(figure, path, **kw)))
    assert chart(CHANGES, tmp_path / "changes.png")
    assert (tmp_path / "changes.png").stat().st_size > 0
    [axis] = drawn[0].axes
    assert axis.get_title() == "change events: one load against N"
    assert {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in axis.lines} == {
        "scd2_hist_events_empty_batch": ([100_000, 10_000_000], [2.0, 3.0]),
        "scd2_hist_events": ([100_000, 10_000_000], [8.0, 12.0]),
        "scd2_hist_cdf": ([100_000, 10_000_000], [6.0, 9.6]),
        "scd2_hist": ([100_000, 10_000_000], [4.0, 120.0]),
        "dbt_snapshot": ([100_000, 10_000_000], [5.0, 300.0]),
    }


def test_a_run_of_the_adopt_series_alone_has_no_chart(tmp_path: Path):
    assert not chart([ADOPT], tmp_path / "adopt.png")
    assert not (tmp_path / "adopt.png").exists()


def test_the_benchmark_page_shows_the_tables_of_its_results_file():
    page = (dbt.ROOT / "docs" / "benchmark.md").read_text()
    saved = json.loads((dbt.ROOT / "bench" / "results.json").read_text())
    # python -m historize_tools.bench --table bench/results.json --page docs/benchmark.md
    assert page_with_tables(page, saved) == page
    assert page.count("| scd2_hist | `merge into historize_bench.scd2_hist as hist using") == 1


def test_a_page_without_both_markers_is_refused():
    with pytest.raises(ValueError, match=r"the page's table markers name \['results'\]; expected \['profile', 'results'\]"):
        page_with_tables("<!-- bench: results -->\n| old |\n<!-- bench: end -->\n",
                         {"results": [], "summary": {"keys": 10}})


def dv_result(contender: str, keys: int, median: float, rows_written: int) -> dict:
    return {"series": "deletion_vectors", "contender": contender, "keys": keys, "depth": 1, "changed": 0.1,
            "deleted": 0.01, "new": 0.01, "seconds_median": median, "seconds_min": median - 0.5,
            "seconds_max": median + 0.5, "repeat": 5, "commits": 1, "files_added": 2, "files_removed": 0,
            "rows_written": rows_written}


DELETION_VECTORS = [dv_result(contender, keys, median, written)
                    for keys, loads in ((10_000, ((3.6, 2_120), (3.0, 11_059), (2.4, 11_059))),
                                        (100_000, ((5.0, 22_104), (4.0, 111_062), (5.0, 111_062))))
                    for contender, (median, written) in zip(("dv_hist", "no_dv_hist", "dbt_snapshot"), loads)]


def test_the_deletion_vectors_summary_gives_with_over_without_and_the_rows_each_wrote():
    assert summarize(DELETION_VECTORS)["deletion_vectors"] == {
        "keys": [10_000, 100_000],
        "with_over_without": [1.2, 1.25],  # 3.6 / 3.0, 5.0 / 4.0
        "with_over_snapshot": [1.5, 1.0],  # 3.6 / 2.4, 5.0 / 5.0
        "without_over_snapshot": [1.25, 0.8],  # 3.0 / 2.4, 4.0 / 5.0
        "rows_written_with_and_without": [[2_120, 11_059], [22_104, 111_062]],
    }
    assert markdown_table(DELETION_VECTORS[:1]).splitlines()[2] == (
        "| deletion_vectors | dv_hist | N=10,000, depth 1, 10% changed, 1% deleted, 1% new | 3.60 (3.10-4.10) | 1 "
        "| 2/0 | 2,120 |")
