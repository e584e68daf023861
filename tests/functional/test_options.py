"""Options that catch typos: a key of a history model's meta or config() that
looks meant as an option of its kind but is not one fails the model before
anything is written, naming the key and what it may have meant; the user's own
meta keys stay allowed (docs/options.md)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Every option of every kind, written out here independently of the macros.
COMMON = ["unique_key", "tblproperties", "former_names"]
OPTIONS = {
    "scd2_hist": COMMON + ["adopt_from", "adopt_repair", "adopt_columns", "strategy", "out_of_order", "input",
                           "sequence_by", "deleted_when", "bitemporal", "deletion_vectors_from_mb"],
    "scd_type6": COMMON + ["type0_columns", "type1_columns", "type3_columns", "deletes", "audit", "actor"],
    "fivetran_history": COMMON + ["adopt_from", "adopt_repair", "tmax", "unmodified_string", "op_column"],
}
AT = {"load_timestamp": "2026-01-01 06:00:00", "load_run_id": "r1"}
SELECT = "select 1 as id, 'a' as name, 'upsert' as _fivetran_op, timestamp'2026-01-01 00:00:00' as _fivetran_start"


def typo(option: str) -> str:
    """The option with its second-to-last letter left out: one edit away."""
    return option[:-2] + option[-1]


def model(config: str) -> str:
    return f"{{{{ config({config}) }}}}\n{SELECT}\n"


# model name: (its config, the error its run must fail with)
CASES = {
    f"{kind}__{option}": (f"materialized='{kind}', unique_key='id', meta={{'{typo(option)}': 'x'}}",
                          f"model {kind}__{option}: unknown option '{typo(option)}'; did you mean '{option}'?")
    for kind, options in OPTIONS.items() for option in options
}
CASES.update({
    "two_edits": ("materialized='scd2_hist', unique_key='id', meta={'out_of_ordre': 'reconcile'}",
                  "model two_edits: unknown option 'out_of_ordre'; did you mean 'out_of_order'?"),
    "adopt_form": ("materialized='scd2_hist', unique_key='id', meta={'adopt_form': 'snapshots.customers'}",
                   "model adopt_form: unknown option 'adopt_form'; did you mean 'adopt_from'?"),
    "in_case": ("materialized='scd2_hist', unique_key='id', meta={'Out_Of_Order': 'reconcile'}",
                "model in_case: unknown option 'Out_Of_Order'; did you mean 'out_of_order'?"),
    "in_config": ("materialized='scd2_hist', unique_key='id', out_of_ordr='reconcile'",
                  "model in_config: unknown option 'out_of_ordr'; did you mean 'out_of_order'?"),
    "another_kind": ("materialized='scd_type6', unique_key='id', meta={'sequence_by': 'name'}",
                     "model another_kind: option 'sequence_by' is not an option of scd_type6; it is one of "
                     "scd2_hist. Nothing was written"),
    "two_other_kinds": ("materialized='scd_type6', unique_key='id', meta={'adopt_from': 'x.y'}",
                        "model two_other_kinds: option 'adopt_from' is not an option of scd_type6; it is one of "
                        "scd2_hist and fivetran_history. Nothing was written"),
})


def test_every_option_read_by_the_macros_is_listed_here():
    read = set(re.findall(r"_read_option\('(\w+)'", "\n".join(
        path.read_text() for path in (ROOT / "macros").rglob("*.sql"))))
    assert read == {option for options in OPTIONS.values() for option in options}


def test_an_option_with_a_typo_fails_its_model_before_anything_is_written(project):
    for name, (config, _) in CASES.items():
        project.model(name, model(config))
    # the user's own meta keys: far from any option (two edits from a name of five letters is far)
    project.model("own_keys", model("materialized='scd2_hist', unique_key='id', "
                                    "meta={'owner': 'finance', 'inpxx': 1, 'contains_pii': true}"))
    failures = project.failures("run", variables=AT)
    assert set(failures) == set(CASES)
    for name, (_, error) in CASES.items():
        assert f"historize: {error}" in failures[name], failures[name]
    assert [row[1] for row in project.sql(f"show tables in {project.schema}") if not row[2]] == ["own_keys"]
    assert project.table("own_keys", "id, name, version_state") == [(1, "a", "new")]
