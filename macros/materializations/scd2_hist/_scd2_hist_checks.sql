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


{#- The table's business columns must be the select's (schema changes are
    handled before this check). -#}
{% macro _scd2_hist_assert_table_matches(cfg, target, business_columns) %}
  {%- set table_names = adapter.get_columns_in_relation(target) | map(attribute='name') | map('lower') | list -%}
  {%- set expected = historize._scd2_hist_table_columns(cfg, business_columns) -%}
  {%- set missing = [] -%}{%- set extra = [] -%}
  {%- for name in expected if name not in table_names -%}{%- do missing.append(name) -%}{%- endfor -%}
  {%- for name in table_names if name not in expected -%}{%- do extra.append(name) -%}{%- endfor -%}
  {%- if missing or extra -%}
    {{ exceptions.raise_compiler_error(
        "historize: model " ~ cfg.model_name ~ ": the select's columns differ from " ~ target
        ~ " (in the select only: " ~ (missing | join(', ') or 'none') ~ "; in the table only: "
        ~ (extra | join(', ') or 'none') ~ "); nothing was written") }}
  {%- endif -%}
{% endmacro %}


{% macro _scd2_hist_plan(cfg, target, changes) %}
  {%- set row = run_query(historize._scd2_hist_plan_sql(cfg, target, changes)).rows[0] -%}
  {{ historize._assert_plan_applicable(row, cfg.model_name, target, 'version') }}
  {{ return({
      'close_changed': row['close_changed'] | int,
      'close_deleted': row['close_deleted'] | int,
      'insert_changed': row['insert_changed'] | int,
      'insert_new': row['insert_new'] | int,
  }) }}
{% endmacro %}
