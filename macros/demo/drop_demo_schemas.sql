{#- Used by the demo (historize_tools.demo) to start the demo from an empty state: drops only
    the demo's own schemas (`<target schema>_demo...`). -#}
{% macro drop_demo_schemas(suffixes) %}
  {%- for suffix in suffixes if suffix.startswith('demo') -%}
    {%- do adapter.drop_schema(api.Relation.create(schema=target.schema ~ '_' ~ suffix)) -%}
  {%- endfor -%}
{% endmacro %}
