"""The benchmark's command line: which cases each mode runs, and where its results go."""
import pytest

from historize_tools import dbt_runner as dbt
from historize_tools.bench.__main__ import RUNNABLE, parse_args


def test_targets_runs_exactly_the_cases_the_targets_are_set_on():
    args = parse_args(["--targets"])
    # the target table: scd2_hist against the snapshot, PySpark and the lower bound at 10^4,
    # 10^5 and 10^6; 20 small models of 1,000 keys; fivetran_history and scd_type6 against
    # their jobs; the load that changes nothing (rate 0) at the series' N
    assert args.series.split(",") == ["size", "small_models", "fivetran", "scd_type6", "rate"]
    assert args.keys == "10000,100000,1000000"
    assert args.rates == "0"
    assert (args.small_models, args.small_keys, args.series_keys) == (20, 1000, 100_000)
    assert (args.fivetran_versions, args.fivetran_events, args.type6_keys) == (1_000_000, 100_000, 100_000)
    assert (args.repeat, args.repeat_large) == (5, 3)
    assert args.output == dbt.ROOT / "bench" / "results" / "tmp" / "targets.json"


def test_the_full_run_writes_the_reference_results_and_quick_its_own():
    full = parse_args([])
    assert full.series.split(",") == list(RUNNABLE)
    assert full.rates == "0,0.01,0.1,0.5"
    assert full.output == dbt.ROOT / "bench" / "results.json"
    quick = parse_args(["--quick", "--targets"])
    assert quick.series.split(",") == ["size", "small_models", "fivetran", "scd_type6", "rate"]
    assert (quick.keys, quick.rates, quick.repeat, quick.small_models) == ("1000", "0", 1, 2)
    assert quick.output == dbt.ROOT / "bench" / "results" / "tmp" / "quick.json"
    assert parse_args(["--targets", "--output", "/tmp/t.json"]).output.as_posix() == "/tmp/t.json"


def test_an_unknown_series_is_refused_by_name(capsys):
    with pytest.raises(SystemExit) as exited:
        parse_args(["--series", "size,deepest"])
    assert exited.value.code == 2
    assert ("unknown series ['deepest']; known: size, small_models, fivetran, scd_type6, backfill, rate, depth, deep, "
            "changes"
            in capsys.readouterr().err)


def test_a_page_is_rendered_only_from_a_results_file(capsys):
    with pytest.raises(SystemExit) as exited:
        parse_args(["--page", "docs/benchmark.md"])
    assert exited.value.code == 2
    assert "--page needs --table: the results file whose tables it renders" in capsys.readouterr().err
