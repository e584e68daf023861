"""Runs a user's dbt commands in this process, as the quickstart's reader runs them
in a shell, but with one JVM for all of them: `python quickstart_runner.py STEPS OUT`.

STEPS is a JSON list of steps, each ["write", path, text] (a file of the project,
written with its folder) or ["dbt", [args...]] (one dbt command, in the current folder, with
the profile found there). OUT receives, per dbt command, whether it succeeded, its
error, the table each `dbt show` printed, and the nodes `dbt ls` listed."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from dbt.cli.main import dbtRunner


def main(steps_path: str, out_path: str) -> int:
    steps = json.loads(Path(steps_path).read_text())
    results = []
    for step in steps:
        if step[0] == "write":  # as a user's editor writes a file, its folder with it
            Path(step[1]).parent.mkdir(parents=True, exist_ok=True)
            Path(step[1]).write_text(step[2])
            continue
        printed: list[str] = []
        runner = dbtRunner(callbacks=[lambda event: printed.append(event.data.preview)
                                      if event.info.name == "ShowNode" else None])
        outcome = runner.invoke(step[1])
        listed = outcome.result if step[1][0] == "ls" and outcome.success else None
        results.append({"args": step[1], "success": outcome.success, "printed": printed, "listed": listed,
                        "error": None if outcome.exception is None else str(outcome.exception)})
        Path(out_path).write_text(json.dumps(results, indent=1))
        if not outcome.success:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
