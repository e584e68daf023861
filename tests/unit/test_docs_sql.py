"""The SQL the docs show is what the code renders (python -m historize_tools.docs_sql)."""
import shutil

from historize_tools import docs_sql


def test_the_docs_show_the_sql_the_code_renders(capsys):
    assert docs_sql.main(["--check"]) == 0, capsys.readouterr().err


def test_a_stale_block_is_named(tmp_path, capsys):
    shutil.copytree(docs_sql.DOCS, tmp_path / "docs")
    page = tmp_path / "docs" / "scd2_hist.md"
    page.write_text(page.read_text().replace("merge into analytics.product_hist as hist", "merge into old as hist", 1))
    assert docs_sql.main(["--check", "--docs", str(tmp_path / "docs")]) == 1
    err = capsys.readouterr().err
    assert "scd2_hist.md: scd2_hist-merge\n" in err
    assert "-merge into old as hist\n+merge into analytics.product_hist as hist\n" in err
    assert docs_sql.main(["--docs", str(tmp_path / "docs")]) == 0  # writing it anew
    assert docs_sql.main(["--check", "--docs", str(tmp_path / "docs")]) == 0
