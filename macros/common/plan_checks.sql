{#- A load that is its write alone: the change set is computed inside the
    MERGE's source, and the plan's checks (NULL or duplicate keys, a load
    older than the table, a rerun over other data) raise from inside it, with
    the same messages as the plan query's, before Delta writes anything. No
    query runs before the write to compute or count the change set; the
    counts of what was written are read afterwards (a load that changes
    nothing commits nothing and reads nothing more). -#}
{#- The guard of a MERGE whose source computes the change set itself:
    `with` defines the change set (`changes_sql`) and the one-row relation of
    the plan's checks (`checks_sql`, _plan_checks_sql, the concurrency guard
    among its inputs); `join` and `predicate` add the checks to the source,
    which reads the change set from `historize_changes`. -#}
{% macro _guard_with_checks(changes_sql, checks_sql) %}
  {%- set with_sql -%}
        {{ historize._changes_cte(changes_sql) }},

        historize_checks as (
            {{ checks_sql | indent(8) }}
        )
  {%- endset -%}
  {{ return({'with': with_sql, 'join': 'cross join historize_checks',
             'predicate': 'historize_checks._historize_checked'}) }}
{% endmacro %}


{#- The guard `guard` (_unchanged_since) of a MERGE whose source computes
    the change set itself (`changes_sql`) and checks nothing more: the plan's
    checks ran before it, on the select alone. -#}
{% macro _guard_with_changes(changes_sql, guard) %}
  {{ return({'with': historize._changes_cte(changes_sql), 'join': guard.join, 'predicate': guard.predicate}) }}
{% endmacro %}


{#- The `with` clause that names the change set `historize_changes`. -#}
{% macro _changes_cte(changes_sql) %}
        with historize_changes as (
            {{ changes_sql | indent(8) }}
        )
{%- endmacro %}


{#- The one-row relation of the plan's checks: its column
    `_historize_checked` is true, or the first failing check raises its
    refusal. The checks read the staged select `source` (its keys, column
    pruned) and the table, never the change set, which Spark would compute
    again for them. `newest_sql` gives the newest instant already in the
    table (one row, column `newest_timestamp`); `conflicts_sql`, when a rerun
    of this load_timestamp may conflict, one row of _rerun_conflict_columns
    (`what` names what began at this load_timestamp). The guard
    (_unchanged_since's relation, joined in, or a column of `newest_sql`'s row
    that `guard.predicate` names) raises while its row is computed, before any
    check is evaluated, so a run overtaken by another gets the guard's error
    whatever else the table now shows. -#}
{% macro _plan_checks_sql(cfg, history, staged, newest_sql, conflicts_sql, what, guard) %}
  {%- set key_messages = historize._invalid_key_messages(cfg.unique_key, cfg.model_name) -%}
  {%- set older = historize._older_load_message(cfg, history) -%}
  {%- set rerun = historize._rerun_conflict_message(cfg, what) -%}
  {%- set text = historize._string_literal -%}
    select
        case
            when invalid_keys.null_key_rows > 0
                then raise_error(concat({{ text(key_messages.null[0]) }}, cast(invalid_keys.null_key_rows as string), {{ text(key_messages.null[1]) }}))
            when size(invalid_keys.duplicated_keys) > 0
                then raise_error(concat({{ text(key_messages.duplicated[0]) }}, cast(size(invalid_keys.duplicated_keys) as string),
                    {{ text(key_messages.duplicated[1]) }},
                    concat_ws('; ', transform(slice(array_sort(invalid_keys.duplicated_keys), 1, 5), duplicated -> duplicated.example)),
                    {{ text(key_messages.duplicated[2]) }}))
            when newest.newest_timestamp > {{ historize.load_timestamp_sql() }}
                then raise_error(concat({{ text(older[0]) }}, cast(newest.newest_timestamp as string), {{ text(older[1]) }}))
            {%- if conflicts_sql %}
            when rerun.conflicts > 0
                then raise_error(concat({{ text(rerun[0]) }}, cast(rerun.conflicts as string), {{ text(rerun[1]) }},
                    rerun.conflict_examples, {{ text(rerun[2]) }}))
            {%- endif %}
            else {{ guard.predicate }}
        end as _historize_checked
    from (
        {{ historize._invalid_keys_sql(cfg.unique_key, staged) | trim }}
    ) as invalid_keys
    cross join (
        {{ newest_sql | trim | indent(4) }}
    ) as newest
    {%- if conflicts_sql %}
    cross join (
        {{ conflicts_sql | trim | indent(4) }}
    ) as rerun
    {%- endif %}
    {%- if guard.join %}
    {{ guard.join }}
    {%- endif %}
{% endmacro %}


{#- One row: the select's rows with a NULL key (`null_key_rows`), and its
    duplicated keys (`duplicated_keys`), each {order, key columns, example}
    so that sorting puts the most repeated first, then by key, as
    _assert_unique_key does. -#}
{% macro _invalid_keys_sql(keys, staged) %}
  {%- set key_names = [] -%}
  {%- for name in keys -%}{%- do key_names.append(historize._quote('_historize_key_' ~ loop.index0)) -%}{%- endfor -%}
  {%- set any_null = key_names | join(' is null or ') ~ ' is null' -%}
        select
            coalesce(sum(case when {{ any_null }} then _historize_occurrences end), 0) as null_key_rows,
            collect_set(case when not ({{ any_null }}) and _historize_occurrences > 1 then named_struct(
                'order', -_historize_occurrences,
                {%- for name in key_names %}
                'key_{{ loop.index0 }}', {{ name }},
                {%- endfor %}
                'example', concat('(', concat_ws(', ', {% for name in key_names %}cast({{ name }} as string){{ ', ' if not loop.last }}{% endfor %}), ') x',
                    cast(_historize_occurrences as string))) end) as duplicated_keys
        from (
            select
                {%- for name in keys %}
                {{ historize._qualified(name, 'src') }} as {{ key_names[loop.index0] }},
                {%- endfor %}
                count(*) as _historize_occurrences
            from {{ staged }} as src
            group by {{ historize._column_list(keys, 'src') }}
        ) as occurrences
{% endmacro %}


{#- What a load's one MERGE did, from its statement's `result` (dbt's
    load_result): Delta's counts of rows {'affected', 'updated', 'deleted',
    'inserted'}, and, when it wrote and `with_metrics`, its commit's operation
    metrics (`metrics`, _merge_commit_metrics) after the version `read`. -#}
{% macro _merge_result(result, read, with_metrics=true) %}
  {%- set row = result.table.rows[0] -%}
  {%- set merged = {'affected': row['num_affected_rows'] | int, 'updated': row['num_updated_rows'] | int,
                    'deleted': row['num_deleted_rows'] | int, 'inserted': row['num_inserted_rows'] | int,
                    'metrics': none} -%}
  {%- if merged.affected > 0 and with_metrics -%}
    {%- do merged.update({'metrics': historize._merge_commit_metrics(read, merged)}) -%}
  {%- endif -%}
  {{ return(merged) }}
{% endmacro %}


{#- The operation metrics of the MERGE `merged` committed, as a mapping of
    names to numbers: the first MERGE after the version `read` that updated
    and inserted as many rows. (The guard failed this MERGE if another run
    wrote the rows it writes after that version; a session setting would not
    do to tag it, since dbt's threads share the session.) -#}
{% macro _merge_commit_metrics(read, merged) %}
  {%- set history = run_query('describe history ' ~ read.relation ~ ' limit 10') -%}
  {%- for commit in history.rows | reverse if commit['operation'] == 'MERGE' and commit['version'] | int > read.version -%}
    {%- set listed = commit['operationMetrics'] -%}
    {%- set parsed = listed if listed is mapping else fromjson(listed) -%}
    {%- set metrics = {} -%}
    {%- for name, value in parsed.items() -%}{%- do metrics.update({name: value | int}) -%}{%- endfor -%}
    {%- if metrics.get('numTargetRowsUpdated') == merged.updated and metrics.get('numTargetRowsInserted') == merged.inserted -%}
      {{ return(metrics) }}
    {%- endif -%}
  {%- endfor -%}
  {{ exceptions.raise_compiler_error("historize: no commit of this run's MERGE in the history of "
      ~ read.relation ~ " after version " ~ read.version) }}
{% endmacro %}
