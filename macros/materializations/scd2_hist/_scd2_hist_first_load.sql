{#- scd2_hist, path `first_load`: a snapshot into a table that does not exist.
    The load creates the table with every row of the select as a new open
    version, in one statement. -#}

{#- The select's keys are checked before the table exists. -#}
{% macro _scd2_hist_first_load_prepare(load) %}
  {{ historize._assert_unique_key(load.relations.staged, load.cfg.unique_key, load.cfg.model_name) }}
{% endmacro %}


{% macro _scd2_hist_first_load_sql(load) %}
  {%- set cfg, business_columns = load.cfg, load.columns.business -%}
  {%- set table_columns = historize._scd2_hist_table_columns(cfg, business_columns) -%}
  {%- set new_versions_sql -%}
    select
    {%- for value in historize._scd2_hist_new_version_values(cfg, business_columns, 'src', "'new'") %}
        {{ value }} as {{ historize._quote(table_columns[loop.index0]) }}{{ ',' if not loop.last }}
    {%- endfor %}
    from {{ load.relations.staged }} as src
  {%- endset -%}
  {{ return(historize._create_history_table_sql(load.history, historize._history_properties(cfg),
      select_sql=new_versions_sql, partition_by=cfg.partition_by)) }}
{% endmacro %}


{#- Every version it created is a new key. -#}
{% macro _scd2_hist_first_load_result(load, result) %}
  {%- do adapter.cache_added(load.history) -%}
  {%- set created = run_query("select count(*) as created_keys from " ~ load.history).rows[0]["created_keys"] | int -%}
  {{ return({'new': created, 'changed': 0, 'deleted': 0, 'written': created, 'detail': 'created ' ~ load.history}) }}
{% endmacro %}
