#!/usr/bin/env bash
# A Spark cluster on this machine: a standalone master, a worker and a Spark
# Thrift Server (dbt's `thrift` target), from the pyspark wheel and Delta's jars.
#   ./scripts/cluster.sh start [--small-tables]|status|stop
# Settings: see `python -m historize_tools.cluster` (HISTORIZE_THRIFT_PORT, ...).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$HISTORIZE_HOME"
exec python -m historize_tools.cluster "$@"
