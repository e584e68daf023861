{#- The checks of a load that is its MERGE alone, as a one-row relation in
    that MERGE's source: its column `_historize_checked` is true, or the first
    failing check raises its refusal before Delta writes anything. The checks
    read the staged select `staged` (its keys, column pruned) and the kind's
    `instants_sql` (a query of the table, one column `version_instant`: the
    instants of the versions that end or begin after load_timestamp, as the
    kind records them), never the change set, which Spark would compute again
    for them, in one aggregate over both, `load_facts` (one stage fewer than an
    aggregate of each joined):
      null_key_rows     the select's rows with a NULL key
      duplicated_keys   its duplicated keys, each {order, key columns, example},
                        so that sorting puts the most repeated first, then by
                        key, as _assert_unique_key does
      newest_timestamp  the newest of those instants: the table's newest time,
                        when it is newer than load_timestamp -#}
{% macro _load_checks_sql(cfg, staged, history, instants_sql) %}
  {%- set keys = cfg.unique_key -%}
  {%- set key_names = [] -%}
  {%- for name in historize._change_set_key_names(keys) -%}{%- do key_names.append(historize._quote(name)) -%}{%- endfor -%}
  {%- set any_null = key_names | join(' is null or ') ~ ' is null' -%}
  {%- set examples = "concat_ws('; ', transform(slice(array_sort(load_facts.duplicated_keys), 1, 5), duplicated -> duplicated.example))" -%}
    select
        case
            when load_facts.null_key_rows > 0
                then raise_error({{ historize._refusal('null_key', cfg.model_name,
                    ['cast(load_facts.null_key_rows as string)'], keys, sql=true) }})
            when size(load_facts.duplicated_keys) > 0
                then raise_error({{ historize._refusal('duplicated_key', cfg.model_name,
                    ['cast(size(load_facts.duplicated_keys) as string)', examples], keys, sql=true) }})
            when load_facts.newest_timestamp > {{ historize.load_timestamp_sql() }}
                then raise_error({{ historize._refusal('older_load', cfg.model_name,
                    ['cast(load_facts.newest_timestamp as string)'], history=history, sql=true) }})
            else true
        end as _historize_checked
    from (
        select
            coalesce(sum(case when in_select and ({{ any_null }}) then _historize_occurrences end), 0) as null_key_rows,
            collect_set(case when in_select and not ({{ any_null }}) and _historize_occurrences > 1 then named_struct(
                'order', -_historize_occurrences,
                {%- for name in key_names %}
                'key_{{ loop.index0 }}', {{ name }},
                {%- endfor %}
                'example', concat('(', concat_ws(', ', {% for name in key_names %}cast({{ name }} as string){{ ', ' if not loop.last }}{% endfor %}), ') x',
                    cast(_historize_occurrences as string))) end) as duplicated_keys,
            max(version_instant) as newest_timestamp
        from (
            select
                {%- for name in keys %}
                {{ historize._quote(name, 'src') }} as {{ key_names[loop.index0] }},
                {%- endfor %}
                count(*) as _historize_occurrences,
                true as in_select,
                cast(null as timestamp) as version_instant
            from {{ staged }} as src
            group by {{ historize._column_list(keys, 'src') }}
            union all
            select
                {%- for name in keys %}
                null as {{ key_names[loop.index0] }},
                {%- endfor %}
                null as _historize_occurrences,
                false as in_select,
                instants.version_instant
            from (
                {{ instants_sql | trim | indent(12) }}
            ) as instants
        ) as keys_and_versions
    ) as load_facts
{% endmacro %}
