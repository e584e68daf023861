#!/usr/bin/env bash
# The benchmark: set up (idempotent), then run scripts/bench.py with these
# arguments (--quick: tiny sizes, the harness only).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$HISTORIZE_HOME"
exec python scripts/bench.py "$@"
