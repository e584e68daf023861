#!/usr/bin/env bash
# The dbt lanes beside the main stack, each in a virtual environment of its own
# (.venv-<lane>, from scripts/lanes/<lane>.txt; idempotent like setup.sh):
#   dbt-1.12    dbt-core 1.12 with dbt-spark 1.11: the unit tests, each materialization's
#               main scenarios, the invariant tests, the point-in-time macros, real dbt
#               snapshots adopted and the README's quickstart, on the embedded Spark.
#   databricks  dbt-databricks 1.12.7: a user project on a databricks profile parses, the
#               materializations' SQL renders on the databricks adapter, the generic tests
#               and point-in-time models compile, and every kind's loads run through
#               dbt-databricks's connection answered by a local SparkSession (no workspace
#               is reached), each statement of a kind a SQL warehouse accepts.
#   airflow     Apache Airflow 3 with astronomer-cosmos: the example DAG (examples/airflow)
#               run with dag.test() for two months on the embedded Spark, a killed load retried.
# Usage: ./scripts/lanes.sh [LANE [pytest arguments]]; without a lane, all. Fails if any fails.
#        ./scripts/lanes.sh --install: only create or update every lane's environment (CI does
#        this while the suite runs: it is mostly downloads).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"   # Delta's jars, HISTORIZE_HOME, DBT_PROFILES_DIR
cd "$HISTORIZE_HOME"

STAND_IN="$HISTORIZE_HOME/scripts/lanes/dbt-core-experimental-parser-stand-in"

lane_venv() {
  local lane="$1" venv="$HISTORIZE_HOME/.venv-$1" stamp want
  [ -x "$venv/bin/python" ] || { log "creating .venv-$lane"; "$(find_python)" -m venv "$venv"; }
  stamp="$venv/.historize-deps"
  want="$(cat "scripts/lanes/$lane.txt" "$STAND_IN/pyproject.toml" | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "installing the $lane lane's packages into .venv-$lane"
    # dbt-core 1.12 requires dbt-core-experimental-parser: its empty stand-in first (see its
    # pyproject.toml). The stamp only after both installs (set -e does not hold where a lane
    # runs as a condition).
    "$venv/bin/python" -m pip install --quiet --upgrade pip \
      && "$venv/bin/python" -m pip install --quiet "$STAND_IN" -r "scripts/lanes/$lane.txt" \
      && echo "$want" > "$stamp" \
      || { log "installing the $lane lane's packages failed"; return 1; }
  fi
  echo "$venv"
}

run_lane() {
  local lane="$1"; shift
  local venv; venv="$(lane_venv "$lane")" || return 1
  printf '\n== lane %s: %s\n' "$lane" "$("$venv/bin/python" -m pip list --format=freeze 2>/dev/null \
    | grep -E '^(dbt-core|dbt-spark|dbt-databricks|pyspark)==' | tr '\n' ' ')"
  case "$lane" in
    dbt-1.12)
      # two workers, as ./scripts/test.sh (tests/scheduling.py): tests/functional in one, the
      # quickstart (its own Spark) and the unit tests in the other; tests/lanes in either
      PYTHONPATH="$HISTORIZE_HOME" "$venv/bin/python" -m pytest -p no:cacheprovider --numprocesses 2 "$@" \
        tests/unit/test_scd2_hist_sql.py \
        tests/functional/test_scd2_hist.py tests/functional/test_scd_type6.py tests/functional/test_fivetran_history.py \
        tests/functional/test_invariants.py tests/functional/test_point_in_time.py \
        tests/functional/test_adopt_snapshots.py tests/lanes tests/user ;;
    databricks)
      HISTORIZE_TARGET=databricks PYTHONPATH="$HISTORIZE_HOME" "$venv/bin/python" -m pytest -p no:cacheprovider "$@" \
        tests/unit/test_scd2_hist_sql.py tests/unit/test_statements_sql.py tests/databricks ;;
    airflow)
      PYTHONPATH="$HISTORIZE_HOME" "$venv/bin/python" -m pytest -p no:cacheprovider "$@" tests/airflow ;;
    *) log "no lane $lane (lanes: dbt-1.12, databricks, airflow)"; return 2 ;;
  esac
}

LANES=(dbt-1.12 databricks airflow)
status=0
if [ "${1:-}" = "--install" ]; then
  for lane in "${LANES[@]}"; do lane_venv "$lane" >/dev/null; done
elif [ $# -gt 0 ]; then
  lane="$1"; shift
  run_lane "$lane" "$@" || status=$?
else
  for lane in "${LANES[@]}"; do
    if run_lane "$lane"; then printf '== lane %s: ok\n' "$lane"; else printf '== lane %s: FAILED\n' "$lane"; status=1; fi
  done
fi
exit "$status"
