#!/usr/bin/env bash
# Creates or reuses .venv, installs the pinned dependencies and fetches Delta's
# jars (and the Hive jar a Thrift server needs) from Maven Central into .jars/.
# Idempotent: a second call does nothing.
# Sourced by scripts/demo.sh and scripts/test.sh; leaves HISTORIZE_HOME,
# DBT_PROFILES_DIR and PATH set for the caller.
set -euo pipefail

HISTORIZE_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export HISTORIZE_HOME
export DBT_PROFILES_DIR="$HISTORIZE_HOME/profiles"
export DBT_SEND_ANONYMOUS_USAGE_STATS=false
DELTA_VERSION=4.4.0
# Spark 4's distribution leaves out hive-llap-common, which Hive's function registry
# (the Hive version pyspark bundles) loads; a Spark Thrift Server initialises that
# registry when it closes some sessions, and fails the close without it.
HIVE_VERSION=2.3.10
JAR_ARTIFACTS=("io.delta:delta-spark_4.2_2.13:$DELTA_VERSION" "io.delta:delta-storage:$DELTA_VERSION"
               "org.apache.hive:hive-llap-common:$HIVE_VERSION")

log() { printf '[setup] %s\n' "$*" >&2; }

find_python() {
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 \
      && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
      command -v "$candidate"; return 0
    fi
  done
  log "Python 3.11 is required and was not found on PATH"; return 1
}

ensure_venv() {
  local venv="$HISTORIZE_HOME/.venv" stamp want
  if [ ! -x "$venv/bin/python" ]; then
    log "creating virtual environment in .venv"
    "$(find_python)" -m venv "$venv"
  fi
  stamp="$venv/.historize-deps"
  want="$(sha256sum "$HISTORIZE_HOME/pyproject.toml" | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "installing pinned dependencies (first run: a few minutes)"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    # with the extras the tests, the benchmark and the Dagster example's test need
    "$venv/bin/python" -m pip install --quiet -e "$HISTORIZE_HOME[test,bench,dagster]"
    echo "$want" > "$stamp"
  fi
  export PATH="$venv/bin:$PATH"
}

ensure_jars() {
  local dir="$HISTORIZE_HOME/.jars" artifact name version jar
  mkdir -p "$dir"
  for artifact in "${JAR_ARTIFACTS[@]}"; do
    IFS=: read -r _ name version <<<"$artifact"
    jar="$dir/$name-$version.jar"
    [ -s "$jar" ] && continue
    command -v mvn >/dev/null 2>&1 || { log "Maven (mvn) is required to fetch $artifact"; return 1; }
    log "fetching $artifact from Maven Central"
    mvn --batch-mode --quiet -Dstyle.color=never \
      org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy \
      -Dartifact="$artifact" -DoutputDirectory="$dir" >&2
    [ -s "$jar" ] || { log "$jar is missing after the download"; return 1; }
  done
}

ensure_java() {
  command -v java >/dev/null 2>&1 || { log "Java 17 or newer is required by Spark 4"; return 1; }
}

ensure_java
ensure_venv
ensure_jars
