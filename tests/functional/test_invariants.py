"""The temporal invariant tests: each fails on a table that breaks exactly its
invariant, and passes on valid tables of every kind."""
from __future__ import annotations

import datetime as dt

T1, T2, T3, T4 = (dt.datetime(2026, 1, d) for d in (1, 2, 3, 4))
SENTINEL = dt.datetime(9999, 12, 31, 23, 59, 59)
MS = dt.timedelta(milliseconds=1)
SCD2 = "id int, name string, version_started_at timestamp, version_ended_at timestamp, version_state string"
TYPE6 = ("id int, effective_from timestamp, effective_to timestamp, current_flag boolean, version int, "
         "change_reason string")
FIVETRAN = "id int, _fivetran_start timestamp, _fivetran_end timestamp, _fivetran_active boolean"
SNAPSHOT = "id int, dbt_valid_from timestamp, dbt_valid_to timestamp"

TABLES = {
    # valid tables of each kind
    "scd2_valid": (SCD2, [
        (1, "a", T1, T2, "changed"), (1, "b", T2, None, "changed"),
        (2, "c", T1, T2, "deleted"),
        (3, "d", T1, T2, "deleted"), (3, "e", T3, None, "new"),  # a gap after a delete is allowed
    ]),
    "type6_valid": (TYPE6, [
        (1, T1, T2, False, 1, "source_load"), (1, T2, SENTINEL, True, 2, "source_load"),
        (2, T1, T3, False, 1, "deleted_in_source"),
    ]),
    "fivetran_valid": (FIVETRAN, [
        (1, T1, T2 - MS, False), (1, T2, SENTINEL, True),
        (2, T1, T2, False), (2, T3, SENTINEL, True),  # deleted at T2, back at T3
    ]),
    "snapshot_valid": (SNAPSHOT, [(1, T1, T2), (1, T2, None), (2, T1, None)]),
    # each breaks exactly one invariant
    "breaks_one_open_version": (SCD2, [(1, "a", T1, None, "new"), (1, "b", T1, None, "new")]),
    "breaks_no_overlapping_versions": (SCD2, [(1, "a", T1, T3, "changed"), (1, "b", T2, None, "changed")]),
    "breaks_no_gaps": (SCD2, [(1, "a", T1, T2, "changed"), (1, "b", T3, None, "changed")]),
    "breaks_open_version_unbounded": (SCD2, [(1, "a", T1, T2, "changed"), (2, "b", T1, None, "new")]),
    "breaks_sequential_versions": (TYPE6, [
        (1, T1, T2, False, 1, "source_load"), (1, T2, SENTINEL, True, 3, "source_load"),
    ]),
    "breaks_no_gaps_fivetran_style": (SNAPSHOT, [(1, T1, T2), (1, T2 + MS + MS, None)]),
}
INVARIANTS = ("one_open_version", "no_overlapping_versions", "no_gaps", "open_version_unbounded")


def sources_yml(schema: str) -> str:
    lines = ["version: 2", "sources:", "  - name: h", f"    schema: {schema}", "    tables:"]
    for table in TABLES:
        lines.append(f"      - name: {table}")
        lines.append("        data_tests:")
        if table.startswith("snapshot") or table.endswith("fivetran_style"):
            closed = table.endswith("fivetran_style")
            args = ("{unique_key: id, valid_from: dbt_valid_from, valid_to: dbt_valid_to"
                    + (", interval: closed, step: interval 1 millisecond" if closed else "") + "}")
            tests = INVARIANTS
        else:
            args = "{unique_key: id}"
            tests = INVARIANTS + (("sequential_versions",) if TYPE6 == TABLES[table][0] else ())
        for test in tests:
            lines.append(f"          - historize.{test}:")
            lines.append(f"              name: {test}__{table}")
            lines.append(f"              arguments: {args}")
    return "\n".join(lines) + "\n"


def test_each_invariant_fails_on_exactly_its_broken_table(project):
    for table, (ddl, rows) in TABLES.items():
        project.create_table(table, ddl, rows)
    project.write("models/sources.yml", sources_yml(project.schema))
    result = project.run("test", expect_success=False)
    outcome = {r.node.name: (str(r.status), r.failures) for r in result.result.results}
    failing = {name: failures for name, (status, failures) in outcome.items() if status == "fail"}
    errors = {name: status for name, (status, _) in outcome.items() if status not in ("pass", "fail")}
    assert errors == {}
    assert failing == {
        "one_open_version__breaks_one_open_version": 1,
        # two open versions of a key are valid to infinity together: an overlap too
        "no_overlapping_versions__breaks_one_open_version": 1,
        "no_overlapping_versions__breaks_no_overlapping_versions": 1,
        "no_gaps__breaks_no_gaps": 1,
        "open_version_unbounded__breaks_open_version_unbounded": 1,
        "sequential_versions__breaks_sequential_versions": 1,
        "no_gaps__breaks_no_gaps_fivetran_style": 1,
    }
    assert len(outcome) == 4 * len(TABLES) + 2  # and sequential_versions on the two Type 6 tables


SINCE_TABLES = {
    # key 1 broke the invariants before T3 only; key 2 breaks them at T3 and after
    "scd2_since": (SCD2, [
        (1, "a", T1, T2, "changed"), (1, "b", T1, T2, "changed"), (1, "c", T2, None, "changed"),
        (2, "x", T1, T3, "changed"), (2, "y", T4, None, "changed"),
    ]),
    "type6_since": (TYPE6, [
        (1, T1, T2, False, 1, "source_load"), (1, T2, SENTINEL, True, 3, "source_load"),
        (2, T1, T3, False, 1, "source_load"), (2, T3, SENTINEL, True, 3, "source_load"),
    ]),
}


def test_since_checks_only_the_versions_written_since_that_load(project):
    for table, (ddl, rows) in SINCE_TABLES.items():
        project.create_table(table, ddl, rows)
    lines = ["version: 2", "sources:", "  - name: h", f"    schema: {project.schema}", "    tables:"]
    for table in SINCE_TABLES:
        tests = ("no_overlapping_versions", "no_gaps") + (("sequential_versions",) if table == "type6_since" else ())
        lines += [f"      - name: {table}", "        data_tests:"]
        for test in tests:
            for scope, args in (("all", "{unique_key: id}"), ("since", "{unique_key: id, since: '2026-01-03 00:00:00'}")):
                lines += [f"          - historize.{test}:", f"              name: {test}__{table}__{scope}",
                          f"              arguments: {args}"]
    project.write("models/sources.yml", "\n".join(lines) + "\n")
    result = project.run("test", expect_success=False)
    outcome = {r.node.name: (str(r.status), r.failures) for r in result.result.results}
    assert {name: failures for name, (status, failures) in outcome.items() if status != "pass"} == {
        "no_overlapping_versions__scd2_since__all": 1,  # key 1, before T3
        "no_gaps__scd2_since__all": 1,  # key 2
        "no_gaps__scd2_since__since": 1,  # key 2: its version ending at T3 is in the window
        "sequential_versions__type6_since__all": 2,
        "sequential_versions__type6_since__since": 1,  # key 2 only: key 1's version 1 ended before T3
    }
    assert len(outcome) == 2 * 5

    # A bad `since` is named.
    project.write("models/sources.yml", "\n".join(lines).replace("2026-01-03 00:00:00", "yesterday") + "\n")
    assert "argument 'since' is 'yesterday'" in project.fail("test")
