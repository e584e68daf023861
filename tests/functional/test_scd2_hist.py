"""scd2_hist: each rule of the materialization, for both strategies, against
tables computed by hand. A dbt run costs seconds on Spark, so each test walks a
whole sequence of loads and checks every rule it passes through."""
from __future__ import annotations

import datetime as dt
import re

import pytest

from projects import load_reports, report
from reference import Scd2Model, hash_key, row_hash

STRATEGIES = ("merge", "ordered")
COLUMNS = "id int, name string, price int"
T1, T2, T2B, T3 = (dt.datetime(2026, 1, 1, 6), dt.datetime(2026, 1, 2, 6), dt.datetime(2026, 1, 2, 18), dt.datetime(2026, 1, 3, 6))
SHOWN = "id, name, price, version_started_at, version_ended_at, version_state, load_run_id"
ORDER = "id, version_started_at"


def hist_model(project, name, strategy, unique_key="'id'", source="snapshot", options=""):
    project.model(
        name,
        f"""
        {{{{ config(materialized='scd2_hist', unique_key={unique_key}, strategy='{strategy}'{options}) }}}}
        select * from {{{{ target.schema }}}}.{source}
        """,
    )


def setup_models(project, **kwargs):
    for strategy in STRATEGIES:
        hist_model(project, f"hist_{strategy}", strategy, **kwargs)


def variables(at, run_id):
    return {"load_timestamp": at.strftime("%Y-%m-%d %H:%M:%S.%f"), "load_run_id": run_id}


def load(project, rows, at, run_id, columns=COLUMNS, *flags):
    project.create_source("snapshot", columns, rows)
    return project.run("run", *flags, variables=variables(at, run_id))


def load_fails(project, rows, at, run_id, columns=COLUMNS):
    project.create_source("snapshot", columns, rows)
    return project.fail("run", variables=variables(at, run_id))


def tables(project, columns=SHOWN, order_by=ORDER, prefix="hist"):
    return {s: project.table(f"{prefix}_{s}", columns, order_by) for s in STRATEGIES}


def state_of(project):
    """Everything a failed run must leave unchanged: rows and Delta versions."""
    return {s: (project.table(f"hist_{s}", "*", ORDER), project.commits(f"hist_{s}")) for s in STRATEGIES}


def partition_columns(project, name):
    return project.spark_row(f"describe detail {project.schema}.{name}")["partitionColumns"]


def new_operations(project, name, since):
    history = project.history(name)
    return sorted(h["operation"] for h in history[: len(history) - since])


LOAD_1 = [(1, "a", 10), (2, "b", 20), (3, "c", 30), (4, "d", None)]
LOAD_2 = [(1, "a", 10), (2, "b", 25), (4, "d", None), (5, "e", 50)]
LOAD_3 = [(1, "a", 10), (2, "b", 25), (3, "c", 31), (4, "d", 40)]
EXPECTED_AFTER_2 = [
    (1, "a", 10, T1, None, "new", "r1"),
    (2, "b", 20, T1, T2, "changed", "r2"),
    (2, "b", 25, T2, None, "changed", "r2"),
    (3, "c", 30, T1, T2, "deleted", "r2"),
    (4, "d", None, T1, None, "new", "r1"),
    (5, "e", 50, T2, None, "new", "r2"),
]
EXPECTED_AFTER_3 = [
    (1, "a", 10, T1, None, "new", "r1"),
    (2, "b", 20, T1, T2, "changed", "r2"),
    (2, "b", 25, T2, None, "changed", "r2"),
    (3, "c", 30, T1, T2, "deleted", "r2"),
    (3, "c", 31, T3, None, "new", "r3"),  # a deleted key comes back
    (4, "d", None, T1, T3, "changed", "r3"),  # NULL -> value is a change
    (4, "d", 40, T3, None, "changed", "r3"),
    (5, "e", 50, T2, T3, "deleted", "r3"),
]


