#!/usr/bin/env bash
# The whole test suite: set up (idempotent), then pytest (unit, functional and
# cluster tests in two processes, below; the demo test lints the generated SQL),
# sqlfluff over the models, and the dbt-checkpoint checks. Fails if any of them fails. Extra arguments go to pytest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$HISTORIZE_HOME"

status=0
step() {
  local name="$1"; shift
  printf '\n== %s\n' "$name"
  if "$@"; then printf '== %s: ok\n' "$name"; else printf '== %s: FAILED\n' "$name"; status=1; fi
}

# Two workers: the embedded Spark's tests in one (one JVM), the cluster's in the
# other, which then runs a share of the embedded Spark's tests in a JVM of its own;
# tests/scheduling.py schedules them so.
step "pytest" python -m pytest --numprocesses 2 --durations=10 "$@"
step "sqlfluff" sqlfluff lint models
step "dbt-checkpoint checks" python -m historize_tools.checks
exit "$status"
