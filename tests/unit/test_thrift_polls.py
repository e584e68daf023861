"""The Thrift polls of the project's own dbt drivers: a poll waits for the
statement to end, and a failed statement's poll carries its error message."""
from __future__ import annotations

from types import SimpleNamespace

from pyhive.hive import ttypes

from historize_tools import dbt_runner

State = ttypes.TOperationState


def polls(*states: tuple[int, str | None]):
    """A cursor's poll answering the given (state, errorMessage) in turn, the last one for ever."""
    answers = [SimpleNamespace(operationState=state, errorMessage=message) for state, message in states]
    calls = []

    def poll(cursor, get_progress_update=True):
        calls.append(cursor)
        return answers[min(len(calls), len(answers)) - 1]

    return poll, calls


def test_a_failed_statement_is_polled_until_its_message_is_there():
    poll, calls = polls((State.RUNNING_STATE, None), (State.ERROR_STATE, None), (State.ERROR_STATE, None),
                        (State.ERROR_STATE, "[USER_RAISED_EXCEPTION] historize: model m: ... Rerun the model"))
    response = dbt_runner._poll_thrift_statement(poll)("cursor")
    assert (response.operationState, response.errorMessage) == (
        State.ERROR_STATE, "[USER_RAISED_EXCEPTION] historize: model m: ... Rerun the model")
    assert len(calls) == 4


def test_a_poll_returns_as_soon_as_the_statement_ends():
    poll, calls = polls((State.RUNNING_STATE, None), (State.PENDING_STATE, None), (State.FINISHED_STATE, None))
    response = dbt_runner._poll_thrift_statement(poll)("cursor")
    assert response.operationState == State.FINISHED_STATE
    assert len(calls) == 3


def test_a_long_statement_is_left_to_dbts_own_loop(monkeypatch):
    monkeypatch.setattr(dbt_runner, "THRIFT_POLL_WAIT_SECONDS", 0.1)
    poll, calls = polls((State.RUNNING_STATE, None))
    assert dbt_runner._poll_thrift_statement(poll)("cursor").operationState == State.RUNNING_STATE
    assert 2 <= len(calls) <= 10


def test_the_drivers_polls_are_refined_once():
    from pyhive import hive

    dbt_runner.refine_thrift_polls()
    refined = hive.Cursor.poll
    assert refined.historize_poll
    dbt_runner.refine_thrift_polls()
    assert hive.Cursor.poll is refined