def test_load_sequence_with_reruns_and_full_refresh(project):
    setup_models(project)

    # First load: a Delta table with column mapping, columns in order, every key new.
    result = load(project, LOAD_1, T1, "r1")
    assert load_reports(result) == {f"hist_{s}": report(4, 0, 0, f"created {project.schema}.hist_{s}")
                                    for s in STRATEGIES}
    for strategy in STRATEGIES:
        name = f"hist_{strategy}"
        assert [(r[0], r[1]) for r in project.columns(name)] == [
            (f"{name}_key", "binary"), ("id", "int"), ("name", "string"), ("price", "int"),
            ("row_hash", "bigint"), ("version_started_at", "timestamp"), ("version_ended_at", "timestamp"),
            ("version_state", "string"), ("load_run_id", "string"), ("loaded_at", "timestamp"),
        ]
        assert project.sql(f"describe detail {project.schema}.{name}")[0][0] == "delta"
        assert partition_columns(project, name) == ["version_ended_at"]
        assert dict(project.sql(f"show tblproperties {project.schema}.{name}"))["delta.columnMapping.mode"] == "name"
    assert tables(project) == {s: [(i, n, p, T1, None, "new", "r1") for i, n, p in LOAD_1] for s in STRATEGIES}

    # Second load: changed, deleted, unchanged and new keys; merge is one commit, ordered one per step.
    commits = {s: project.commits(f"hist_{s}") for s in STRATEGIES}
    result = load(project, LOAD_2, T2, "r2")
    assert tables(project) == {s: EXPECTED_AFTER_2 for s in STRATEGIES}
    assert load_reports(result) == {f"hist_{s}": report(1, 1, 1, s) for s in STRATEGIES}  # keys 5 new, 2 changed, 3 deleted
    assert new_operations(project, "hist_merge", commits["merge"]) == ["MERGE"]
    assert new_operations(project, "hist_ordered", commits["ordered"]) == ["MERGE", "MERGE", "WRITE", "WRITE"]

    # The same load again changes nothing; new variables over the same data write nothing.
    before = state_of(project)
    result = load(project, LOAD_2, T2, "r2")
    assert state_of(project) == before
    assert load_reports(result) == {f"hist_{s}": report(0, 0, 0, s) for s in STRATEGIES}
    load(project, LOAD_2, T2B, "r2b")
    assert state_of(project) == before

    # Third load, asked as a full refresh: history is kept and the load is incremental.
    result = load(project, LOAD_3, T3, "r3", COLUMNS, "--full-refresh")
    assert tables(project) == {s: EXPECTED_AFTER_3 for s in STRATEGIES}
    assert load_reports(result) == {f"hist_{s}": report(1, 1, 1, s) for s in STRATEGIES}  # keys 3 back (new), 4 changed, 5 deleted
    for strategy in STRATEGIES:
        rows = project.table(f"hist_{strategy}", f"hist_{strategy}_key, id, name, price, version_started_at, row_hash, loaded_at", ORDER)
        for key, id_, name, price, started, row_hash_, loaded_at in rows:
            assert key == hash_key([id_, started])
            assert row_hash_ == row_hash({"name": name, "price": price})
            assert loaded_at is not None


# Four models loaded at once, each from LOAD_1 to its own snapshot: (rows, (new, changed, deleted)).
THREADED_LOADS = {
    "hist_mixed": (LOAD_2, (1, 1, 1)),
    "hist_changed": (LOAD_3, (0, 3, 0)),  # keys 2, 3 and 4 change
    "hist_deleted": ([(1, "a", 10)], (0, 0, 3)),
    "hist_new": (LOAD_1 + [(6, "f", 60), (7, "g", 70), (8, "h", 80)], (3, 0, 0)),
}


