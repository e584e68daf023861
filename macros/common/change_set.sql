{#- The change set: the rows a load writes, each with `_historize_action` (see
    docs/how_a_load_runs.md, "Vocabulary"): new, changed, deleted, unchanged,
    invalid. These are the pieces every materialization's change set is built
    from: its key columns, a version's key, the columns it carries, and the
    when-clauses of a MERGE of versions. -#}

{#- The names of the change set's key columns, `_historize_key_<i>`, one for each
    column of the key `keys`. -#}
{% macro _change_set_key_names(keys) %}
  {%- set names = [] -%}
  {%- for name in keys -%}{%- do names.append('_historize_key_' ~ loop.index0) -%}{%- endfor -%}
  {{ return(names) }}
{% endmacro %}


{#- The change set's key columns: the key of the select's row, or of the
    table's when the key is absent from the select. -#}
{% macro _change_set_keys(keys, source_alias, table_alias) %}
  {%- set key_names = historize._change_set_key_names(keys) -%}
  {%- set parts = [] -%}
  {%- for name in keys -%}
    {%- do parts.append('coalesce(' ~ historize._quote(name, source_alias) ~ ', ' ~ historize._quote(name, table_alias)
        ~ ') as ' ~ historize._quote(key_names[loop.index0])) -%}
  {%- endfor -%}
  {{- return(parts | join(',\n        ')) -}}
{% endmacro %}


{#- The surrogate key of a version: a hash of the key's columns (of the
    relation `alias`) and the load_timestamp it began at. -#}
{% macro _version_key(keys, alias) %}
  {%- set expressions = [] -%}
  {%- for name in keys -%}{%- do expressions.append(historize._quote(name, alias)) -%}{%- endfor -%}
  {%- do expressions.append(historize.load_timestamp_sql()) -%}
  {{- return(historize.hash_key(expressions)) -}}
{% endmacro %}


{#- The `columns` (dbt Column objects) whose name is one of `names`, in order. -#}
{% macro _columns_named(columns, names) %}
  {%- set wanted = names | map('lower') | list -%}
  {%- set result = [] -%}
  {%- for column in columns if column.name | lower in wanted -%}
    {%- do result.append(column) -%}
  {%- endfor -%}
  {{- return(result) -}}
{% endmacro %}


{#- The when-clauses of a MERGE whose change set `chg` is of versions (each
    matched on its key and start): `deleted` removes the version, `changed`
    rewrites its `written` columns, `new` inserts it with `table_columns`.
    (fivetran_history, and scd2_hist from change events.) -#}
{% macro _write_versions_by_action(written, table_columns) %}
    when matched and chg._historize_action = 'deleted' then delete
    when matched and chg._historize_action = 'changed' then update set
        {%- for name in written %}
        {{ historize._quote(name) }} = chg.{{ historize._quote(name) }}{{ ',' if not loop.last }}
        {%- endfor %}
    when not matched and chg._historize_action = 'new' then insert (
        {{ historize._column_list(table_columns) }}
    ) values (
        {{ historize._column_list(table_columns, 'chg') }}
    )
{%- endmacro %}
