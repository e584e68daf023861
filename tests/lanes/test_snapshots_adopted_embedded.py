"""Real dbt snapshots taken over by scd2_hist, on the embedded Spark: the scenario of
tests/snapshot_adoption.py with every strategy and every hard_deletes mode (six
snapshots), in the dbt-1.12 lane (./scripts/lanes.sh dbt-1.12), whose dbt 1.12 makes the
snapshots; the test suite runs it with three on the cluster
(tests/cluster/test_snapshots_adopted.py)."""
from __future__ import annotations

from snapshot_adoption import EVERY_PAIR, adopt_real_snapshots


def test_a_dbt_snapshot_adopted_on_the_embedded_spark_gives_the_history_of_loading_it_from_the_start(project):
    adopt_real_snapshots(project, EVERY_PAIR)