def test_a_merge_reports_changed_and_deleted_keys_from_its_own_counts(project):
    """A MERGE that both updates and inserts rows may have changed keys (one row updated, one
    inserted each), or deleted and new ones (a deleted key's version removed and inserted
    closed, a new key's inserted): Delta's counts of the MERGE tell them apart, and the load
    reads nothing after it, neither the table's commits nor its rows."""
    hist_model(project, "hist_merge", "merge")

    def after_its_merge(*run_args, variables):
        """The run, and the first word of each statement the load sent after its MERGE."""
        sent: list[str] = []
        result = project.run(*run_args, variables=variables, callbacks=[
            lambda event: sent.append(event.data.sql.split("*/", 1)[-1].split()[0])  # after dbt's query comment
            if event.info.name == "SQLQuery" else None])
        return result, sent[sent.index("merge") + 1:]

    load(project, [(1, "a", 1), (2, "b", 2), (3, "c", 3), (4, "d", 4)], T1, "r1")
    project.create_source("snapshot", COLUMNS, [(1, "A", 1), (2, "B", 2), (3, "c", 3), (4, "d", 4)])
    result, after = after_its_merge("run", variables=variables(T2, "r2"))
    assert load_reports(result) == {"hist_merge": report(0, 2, 0, "merge")}  # 2 rows updated, 2 inserted
    assert after == ["reset", "drop"]  # the write setting restored, the staged select's view dropped
    project.create_source("snapshot", COLUMNS, [(1, "A", 1), (2, "B", 2), (5, "e", 5), (6, "f", 6)])
    result, after = after_its_merge("run", variables=variables(T3, "r3"))
    assert load_reports(result) == {"hist_merge": report(2, 0, 2, "merge")}  # 2 rows deleted, 4 inserted
    assert after == ["reset", "drop"]
    assert project.table("hist_merge", "id, version_ended_at, version_state", ORDER) == [
        (1, T2, "changed"), (1, None, "changed"), (2, T2, "changed"), (2, None, "changed"),
        (3, T3, "deleted"), (4, T3, "deleted"), (5, None, "new"), (6, None, "new")]


def modelled_history(*loads):
    """The history the reference model builds from (rows, load_timestamp, load_run_id) loads."""
    model = Scd2Model()
    for rows, at, run_id in loads:
        model.load({(i,): {"name": n, "price": p} for i, n, p in rows}, at, run_id)
    rows = [(v.key[0], v.attributes["name"], v.attributes["price"], v.started_at, v.ended_at, v.state, v.load_run_id)
            for v in model.versions]
    return sorted(rows, key=lambda row: (row[0], row[3]))  # ORDER


def test_models_loaded_by_parallel_threads_each_get_their_own_history_and_report(project):
    """dbt's threads share the one Spark session: four MERGE loads at once, each
    with its own table, counts and commit."""
    for name in THREADED_LOADS:
        hist_model(project, name, "merge", source=f"snapshot_{name}")
        project.create_source(f"snapshot_{name}", COLUMNS, LOAD_1)
    project.run("run", "--threads", "4", variables=variables(T1, "r1"))
    for name, (rows, _) in THREADED_LOADS.items():
        project.create_source(f"snapshot_{name}", COLUMNS, rows)
    commits = {name: project.commits(name) for name in THREADED_LOADS}

    result = project.run("run", "--threads", "4", variables=variables(T2, "r2"))
    # the four loads ran at once: each began before any ended
    executed = [next(t for t in node_result.timing if t.name == "execute") for node_result in result.result.results]
    assert max(t.started_at for t in executed) < min(t.completed_at for t in executed)
    assert load_reports(result) == {name: report(*counts, "merge") for name, (_, counts) in THREADED_LOADS.items()}
    for name, (rows, _) in THREADED_LOADS.items():
        assert project.table(name, SHOWN, ORDER) == modelled_history((LOAD_1, T1, "r1"), (rows, T2, "r2")), name
        assert new_operations(project, name, commits[name]) == ["MERGE"]


