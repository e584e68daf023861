"""pytest-xdist's scheduling of the tests by Spark: under pytest-xdist a scope goes to one
worker as a whole. The embedded Spark's tests (tests/functional) take the longest, in one
worker; the quickstart's test (tests/user) runs its Spark in a process of its own, and the
unit tests run none, so they go with the cluster's tests in the other worker.

The cluster's worker ends its tests minutes before the embedded one, which alone keeps only
part of the machine's two cores busy (one dbt thread, one JVM). So a share of the embedded
Spark's tests, the files of SECOND_SPARK, is a scope of its own, given to whichever worker
runs out of work first (the cluster's): it starts an embedded Spark of its own for them, and
the two workers end together."""
from __future__ import annotations

from pathlib import Path

from xdist.scheduler import LoadScopeScheduling

# The folders and the scope each belongs to.
SPARK_SCOPES = {"functional": "functional", "cluster": "cluster", "user": "cluster", "unit": "cluster"}
# The embedded Spark's test files run after the cluster's tests, in that worker, and their scope:
# about a fifth of the embedded worker's time.
SECOND_SPARK = frozenset({"test_bitemporal_properties.py", "test_bitemporal_snapshots.py", "test_point_in_time.py"})
SECOND_SPARK_SCOPE = "functional, second Spark"


class BySparkFolder(LoadScopeScheduling):
    """Scheduling by scope, as SPARK_SCOPES maps folders to scopes: the embedded Spark's
    tests share one SparkSession in one worker, and the cluster's (with tests/user and
    tests/unit) run beside them in another; SECOND_SPARK's files go last, to the worker
    that asks for work first; any other test goes anywhere."""

    def _split_scope(self, nodeid: str) -> str:
        path = Path(nodeid.split("::")[0])
        if path.parent.name == "functional" and path.name in SECOND_SPARK:
            return SECOND_SPARK_SCOPE
        return SPARK_SCOPES.get(path.parent.name, nodeid)

    def _assign_work_unit(self, node) -> None:
        """The next scope for `node`: SECOND_SPARK's only when no other is left."""
        if SECOND_SPARK_SCOPE in self.workqueue and len(self.workqueue) > 1:
            self.workqueue.move_to_end(SECOND_SPARK_SCOPE)
        super()._assign_work_unit(node)
