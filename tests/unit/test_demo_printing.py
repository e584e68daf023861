"""The demo's printing, which must give the same text on every target, and the
demo's tables the README and the docs show."""
import re

import pytest

from historize_tools import dbt_runner as dbt
from historize_tools.demo import EVOLVED, differences, main, map_text, text_table

from projects import DEMO_TABLES


def test_a_local_map_is_written_as_the_thrift_server_sends_it():
    # the server's text for this map, entries sorted, values unescaped
    sent = '{"column":"{"name":"size"}","position":null}'
    assert map_text({"position": None, "column": '{"name":"size"}'}) == sent
    assert map_text(sent) == sent


def test_rows_are_laid_out_as_spark_shows_them():
    assert text_table(["id", "name"], [(1, "a"), (22, None)]) == (
        "+---+----+\n"
        "|id |name|\n"
        "+---+----+\n"
        "|1  |a   |\n"
        "|22 |NULL|\n"
        "+---+----+\n")


def shown_block(page: str, title: str) -> str:
    """The table `page` shows under `== title` in its demo output."""
    text = (dbt.ROOT / page).read_text()
    block = re.search(rf"== {re.escape(title)}\n(\+[-+]+\+\n(?:[|+].*\n)+)", text)
    assert block, f"{page} shows no table {title}"
    return block.group(1)


def demo_table(title: str) -> str:
    """The table under `== title` in the tables the demo ends in (which CI's demo and the
    cluster's demo test check)."""
    sections = DEMO_TABLES.read_text().split("\n== ")
    found = [section.split("\n", 1)[1] for section in sections if section.split("\n", 1)[0] == title]
    assert len(found) == 1, f"tests/demo_tables.txt has {len(found)} tables {title}"
    return found[0]


def test_the_readme_and_the_docs_show_the_demo_s_tables():
    for page, title in (("README.md", EVOLVED), ("docs/late_loads.md", "historize_demo.historize_loads")):
        assert shown_block(page, title) == demo_table(title)


def test_the_demo_s_check_names_the_lines_that_differ(tmp_path):
    expected = tmp_path / "tables.txt"
    expected.write_text("\n== t\n+--+\n|id|\n+--+\n|1 |\n+--+\n")
    assert differences(expected.read_text(), expected) == ""
    found = differences("\n== t\n+--+\n|id|\n+--+\n|2 |\n+--+\n", expected)
    assert f"--- {expected}\n+++ demo\n" in found
    assert "-|1 |\n+|2 |\n" in found


def test_a_missing_check_file_is_refused_before_any_load(tmp_path, capsys):
    missing = tmp_path / "absent.txt"
    with pytest.raises(SystemExit) as exited:
        main(["--check", str(missing)])
    assert exited.value.code == 2
    assert f"--check: no such file: {missing}" in capsys.readouterr().err