def test_table_of_an_earlier_layout_is_rewritten_partitioned_keeping_its_history(project):
    hist_model(project, "hist_merge", "merge")
    load(project, LOAD_1, T1, "r1")
    load(project, LOAD_2, T2, "r2")
    table = f"{project.schema}.hist_merge"
    assert dict(project.sql(f"show tblproperties {table}"))["historize.partitioned_by"] == "version_ended_at"
    kept = {k: v for k, v in project.sql(f"show tblproperties {table}") if k != "historize.partitioned_by"
            and (k.startswith("historize.") or k in ("delta.columnMapping.mode", "delta.enableRowTracking"))}
    # The layout an earlier version built: the same table, not partitioned, no layout recorded.
    listed = ", ".join(f"'{k}' = '{v}'" for k, v in kept.items())
    project.sql(f"replace table {table} using delta tblproperties ({listed}) as select * from {table}")
    assert partition_columns(project, "hist_merge") == []
    before = project.commits("hist_merge")

    load(project, LOAD_3, T3, "r3")
    assert partition_columns(project, "hist_merge") == ["version_ended_at"]
    assert project.table("hist_merge", SHOWN, ORDER) == EXPECTED_AFTER_3
    assert new_operations(project, "hist_merge", before) == ["MERGE", "REPLACE TABLE AS SELECT"]
    properties = dict(project.sql(f"show tblproperties {table}"))
    assert {k: v for k, v in properties.items() if k in kept} == kept
    assert properties["historize.partitioned_by"] == "version_ended_at"
    # Time travel still reaches the versions written before the rewrite.
    assert project.sql(f"select {SHOWN} from {table} version as of {before - 1} order by {ORDER}") == EXPECTED_AFTER_2


def test_a_load_with_deletion_vectors_writes_only_the_rows_it_changes(project):
    """With deletion vectors (an option), the second load (one key changed, one deleted, one
    new) closes two versions where they lie and writes four rows, copying no other open version.
    By default the load copies the open versions that shared a file with the closed ones. Both
    hold the same history."""
    hist_model(project, "hist_merge", "merge")
    hist_model(project, "hist_marking", "merge", options=", tblproperties={'delta.enableDeletionVectors': 'true'}")
    load(project, LOAD_1, T1, "r1")
    load(project, LOAD_2, T2, "r2")
    for name in ("hist_merge", "hist_marking"):
        assert project.table(name, SHOWN, ORDER) == EXPECTED_AFTER_2, name
    properties = {name: dict(project.sql(f"show tblproperties {project.schema}.{name}")).get("delta.enableDeletionVectors")
                  for name in ("hist_merge", "hist_marking")}
    assert properties == {"hist_merge": None, "hist_marking": "true"}
    metrics = {name: project.history(name)[0]["operationMetrics"] for name in ("hist_merge", "hist_marking")}
    # closed: 2 (b changed, in place; c deleted, its version removed and inserted closed);
    # inserted: 3 (c's closed version, b's new version, e)
    assert {k: metrics["hist_marking"][k] for k in ("numTargetRowsUpdated", "numTargetRowsDeleted", "numTargetRowsInserted",
                                                     "numTargetRowsCopied", "numOutputRows")} == {
        "numTargetRowsUpdated": "1", "numTargetRowsDeleted": "1", "numTargetRowsInserted": "3",
        "numTargetRowsCopied": "0", "numOutputRows": "4"}
    assert int(metrics["hist_marking"]["numTargetDeletionVectorsAdded"]) >= 1
    assert int(metrics["hist_merge"]["numTargetRowsCopied"]) > 0
    assert metrics["hist_merge"]["numTargetDeletionVectorsAdded"] == "0"


