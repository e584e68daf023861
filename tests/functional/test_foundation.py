"""The project builds on the embedded Spark, and its models are Delta tables."""
from __future__ import annotations


def test_table_model_is_a_delta_table(project):
    project.model("plain", "{{ config(materialized='table') }} select 1 as id, 'a' as name")
    project.run("run")
    detail = dict(zip(["format"], project.sql(f"describe detail {project.schema}.plain")[0]))
    assert detail["format"] == "delta"
    assert project.table("plain") == [(1, "a")]
