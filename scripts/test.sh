#!/usr/bin/env bash
# The whole test suite: set up (idempotent), then pytest (unit and functional
# tests, a SparkSession in each of two processes; the demo test lints the generated
# SQL; the cluster tests in a third process beside them), sqlfluff over the models, and the
# dbt-checkpoint checks. Fails if any of them fails. Extra arguments go to pytest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$HISTORIZE_HOME"

status=0
step() {
  local name="$1"; shift
  printf '\n== %s\n' "$name"
  if "$@"; then printf '== %s: ok\n' "$name"; else printf '== %s: FAILED\n' "$name"; status=1; fi
}

# Three workers: the embedded Spark's tests in two (a JVM each), the cluster's in the
# third (their Spark runs in the cluster's JVMs); conftest.py schedules them so.
step "pytest" python -m pytest --numprocesses 3 --durations=10 "$@"
step "sqlfluff" sqlfluff lint models
step "dbt-checkpoint checks" python -m historize_tools.checks
exit "$status"