def test_a_table_of_deletion_vectors_from_mb_turns_them_on_once_and_says_so(project):
    """From snapshots, a table whose files reach deletion_vectors_from_mb gets deletion vectors
    once, logged: at its first load (hist_created), or at the first load that finds it that large
    (hist_grown, created under the default 4 MB, then the model's threshold lowered), before that
    load's MERGE, which then writes only the rows it changes. Below that size, or when the model's
    tblproperties name the property, the table keeps what it has. All hold the same history."""
    hist_model(project, "hist_created", "merge", options=", meta={'deletion_vectors_from_mb': 0}")
    hist_model(project, "hist_grown", "merge")
    hist_model(project, "hist_kept_off", "merge", options=", meta={'deletion_vectors_from_mb': 0}, "
               "tblproperties={'delta.enableDeletionVectors': 'false'}")
    hist_model(project, "hist_small", "merge")
    names = ("hist_created", "hist_grown", "hist_kept_off", "hist_small")
    said = {}

    def deletion_vectors() -> dict:
        return {name: dict(project.sql(f"show tblproperties {project.schema}.{name}")).get("delta.enableDeletionVectors")
                for name in names}

    for rows, at, run_id in ((LOAD_1, T1, "r1"), (LOAD_2, T2, "r2"), (LOAD_2, T3, "r3")):
        def announcements(event, run_id=run_id) -> None:
            if event.info.name == "JinjaLogInfo" and "deletion vectors" in event.info.msg:
                said.setdefault(run_id, []).append(event.info.msg)

        project.create_source("snapshot", COLUMNS, rows)
        project.run("run", variables=variables(at, run_id), callbacks=[announcements])
        if run_id == "r1":
            assert deletion_vectors() == {"hist_created": "true", "hist_grown": None, "hist_kept_off": "false",
                                          "hist_small": None}
            hist_model(project, "hist_grown", "merge", options=", meta={'deletion_vectors_from_mb': 0}")
    assert deletion_vectors() == {"hist_created": "true", "hist_grown": "true", "hist_kept_off": "false", "hist_small": None}
    announced = r"historize: {name}: {schema}\.{name} holds [0-9]+\.[0-9] MB, at least deletion_vectors_from_mb \(0\): " \
        r"turning on deletion vectors, so that a load marks the versions it closes instead of copying the files they " \
        r"sit in\. This raises the table's reader protocol to 3 once: its readers need deletion vectors " \
        r"\(docs/scd2_hist\.md#readers-without-deletion-vectors\)"
    assert sorted(said) == ["r1", "r2"], said
    for run_id, name in (("r1", "hist_created"), ("r2", "hist_grown")):
        assert len(said[run_id]) == 1, said
        assert re.fullmatch(announced.format(name=name, schema=project.schema), said[run_id][0]), said[run_id][0]
    for name in names:
        assert project.table(name, SHOWN, ORDER) == EXPECTED_AFTER_2, name
    # r2's MERGE (r3 changed nothing and committed nothing): b closed in place, c removed and
    # inserted closed, b's new version and e inserted
    merges = {name: next(h for h in project.history(name) if h["operation"] == "MERGE")["operationMetrics"]
              for name in names}
    for name in ("hist_created", "hist_grown"):
        assert {k: merges[name][k] for k in ("numTargetRowsUpdated", "numTargetRowsDeleted", "numTargetRowsInserted",
                                             "numTargetRowsCopied", "numOutputRows")} == {
            "numTargetRowsUpdated": "1", "numTargetRowsDeleted": "1", "numTargetRowsInserted": "3",
            "numTargetRowsCopied": "0", "numOutputRows": "4"}, name
        assert int(merges[name]["numTargetDeletionVectorsAdded"]) >= 1, name
    for name in ("hist_kept_off", "hist_small"):
        assert int(merges[name]["numTargetRowsCopied"]) > 0, name
        assert merges[name]["numTargetDeletionVectorsAdded"] == "0", name


