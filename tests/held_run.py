"""Run A of the concurrency tests: a dbt command in a process of its own, each
model held right before its first write of its table (the first statement whose
source carries the concurrency guard, or its first MERGE: an scd2_hist load
that is its MERGE alone has no guard), after every read the load makes; or,
with --before, right before its first statement that starts with PREFIX.

    python tests/held_run.py HOLD_DIR [--before PREFIX] DBT_ARGUMENT...

When a model reaches that statement, the file HOLD_DIR/<model>.held appears and
the model waits, its statement not yet sent, until HOLD_DIR/release exists.
Exits 0 when dbt succeeded, 1 when not."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from dbt.cli.main import dbtRunner

from historize_tools import dbt_runner

# The column of the guard's one-row relation (macros/common/guard.sql).
GUARD_COLUMN = "_historize_unchanged"
HOLD_LIMIT_SECONDS = 300


def main(hold_dir: Path, arguments: list[str]) -> int:
    held: set[str] = set()
    before = None
    if arguments[0] == "--before":
        before, arguments = arguments[1].lower(), arguments[2:]

    def holds_here(sql: str) -> bool:
        statement = sql.split("*/", 1)[-1].strip().lower()
        if before is None:
            return GUARD_COLUMN in sql or statement.startswith("merge into")
        return statement.startswith(before)

    def hold(event) -> None:
        if event.info.name != "SQLQuery" or not holds_here(event.data.sql):
            return
        model = event.data.node_info.unique_id.rsplit(".", 1)[-1]
        if model in held:
            return
        held.add(model)
        (hold_dir / f"{model}.held").touch()
        deadline = time.monotonic() + HOLD_LIMIT_SECONDS
        while not (hold_dir / "release").exists() and time.monotonic() < deadline:
            time.sleep(0.1)

    dbt_runner.refine_thrift_polls()  # every failed statement read with its error
    return 0 if dbtRunner(callbacks=[hold]).invoke(arguments).success else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2:]))
