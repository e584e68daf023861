"""The embedded Spark's statements in the tests' process: once a statement has started the
SparkSession, later ones run on it without building it again (dbt_runner.reuse_spark_session)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from dbt_common.exceptions import DbtRuntimeError
from pyspark.sql.utils import AnalysisException

from historize_tools import dbt_runner


class Session:
    """A SparkSession that records the statements it runs, fails `failing` as Spark's
    analysis fails a statement, and stops on `stop()`."""

    def __init__(self, failing: str | None = None) -> None:
        self.failing, self.statements = failing, []
        self._sc = SimpleNamespace(_jsc="a running context")

    def sql(self, statement: str):
        if statement == self.failing:
            raise AnalysisException(message=f"[TABLE_OR_VIEW_NOT_FOUND] {statement}")
        self.statements.append(statement)
        return SimpleNamespace(sparkSession=self, statement=statement)

    def stop(self) -> None:
        self._sc._jsc = None


def built_by_dbt_spark(sessions: list[Session]):
    """dbt-spark's execute: builds a session (the next of `sessions` when the last one
    stopped) and runs the statement on it; the statements it is called with are in
    `calls`, the sessions it built in `builds`."""
    calls, builds = [], []

    def execute(cursor, sql, *parameters):
        calls.append(sql % parameters if parameters else sql)
        if not builds or builds[-1]._sc._jsc is None:
            builds.append(sessions[len(builds)])
        cursor._df = builds[-1].sql(calls[-1])

    return execute, calls, builds


def test_statements_after_the_first_run_on_the_session_it_started():
    session = Session()
    execute, calls, builds = built_by_dbt_spark([session])
    cursor = SimpleNamespace(_df=None)
    refined = dbt_runner._execute_on_started_session(execute)
    for statement in ("select 1", "merge into h using s on false when not matched then insert *", "select 2"):
        refined(cursor, statement)
        assert cursor._df.statement == statement
    assert (calls, builds) == (["select 1"], [session])
    assert session.statements == ["select 1", "merge into h using s on false when not matched then insert *",
                                  "select 2"]


def test_a_statement_with_parameters_goes_to_dbt_spark():
    session = Session()
    execute, calls, builds = built_by_dbt_spark([session])
    cursor = SimpleNamespace(_df=None)
    refined = dbt_runner._execute_on_started_session(execute)
    refined(cursor, "select 1")
    refined(cursor, "select %s", 2)
    assert session.statements == ["select 1", "select 2"]
    assert (calls, builds) == (["select 1", "select 2"], [session])


def test_a_stopped_session_is_built_again():
    first, second = Session(), Session()
    execute, calls, builds = built_by_dbt_spark([first, second])
    cursor = SimpleNamespace(_df=None)
    refined = dbt_runner._execute_on_started_session(execute)
    refined(cursor, "select 1")
    first.stop()
    refined(cursor, "select 2")
    refined(cursor, "select 3")
    assert (calls, builds) == (["select 1", "select 2"], [first, second])
    assert (first.statements, second.statements) == (["select 1"], ["select 2", "select 3"])


def test_a_failed_statement_raises_as_dbt_spark_raises_it():
    session = Session(failing="select * from missing")
    execute, _, _ = built_by_dbt_spark([session])
    refined = dbt_runner._execute_on_started_session(execute)
    refined(SimpleNamespace(_df=None), "select 1")
    with pytest.raises(DbtRuntimeError, match=r"\[TABLE_OR_VIEW_NOT_FOUND\] select \* from missing"):
        refined(SimpleNamespace(_df=None), "select * from missing")


def test_dbt_sparks_cursor_is_refined_once():
    from dbt.adapters.spark.session import Cursor

    original = Cursor.execute
    try:
        dbt_runner.reuse_spark_session()
        refined = Cursor.execute
        assert refined.historize_session
        dbt_runner.reuse_spark_session()
        assert Cursor.execute is refined
    finally:
        Cursor.execute = original