@pytest.mark.parametrize(
    "breaking_constraint, steps_done, rerun_deletes, rerun_strategy",
    [
        # fails step 2 (close deleted at T2): step 1 is committed; rerun as one MERGE
        ("version_state <> 'deleted' or version_ended_at < timestamp'2026-01-02 06:00:00+00:00'", 1, 1, "merge"),
        # fails step 3 (open versions starting at T2): steps 1 and 2 are committed; rerun in steps
        ("version_ended_at is not null or version_started_at < timestamp'2026-01-02 06:00:00+00:00'", 2, 0, "ordered"),
    ],
    ids=["after-step-1-merge", "after-step-2-ordered"],
)
def test_ordered_run_interrupted_after_a_step_ends_correct_when_rerun(project, breaking_constraint, steps_done,
                                                                      rerun_deletes, rerun_strategy):
    hist_model(project, "hist_ordered", "ordered")
    load(project, LOAD_1, T1, "r1")
    project.sql(f"alter table {project.schema}.hist_ordered add constraint interrupt check ({breaking_constraint})")
    commits = project.commits("hist_ordered")
    project.create_source("snapshot", COLUMNS, LOAD_2)
    error = project.fail("run", variables=variables(T2, "r2"))
    assert "interrupt" in error.lower()
    assert project.commits("hist_ordered") == commits + steps_done  # it really stopped part way
    project.sql(f"alter table {project.schema}.hist_ordered drop constraint interrupt")
    # the rerun finds key 2 closed as changed with no open version, and reopens it
    hist_model(project, "hist_ordered", rerun_strategy)
    result = load(project, LOAD_2, T2, "r2")
    assert load_reports(result) == {"hist_ordered": report(1, 1, rerun_deletes, rerun_strategy)}
    assert project.table("hist_ordered", SHOWN, ORDER) == EXPECTED_AFTER_2


def test_variants_null_safety_composite_key_select_row_hash_and_meta_options(project):
    # NULL-safe, collision-free change detection
    setup_models(project, source="nulls")
    # a composite unique key
    for strategy in STRATEGIES:
        hist_model(project, f"composite_{strategy}", strategy, unique_key="['region', 'id']", source="regions")
        hist_model(project, f"hashed_{strategy}", strategy, source="hashed")
    # options under meta
    project.model(
        "from_meta",
        "{{ config(materialized='scd2_hist', meta={'unique_key': 'id', 'strategy': 'ordered'}) }} "
        "select * from {{ target.schema }}.hashed",
    )
    loads = [
        (T1, "r1",
         [(1, None, None), (2, "x", None), (3, None, "y"), (4, "", None), (5, "a|b", "c"), (6, "p", "q")],
         [("eu", 1, "a"), ("us", 1, "b")],
         [(1, "a", "h1"), (2, "b", "h2")]),
        (T2, "r2",
         [(1, None, None), (2, None, None), (3, None, "z"), (4, None, None), (5, "a", "b|c"), (6, "p", "q")],
         [("eu", 1, "a2"), ("us", 2, "c")],
         # 1: the select's hash is the same although the name changed; 2: a new hash
         [(1, "a-renamed", "h1"), (2, "b", "h2b")]),
    ]
    for at, run_id, nulls, regions, hashed in loads:
        project.create_source("nulls", "id int, a string, b string", nulls)
        project.create_source("regions", "region string, id int, name string", regions)
        project.create_source("hashed", "id int, name string, row_hash string", hashed)
        project.run("run", variables=variables(at, run_id))

    opened = "version_state = 'changed' and version_ended_at is null"
    for strategy in STRATEGIES:
        # 1 NULL->NULL and 6 are unchanged; 2 value->NULL, 3, 4 ''->NULL and 5 ('a|b','c')->('a','b|c') changed
        assert project.sql(f"select id from {project.schema}.hist_{strategy} where {opened} order by id") == [(2,), (3,), (4,), (5,)]
    assert tables(project, "region, id, name, version_started_at, version_ended_at, version_state",
                  "region, id, version_started_at", "composite") == {s: [
        ("eu", 1, "a", T1, T2, "changed"),
        ("eu", 1, "a2", T2, None, "changed"),
        ("us", 1, "b", T1, T2, "deleted"),
        ("us", 2, "c", T2, None, "new"),
    ] for s in STRATEGIES}
    for strategy in STRATEGIES:
        keys = project.table(f"composite_{strategy}", f"composite_{strategy}_key, region, id, version_started_at")
        assert all(k == hash_key([r, i, s]) for k, r, i, s in keys)
    expected_hashed = [(1, "a", "h1", T1, None), (2, "b", "h2", T1, T2), (2, "b", "h2b", T2, None)]
    shown = "id, name, row_hash, version_started_at, version_ended_at"
    assert tables(project, shown, ORDER, "hashed") == {s: expected_hashed for s in STRATEGIES}
    assert project.table("from_meta", shown, ORDER) == expected_hashed
    assert sorted(h["operation"] for h in project.history("from_meta")) == ["CREATE TABLE AS SELECT", "MERGE", "WRITE"]


