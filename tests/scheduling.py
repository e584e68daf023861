"""pytest-xdist's scheduling of the tests by Spark: under pytest-xdist a scope goes to one
worker as a whole. The embedded Spark's tests (tests/functional) take the longest, in one
worker; the quickstart's test (tests/user) runs its Spark in a process of its own, and the
unit tests run none, so they go with the cluster's tests, whose worker mostly waits."""
from __future__ import annotations

from pathlib import Path

from xdist.scheduler import LoadScopeScheduling

# The folders and the scope each belongs to.
SPARK_SCOPES = {"functional": "functional", "cluster": "cluster", "user": "cluster", "unit": "cluster"}


class BySparkFolder(LoadScopeScheduling):
    """Scheduling by scope, as SPARK_SCOPES maps folders to scopes: the embedded Spark's
    tests share one SparkSession in one worker, and the cluster's (with tests/user and
    tests/unit) run beside them in another; any other test goes anywhere."""

    def _split_scope(self, nodeid: str) -> str:
        folder = Path(nodeid.split("::")[0]).parent.name
        return SPARK_SCOPES.get(folder, nodeid)
