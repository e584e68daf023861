"""The demo's printing, which must give the same text on every target."""
from historize_tools.demo import map_text, text_table


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