def test_bad_input_fails_clearly_and_leaves_tables_as_they_were(project):
    setup_models(project)
    load(project, LOAD_1, T1, "r1")
    load(project, LOAD_2, T2, "r2")
    before = state_of(project)
    cases = [
        ([(1, "a", 1), (1, "b", 2), (1, "c", 3), (2, "d", 4), (2, "e", 5), (3, "f", 6)], T3,
         "unique_key (id) is duplicated for 2 key(s) in the select, e.g. (1) x3; (2) x2; nothing was written"),
        ([(1, "a", 1), (None, "b", 2), (None, "c", 3)], T3,
         "unique_key (id) is NULL in 2 row(s) of the select; nothing was written"),
        (LOAD_3, T1,
         "load_timestamp 2026-01-01 06:00:00.000000 is older than 2026-01-02 06:00:00, the newest time already in"),
        # the same load_timestamp again, over other data: 5 would close at the instant it opened
        (LOAD_3, T2,
         "load_timestamp 2026-01-02 06:00:00.000000 was already loaded with other data: the version of key (5) "
         "began at this load_timestamp and now differs (deleted); a rerun must see the same snapshot, a new snapshot "
         "needs a new load_timestamp. Nothing was written"),
    ]
    for rows, at, message in cases:
        error = load_fails(project, rows, at, "bad")
        assert message in error
        assert state_of(project) == before

    project.create_source("snapshot", "product_id int, name string", [(1, "a")])
    assert "the select has no column id (unique_key); its columns are: product_id, name" in project.fail(
        "run", variables=variables(T3, "bad"))
    assert state_of(project) == before
    project.create_source("snapshot", COLUMNS, LOAD_3)
    assert "var 'load_timestamp' is 'yesterday'; expected 'YYYY-MM-DD HH:MM:SS[.ffffff]' (UTC)" in project.fail(
        "run", variables={"load_timestamp": "yesterday"})
    assert state_of(project) == before


def test_bad_first_load_and_non_delta_target_create_and_change_nothing(project):
    setup_models(project)
    project.create_source("snapshot", COLUMNS, [(1, "a", 1), (1, "b", 2)])
    assert "is duplicated for 1 key(s)" in project.fail("run")
    assert [t for t in project.sql(f"show tables in {project.schema} like 'hist_*'") if not t[2]] == []

    for strategy in STRATEGIES:
        project.sql(f"create table {project.schema}.hist_{strategy} (x int) using parquet")
        project.sql(f"insert into {project.schema}.hist_{strategy} values (7)")
    project.create_source("snapshot", COLUMNS, LOAD_1)
    assert "exists and is not a Delta table (another format); history is only kept in Delta tables" in project.fail("run")
    for strategy in STRATEGIES:
        assert project.table(f"hist_{strategy}") == [(7,)]


@pytest.mark.parametrize(
    "options, message",
    [
        (", strategy='fast'", "option 'strategy' is 'fast'; allowed: merge, ordered"),
        (", tblproperties='x'", "option 'tblproperties' is x; expected a mapping"),
        (", meta={'deletion_vectors_from_mb': 'big'}",
         "option 'deletion_vectors_from_mb' is 'big'; expected a number of megabytes, 0 or more"),
        (", meta={'deletion_vectors_from_mb': -1}",
         "option 'deletion_vectors_from_mb' is '-1'; expected a number of megabytes, 0 or more"),
    ],
)
def test_bad_option_is_named(project, options, message):
    project.model("hist_bad", f"{{{{ config(materialized='scd2_hist', unique_key='id'{options}) }}}} select 1 as id")
    assert message in project.fail("run", "--select", "hist_bad")


def test_missing_unique_key_option_is_named(project):
    project.model("hist_bad", "{{ config(materialized='scd2_hist') }} select 1 as id")
    assert "option 'unique_key' is required: a column name or a list of column names" in project.fail("run")
