#!/usr/bin/env bash
# The benchmark: set up (idempotent), then run python -m historize_tools.bench with these
# arguments (--quick: tiny sizes, the harness only).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$HISTORIZE_HOME"
exec python -m historize_tools.bench "$@"
