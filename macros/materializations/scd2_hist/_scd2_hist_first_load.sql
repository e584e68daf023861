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


{#- Every version it created is a new key. A table created at deletion_vectors_from_mb
    or more gets deletion vectors now (`cfg.large_table`), so that its next load marks
    the versions it closes: the load finishes the table before it reports. -#}
{% macro _scd2_hist_first_load_result(load, result) %}
  {%- do adapter.cache_added(load.history) -%}
  {%- set created = run_query("select count(*) as created_keys from " ~ load.history).rows[0]["created_keys"] | int -%}
  {%- set large_table = load.cfg.large_table -%}
  {%- if large_table is not none -%}
    {%- set size_bytes = run_query('describe detail ' ~ load.history).rows[0]['sizeInBytes'] | int -%}
    {%- if size_bytes >= large_table.bytes -%}
      {{ log(historize._scd2_hist_deletion_vectors_message(load.cfg, load.history, size_bytes), info=true) }}
      {%- call statement('set_large_table_properties') -%}
        alter table {{ load.history }} set {{ historize._properties_clause(large_table.properties) }}
      {%- endcall -%}
    {%- endif -%}
  {%- endif -%}
  {{ return({'new': created, 'changed': 0, 'deleted': 0, 'written': created, 'detail': 'created ' ~ load.history}) }}
{% endmacro %}
