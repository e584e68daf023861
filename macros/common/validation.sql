{#- Checks shared by the materializations. Each raises before anything is
    written, with a message naming the problem and some offending values. -#}

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
  {%- set key_list = historize._column_list(unique_key) -%}
  {%- set key_targets = historize._select_list(unique_key) -%}
  {%- set any_null = historize._column_list(unique_key, suffix=' is null', separator=' or ') -%}
  {%- set query -%}
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
  {%- endset -%}
  {%- set result = run_query(query) -%}
  {%- if result.rows | length > 0 -%}
    {%- set messages = historize._invalid_key_messages(unique_key, model_name, label) -%}
    {%- set width = unique_key | length -%}
    {%- set first = result.rows[0] -%}
    {%- if first[width + 1] == 1 -%}
      {{ exceptions.raise_compiler_error(messages.null[0] ~ first[width + 3] ~ messages.null[1]) }}
    {%- endif -%}
    {%- set examples = [] -%}
    {%- for row in result.rows -%}
      {%- do examples.append("(" ~ row[:width] | join(', ') ~ ") x" ~ row[width]) -%}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error(messages.duplicated[0] ~ first[width + 2] ~ messages.duplicated[1]
        ~ examples | join('; ') ~ messages.duplicated[2]) }}
  {%- endif -%}
{% endmacro %}


{#- The refusals of NULL and duplicated keys, as the text around their
    figures: `null` around the rows with a NULL key, `duplicated` around the
    number of duplicated keys and around their examples. -#}
{% macro _invalid_key_messages(unique_key, model_name, label='unique_key') %}
  {%- set head = "historize: model " ~ model_name ~ ": " ~ label ~ " (" ~ unique_key | join(', ') ~ ") is " -%}
  {{ return({
      'null': [head ~ "NULL in ", " row(s) of the select; nothing was written"],
      'duplicated': [head ~ "duplicated for ", " key(s) in the select, e.g. ", "; nothing was written"],
  }) }}
{% endmacro %}


{#- An existing target must be a Delta table, never a view or another format. -#}
{% macro _assert_delta_table(relation, model_name) %}
  {%- if relation is not none and (relation.is_view or not relation.is_delta) -%}
    {{ exceptions.raise_compiler_error(
        "historize: model " ~ model_name ~ ": " ~ relation ~ " exists and is not a Delta table ("
        ~ ('a view' if relation.is_view else 'another format') ~ "); history is only kept in Delta tables. "
        ~ "Nothing was written; rename or drop it yourself if it is not history.") }}
  {%- endif -%}
{% endmacro %}
