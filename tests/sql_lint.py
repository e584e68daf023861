"""sqlfluff with the project's rules, for the SQL historize generates (its
statements as a run sends them or as the docs render them, compiled tests)."""
from __future__ import annotations

from sqlfluff.core import FluffConfig, Linter

from historize_tools import dbt_runner as dbt

# Rules the SQL historize generates (materializations, compiled invariant tests)
# breaks on purpose, on top of the project's exclusions.
GENERATED_SQL_EXCLUDED = {
    "RF06": "every identifier is quoted, so that any column name works",
    "ST05": "MERGE sources and plan queries are subqueries: Spark does not substitute a cached view read in a CTE",
}


def lint(sql: str, generated: bool = False) -> list[str]:
    """sqlfluff's violations of one statement, with the project's rules."""
    # the raw templater: the SQL is rendered already, and the dbt templater is not in every lane
    overrides = {"templater": "raw", "dialect": "sparksql"}
    if generated:
        excluded = FluffConfig.from_path(str(dbt.ROOT), overrides=overrides).get("exclude_rules")
        overrides["exclude_rules"] = ",".join([excluded, *GENERATED_SQL_EXCLUDED])
    config = FluffConfig.from_path(str(dbt.ROOT), overrides=overrides)
    found = Linter(config=config).lint_string(sql).get_violations()
    return [f"{v.rule_code()} line {v.line_no}: {v.desc()}" for v in found]
