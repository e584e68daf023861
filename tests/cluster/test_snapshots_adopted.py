"""Real dbt snapshots taken over by scd2_hist, on the cluster: the scenario of
tests/snapshot_adoption.py (on the embedded Spark: tests/lanes/test_snapshots_adopted_embedded.py)."""
from __future__ import annotations

from snapshot_adoption import adopt_real_snapshots


def test_a_dbt_snapshot_adopted_gives_the_history_of_loading_it_from_the_start(cluster_project):
    adopt_real_snapshots(cluster_project)
