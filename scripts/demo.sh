#!/usr/bin/env bash
# The main job: set up (idempotent), then build the demo's loads in order on
# the embedded Spark + Delta and print the history tables.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$HISTORIZE_HOME"
exec python -m historize_tools.demo "$@"
