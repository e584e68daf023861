{#- Refusals: the checks that fail a load before anything is written, each
    with a message naming the problem and some offending values. -#}

{#- The whole text of a refusal of a load's checks, the same words whether the
    run finds the problem or SQL that raises does: `figures` are the values it
    names, in order, and with `sql` they are SQL expressions of strings and
    the text is a SQL expression too (for raise_error).
      null_key            figures: the rows of the select with a NULL key
      duplicated_key      figures: the number of duplicated keys, their examples
      older_load          figures: the newest instant already in `history`
                          (`detail` says where that instant came from)
      rerun_conflict      figures: the number of keys whose `what` began at this
                          load_timestamp and now differ, their examples
      rerun_conflict_key  figures: one such key, what the select does to it
                          (the check of a row of the change set)
    `keys` and `label` name the key of the key refusals. -#}
{% macro _refusal(kind, model_name, figures, keys=[], label='unique_key', history=none, detail='', what='', sql=false) %}
  {%- set head = "historize: model " ~ model_name ~ ": " -%}
  {%- set key_head = head ~ label ~ " (" ~ keys | join(', ') ~ ") is " -%}
  {%- set rerun_head = head ~ "load_timestamp " ~ historize.load_timestamp() ~ " was already loaded with other data: " -%}
  {%- set rerun_tail = "; a rerun must see the same snapshot, a new snapshot needs a new load_timestamp. Nothing was written" -%}
  {%- if kind == 'null_key' -%}
    {%- set texts = [key_head ~ "NULL in ", " row(s) of the select; nothing was written"] -%}
  {%- elif kind == 'duplicated_key' -%}
    {%- set texts = [key_head ~ "duplicated for ", " key(s) in the select, e.g. ", "; nothing was written"] -%}
  {%- elif kind == 'older_load' -%}
    {%- set texts = [head ~ "load_timestamp " ~ historize.load_timestamp() ~ " is older than ",
          ", the newest time already in " ~ history ~ detail ~ "; loads must come in time order. Nothing was written"] -%}
  {%- elif kind == 'rerun_conflict' -%}
    {%- set texts = [rerun_head, " key(s) whose " ~ what ~ " began at this load_timestamp now differ, e.g. ", rerun_tail] -%}
  {%- elif kind == 'rerun_conflict_key' -%}
    {%- set texts = [rerun_head ~ "the " ~ what ~ " of key (", ") began at this load_timestamp and now differs (", ")" ~ rerun_tail] -%}
  {%- else -%}
    {{ exceptions.raise_compiler_error("historize: no refusal named '" ~ kind ~ "'") }}
  {%- endif -%}
  {%- set parts = [historize._string_literal(texts[0]) if sql else texts[0]] -%}
  {%- for figure in figures -%}
    {%- do parts.extend([figure, historize._string_literal(texts[loop.index]) if sql else texts[loop.index]]) -%}
  {%- endfor -%}
  {{ return('concat(' ~ parts | join(', ') ~ ')' if sql else parts | join('')) }}
{% endmacro %}


{#- Fails a load whose plan (the plan query's row) counted `invalid` rows
    (NULL or duplicated keys in the select, named from the change set
    `changes`), goes back in time, or reruns a load_timestamp over other data
    (`conflicts` keys whose `what` began at that instant differ). -#}
{% macro _assert_plan(plan, cfg, history, changes, what) %}
  {%- if plan['invalid'] > 0 -%}
    {{ historize._assert_unique_key("(select * from " ~ changes ~ " where _historize_action = 'invalid') as invalid_rows",
        cfg.unique_key, cfg.model_name) }}
  {%- endif -%}
  {%- if plan['load_is_older'] -%}
    {{ exceptions.raise_compiler_error(historize._refusal('older_load', cfg.model_name, [plan['newest_instant']], history=history)) }}
  {%- endif -%}
  {%- if plan['conflicts'] > 0 -%}
    {{ exceptions.raise_compiler_error(historize._refusal('rerun_conflict', cfg.model_name,
        [plan['conflicts'], plan['conflict_examples']], what=what)) }}
  {%- endif -%}
{% endmacro %}


{% macro _assert_columns_present(required, available, what, model_name) %}
  {%- set missing = [] -%}
  {%- for name in required if name | lower not in available | map('lower') | list -%}
    {%- do missing.append(name) -%}
  {%- endfor -%}
  {%- if missing -%}
    {{ exceptions.raise_compiler_error(
        "historize: model " ~ model_name ~ ": the select has no column " ~ missing | join(', ')
        ~ " (" ~ what ~ "); its columns are: " ~ available | join(', ')) }}
  {%- endif -%}
{% endmacro %}


{#- Fails when the key columns hold a NULL or a duplicate in `relation`. -#}
{% macro _assert_unique_key(relation, unique_key, model_name, sample=5, label='unique_key') %}
  {%- set findings = run_query(historize._key_findings_sql(relation, unique_key, sample)) -%}
  {{ historize._refuse_key_findings(findings.rows, unique_key, model_name, label) }}
{% endmacro %}


{#- The keys of `relation` that are NULL or duplicated, at most `sample` of
    them, NULL first, then the most repeated, then by key: each row holds the
    key's columns, then `occurrences`, `has_null` (1 or 0), `offending_keys`
    and `null_rows` (the counts over all of them). No row: the key is unique. -#}
{% macro _key_findings_sql(relation, unique_key, sample=5) %}
  {%- set key_list = historize._column_list(unique_key) -%}
  {%- set key_targets = historize._column_list(unique_key, lines=true) -%}
  {%- set any_null = historize._column_list(unique_key, suffix=' is null', separator=' or ') %}
    with keyed as (
        select
            {{ key_targets }},
            count(*) as occurrences,
            max(case when {{ any_null }} then 1 else 0 end) as has_null
        from {{ relation }}
        group by {{ key_list }}
    ),

    offending as (
        select *
        from keyed
        where occurrences > 1 or has_null = 1
    )

    select
        {{ key_targets }},
        occurrences,
        has_null,
        count(*) over () as offending_keys,
        sum(case when has_null = 1 then occurrences else 0 end) over () as null_rows
    from offending
    order by has_null desc, occurrences desc, {{ historize._column_list(unique_key, suffix=' asc') }}
    limit {{ sample }}
{%- endmacro %}


{#- Raises the refusal of `rows` as _key_findings_sql gives them (their first
    columns in its order), if there are any: a NULL key first, else the
    duplicated keys with examples. -#}
{% macro _refuse_key_findings(rows, unique_key, model_name, label='unique_key') %}
  {%- if rows | length > 0 -%}
    {%- set width = unique_key | length -%}
    {%- set first = rows[0] -%}
    {%- if first[width + 1] == 1 -%}
      {{ exceptions.raise_compiler_error(historize._refusal('null_key', model_name, [first[width + 3]], unique_key, label)) }}
    {%- endif -%}
    {%- set examples = [] -%}
    {%- for row in rows -%}
      {%- do examples.append("(" ~ row[:width] | join(', ') ~ ") x" ~ row[width]) -%}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error(historize._refusal('duplicated_key', model_name,
        [first[width + 2], examples | join('; ')], unique_key, label)) }}
  {%- endif -%}
{% endmacro %}


{#- An existing target must be a Delta table, never a view or another format. -#}
{% macro _assert_delta_table(relation, model_name) %}
  {%- if relation is not none and (relation.is_view or not adapter.dispatch('is_delta_table', 'historize')(relation)) -%}
    {{ exceptions.raise_compiler_error(
        "historize: model " ~ model_name ~ ": " ~ relation ~ " exists and is not a Delta table ("
        ~ ('a view' if relation.is_view else 'another format') ~ "); history is only kept in Delta tables. "
        ~ "Nothing was written; rename or drop it yourself if it is not history.") }}
  {%- endif -%}
{% endmacro %}


{#- Whether a table dbt's cache found is a Delta table. dbt-spark lists a schema's
    tables with their format; dbt-databricks lists a Hive metastore's by name only, so
    a table not known as Delta there is described (Unity Catalog's listing has the format). -#}
{% macro default__is_delta_table(relation) %}
  {{- return(relation.is_delta) -}}
{% endmacro %}

{% macro databricks__is_delta_table(relation) %}
  {%- if relation.is_delta -%}
    {{- return(true) -}}
  {%- endif -%}
  {%- set described = adapter.get_relation(database=relation.database, schema=relation.schema,
        identifier=relation.identifier, needs_information=true) -%}
  {{- return(described is not none and described.is_delta) -}}
{% endmacro %}
