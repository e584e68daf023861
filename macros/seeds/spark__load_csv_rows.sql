{#- Seeds with real NULLs on the embedded Spark: dbt-spark's session cursor
    binds Python None as the string 'None', so an empty CSV cell became 'None'
    in string columns. This renders each value as a SQL literal instead. -#}
{% macro spark__load_csv_rows(model, agate_table) %}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set statements = [] -%}
  {%- for chunk in agate_table.rows | batch(get_batch_size()) -%}
    {%- set sql -%}
      insert into {{ this.render() }} values
      {% for row in chunk -%}
        ({%- for col_name in agate_table.column_names -%}
          {%- set type = column_override.get(col_name, adapter.convert_type(agate_table, loop.index0)) -%}
          cast({{ historize._sql_literal(row[loop.index0]) }} as {{ type }}){{ ',' if not loop.last }}
        {%- endfor -%}){{ ',' if not loop.last }}
      {% endfor %}
    {%- endset -%}
    {%- do adapter.add_query(sql, abridge_sql_log=True) -%}
    {%- if loop.index0 == 0 -%}{%- do statements.append(sql) -%}{%- endif -%}
  {%- endfor -%}
  {{ return(statements[0] if statements else '') }}
{% endmacro %}


{% macro _sql_literal(value) %}
  {%- if value is none -%}
    {{ return('null') }}
  {%- elif value is number and value is not boolean -%}
    {{ return(value | string) }}
  {%- elif value is boolean -%}
    {{ return('true' if value else 'false') }}
  {%- else -%}
    {{ return(historize._string_literal(value)) }}
  {%- endif -%}
{% endmacro %}
