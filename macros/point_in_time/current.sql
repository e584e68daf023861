{#- The current rows of a historize table, one per key alive now, with its key
    and attribute columns only: a Type 4 current table kept beside the
    history, as a model materialized as a table or a view. On scd2_hist it
    reads only the open versions' partition (version_ended_at is NULL).
    Usage: {{ config(materialized='table') }}
           select * from ({{ historize.current(ref('customer_hist')) }}) as c -#}
{% macro current(relation) %}
  {{- return(adapter.dispatch('current', 'historize')(relation)) -}}
{% endmacro %}

{% macro default__current(relation) %}
  {{ historize._assert_given('current', relation, {}) }}
  {%- set conv = historize._history_conventions(relation, 'current', needs_key=false) -%}
  {%- if not execute -%}
    {{ return('select * from ' ~ relation) }}
  {%- endif -%}
  {#- The columns each materialization writes beside the select's, as its
      config macro names them; the version key is `<table name>_key`. -#}
  {%- set history_columns = {
      'scd2_hist': ['row_hash', 'version_started_at', 'version_ended_at', 'version_state', 'load_run_id', 'loaded_at'],
      'scd_type6': ['effective_from', 'effective_to', 'current_flag', 'version', 'change_reason', '_hash'],
      'fivetran_history': ['_fivetran_start', '_fivetran_end', '_fivetran_active', '_fivetran_synced'],
  } -%}
  {%- if conv.kind not in history_columns -%}
    {{ exceptions.raise_compiler_error("historize: current: " ~ relation ~ " is not a historize table (it records no "
        ~ "historize.kind and its columns are " ~ conv.columns | join(', ') ~ ")") }}
  {%- endif -%}
  {%- set hidden = history_columns[conv.kind] + [(relation.identifier | lower) ~ '_key'] -%}
    select {{ historize._column_list(conv.columns | reject('in', hidden) | list, 'v') }}
    from {{ relation }} as v
    where {{ conv.open_sql }}
{% endmacro %}
