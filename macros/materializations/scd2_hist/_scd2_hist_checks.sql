{#- Checks of scd2_hist that need the select or the table. -#}

{% macro _scd2_hist_assert_select(cfg, select_names) %}
  {{ historize._assert_columns_present(cfg.unique_key, select_names, 'unique_key', cfg.model_name) }}
  {%- set reserved = [cfg.hist_key] + historize._scd2_hist_technical_columns(cfg)[1:] -%}
  {%- set clashes = [] -%}
  {%- for name in select_names if name in reserved -%}{%- do clashes.append(name) -%}{%- endfor -%}
  {%- if clashes -%}
    {{ exceptions.raise_compiler_error(
        "historize: model " ~ cfg.model_name ~ ": the select has column(s) " ~ clashes | join(', ')
        ~ ", which scd2_hist writes itself; rename them in the select") }}
  {%- endif -%}
{% endmacro %}


{% macro _scd2_hist_plan(cfg, target, changes) %}
  {%- set row = run_query(historize._scd2_hist_plan_sql(cfg, target, changes)).rows[0] -%}
  {%- if row['invalid'] > 0 -%}
    {{ historize._assert_unique_key("(select * from " ~ changes ~ " where _historize_action = 'invalid') as invalid_rows",
        cfg.unique_key, cfg.model_name) }}
  {%- endif -%}
  {{ historize._assert_plan_applicable(row, cfg.model_name, target, 'version') }}
  {{ return({
      'close_changed': row['close_changed'] | int,
      'close_deleted': row['close_deleted'] | int,
      'insert_changed': row['insert_changed'] | int,
      'insert_new': row['insert_new'] | int,
  }) }}
{% endmacro %}
