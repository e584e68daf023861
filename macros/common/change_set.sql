{#- The change set and the plan, as every materialization computes them.

    The change set is a session view of the rows a load writes, each with
    `_historize_action` (see docs/how_a_load_runs.md, "Vocabulary"): new, changed, deleted,
    unchanged, invalid. It is cached once per run, so the plan and the writes
    read the same rows; lazily, so that the plan query computes it and
    counts it in one job.

    The plan is one row of counts of the change set by action, checked before
    anything is written: a load may not go back in time, and a rerun of a
    load_timestamp must see the same data. -#}

{#- Stages the model's select as a session view; returns its columns. -#}
{% macro _stage_select(view, select_sql) %}
  {{ historize._drop_session_views([view]) }}
  {%- call statement('stage_' ~ view.identifier) -%}
    create or replace temporary view {{ view }} as
    {{ select_sql }}
  {%- endcall -%}
  {{ return(adapter.get_columns_in_relation(view)) }}
{% endmacro %}


{#- Caches `changes_sql` as the load's session view `relations.changes`, on
    its first read (the plan query's), and notes it among the views the load
    cached. A load that is its MERGE alone caches none. -#}
{% macro _stage_change_set(relations, changes_sql) %}
  {%- set view = relations.changes -%}
  {{ historize._drop_session_views([view]) }}
  {%- call statement('stage_' ~ view.identifier) -%}
    cache lazy table {{ view }} as
    {{ changes_sql }}
  {%- endcall -%}
  {%- do relations.cached.append(view) -%}
{% endmacro %}


{#- Drops session views and their cached data, left over or done with: at
    the end of a load, its `relations.cached + [relations.staged]`. (DROP
    VIEW uncaches without resolving the view, which may name a dropped table.) -#}
{% macro _drop_session_views(views) %}
  {%- for view in views -%}
    {%- call statement('drop_' ~ view.identifier) -%}
      drop view if exists {{ view }}
    {%- endcall -%}
  {%- endfor -%}
{% endmacro %}


{#- Plan columns shared by the key-based materializations: keys whose
    `started_column` (when their current version began) is this very
    load_timestamp but that change again, i.e. a rerun over other data; the
    first five of them in sorted order, so the error is the same every run. -#}
{% macro _rerun_conflict_columns(key_count, started_column) %}
  {%- set at = historize.load_timestamp_sql() -%}
  {%- set conflict = "_historize_action in ('changed', 'deleted') and " ~ started_column ~ " = " ~ at -%}
  {%- set key_text = [] -%}
  {%- for index in range(key_count) -%}
    {%- do key_text.append('cast(' ~ historize._quote('_historize_key_' ~ index) ~ ' as string)') -%}
  {%- endfor -%}
            coalesce(sum(case when {{ conflict }} then 1 else 0 end), 0) as conflicts,
            concat_ws('; ', slice(array_sort(collect_list(case when {{ conflict }}
                then concat('(', concat_ws(', ', {{ key_text | join(', ') }}), ') ', _historize_action) end)), 1, 5)) as conflict_examples
{%- endmacro %}


{#- Counts of the change set by action, as plan columns. -#}
{% macro _action_count_columns(actions) %}
  {%- for action in actions %}
            coalesce(sum(case when _historize_action = '{{ action }}' then 1 else 0 end), 0) as {{ action }}{{ ',' if not loop.last }}
  {%- endfor %}
{%- endmacro %}


{#- The plan query: the columns of `counted_sql`, and whether load_timestamp
    is older than the newest instant already in the table, the one row and
    column `newest_timestamp` of `newest_sql`. -#}
{% macro _plan_with_newest_instant(counted_sql, newest_sql) %}
    {#- Subqueries, not CTEs: Spark does not substitute a cached view read
        inside a CTE, and would compute the change set again. -#}
    select
        with_newest.*,
        cast(with_newest.newest_timestamp as string) as newest_instant,
        coalesce(with_newest.newest_timestamp > {{ historize.load_timestamp_sql() }}, false) as load_is_older
    from (
        select
            counted.*,
            newest.newest_timestamp
        from (
            {{ counted_sql }}
        ) as counted
        cross join (
            {{ newest_sql }}
        ) as newest
    ) as with_newest
{% endmacro %}


{#- Fails a load whose plan (the plan query's row) goes back in time, or
    reruns a load_timestamp over other data (`conflicts` keys whose `what`
    began at that instant differ). -#}
{% macro _assert_plan_applicable(plan, cfg, history, what) %}
  {%- if plan['load_is_older'] -%}
    {%- set refusal = historize._older_load_message(cfg, history) -%}
    {{ exceptions.raise_compiler_error(refusal[0] ~ plan['newest_instant'] ~ refusal[1]) }}
  {%- endif -%}
  {%- if plan['conflicts'] > 0 -%}
    {%- set refusal = historize._rerun_conflict_message(cfg, what) -%}
    {{ exceptions.raise_compiler_error(refusal[0] ~ plan['conflicts'] ~ refusal[1] ~ plan['conflict_examples'] ~ refusal[2]) }}
  {%- endif -%}
{% endmacro %}


{#- The refusal of a rerun over other data, as the text around the number of
    conflicting keys and around their examples. -#}
{% macro _rerun_conflict_message(cfg, what) %}
  {{- return(["historize: model " ~ cfg.model_name ~ ": load_timestamp " ~ historize.load_timestamp()
      ~ " was already loaded with other data: ", " key(s) whose " ~ what ~ " began at this load_timestamp now differ, e.g. ",
      "; a rerun must see the same snapshot, a new snapshot needs a new load_timestamp. Nothing was written"]) -}}
{% endmacro %}


{#- Columns of the select's rows that carry the key check into the change
    set's own pass (the shuffle by key its join needs anyway): the select is
    read once. -#}
{% macro _keyed_source_columns(keys, alias) %}
            true as _historize_in_source,
            count(*) over (partition by {{ historize._column_list(keys, alias) }}) as _historize_occurrences
{%- endmacro %}


{#- True for a row of the select whose key is NULL or duplicated: its action
    is `invalid`, and the load fails on it before writing. -#}
{% macro _invalid_key_condition(keys, alias) %}
  {{- return(alias ~ '._historize_in_source and (' ~ historize._column_list(keys, alias, suffix=' is null', separator=' or ')
      ~ ' or ' ~ alias ~ '._historize_occurrences > 1)') -}}
{% endmacro %}


{#- Fails, naming the keys, when the plan counted `invalid` rows. -#}
{% macro _assert_valid_keys(plan, changes, cfg) %}
  {%- if plan['invalid'] > 0 -%}
    {{ historize._assert_unique_key("(select * from " ~ changes ~ " where _historize_action = 'invalid') as invalid_rows",
        cfg.unique_key, cfg.model_name) }}
  {%- endif -%}
{% endmacro %}


{#- One MERGE that both updates a key's existing rows and inserts its new
    version: each change row is exploded into a row per role, `update` (its
    merge key is the key, so it matches the existing rows) and `insert` (its
    merge key is NULL, which never matches, so it inserts). -#}

{#- The head of a split MERGE into `history` (alias `hist`) from `changes`
    (alias `chg`), up to its key condition; the caller adds any further
    condition and the when-clauses. The source is `changes` with
    `_historize_role` and the merge key columns `_historize_merge_key_<i>`:
    `roles_sql` gives each row its roles (an array of 'update' and 'insert');
    `guard` (_unchanged_since) checks that no other run wrote the table since
    this run read it; `with_sql`, a with clause, may define `changes` (and
    the checks' relation) in the source itself. The key condition: the
    table's key columns equal the merge keys. -#}
{% macro _split_merge_into(history, changes, keys, roles_sql, guard, with_sql='') %}
    merge into {{ history }} as hist
    using (
        {{ with_sql | trim }}
        select
            {%- for name in keys %}
            case when roles._historize_role = 'update' then chg.{{ historize._quote('_historize_key_' ~ loop.index0) }} end
                as {{ historize._quote('_historize_merge_key_' ~ loop.index0) }},
            {%- endfor %}
            chg.*,
            roles._historize_role
        from {{ changes }} as chg
        {{ guard.join }}
        lateral view explode({{ roles_sql }}) roles as _historize_role
        where {{ guard.predicate }}
    ) as chg
    on {% for name in keys -%}
        {{ historize._qualified(name, 'hist') }} = {{ historize._qualified('_historize_merge_key_' ~ loop.index0, 'chg') }}{{ ' and ' if not loop.last }}
    {%- endfor %}
{%- endmacro %}


{#- The head of a MERGE into `history` (alias `hist`) from the change set
    `changes` as it is (alias `chg`), guarded (`with_sql` may define
    `changes` in the source itself); the caller adds the key condition and
    the when-clauses. -#}
{% macro _guarded_merge_into(history, changes, guard, with_sql='') %}
    merge into {{ history }} as hist
    using (
        {%- if with_sql %}
        {{ with_sql | trim }}
        {%- endif %}
        select chg.*
        from {{ changes }} as chg
        {{ guard.join }}
        where {{ guard.predicate }}
    ) as chg
{%- endmacro %}


{#- A load's writes: Delta's write from every task, and what the load did. -#}

{#- On a partitioned table Delta's MERGE by default shuffles its output by the
    partition columns before writing, so one task writes all the open versions
    (one partition). A load of a partitioned table (cfg.partition_by) writes
    from every task instead, for its writes only: `enabled` false restores the
    session's own setting after them. -#}
{% macro _write_per_task(cfg, enabled) %}
  {%- if cfg.partition_by -%}
    {%- call statement('write_per_task' if enabled else 'write_as_configured') -%}
      {%- if enabled %}
      set spark.databricks.delta.merge.repartitionBeforeWrite.enabled = false
      {%- else %}
      reset spark.databricks.delta.merge.repartitionBeforeWrite.enabled
      {%- endif %}
    {%- endcall -%}
  {%- endif -%}
{% endmacro %}


{#- What a load did, in the same words for every materialization: one log
    line, and dbt's result of the model, which dbt prints in its summary and
    writes to run_results.json (`adapter_response`): the same words as its
    message, `code` 'written' or 'nothing to write', and `rows_affected` the
    number of keys (versions, for fivetran_history) the load wrote. A load's
    result has one shape in every materialization, `load`: {'new', 'changed',
    'deleted'} (counts by action), 'written' (the keys or versions written)
    and 'detail' (said in parentheses). -#}
{% macro _report_load(cfg, load) %}
  {%- set message = load.new ~ " new, " ~ load.changed ~ " changed, " ~ load.deleted ~ " deleted"
      ~ (" (" ~ load.detail ~ ")" if load.detail else "") -%}
  {{ log("historize: " ~ cfg.model_name ~ ": " ~ message, info=true) }}
  {%- do store_raw_result('main', message=message, code='written' if load.written > 0 else 'nothing to write',
        rows_affected=load.written | int) -%}
{% endmacro %}


{#- Column naming helpers shared by the materializations. -#}

{#- A name as a Spark identifier: between backticks, a backtick in it doubled,
    so that any column name the select can hold (spaces, quotes, backticks,
    keywords) stays one identifier. -#}
{% macro _quote(name) %}
  {{- return('`' ~ (name | string) | replace('`', '``') ~ '`') -}}
{% endmacro %}


{% macro _qualified(name, relation_alias=none) %}
  {{- return((relation_alias ~ '.' if relation_alias else '') ~ historize._quote(name)) -}}
{% endmacro %}


{#- "a.`x`, a.`y`": names quoted, optionally qualified and suffixed. -#}
{% macro _column_list(names, relation_alias=none, suffix='', separator=', ') %}
  {%- set parts = [] -%}
  {%- for name in names -%}
    {%- do parts.append(historize._qualified(name, relation_alias) ~ suffix) -%}
  {%- endfor -%}
  {{- return(parts | join(separator)) -}}
{% endmacro %}


{#- Select targets, one to a line. -#}
{% macro _select_list(names, relation_alias=none) %}
  {{- return(historize._column_list(names, relation_alias, separator=',\n            ')) -}}
{% endmacro %}


{#- "t.`a` = s.`b` and ...": a null-intolerant equi-join on key columns. -#}
{% macro _key_join(names, left_alias, right_alias, right_names=none) %}
  {%- set parts = [] -%}
  {%- for name in names -%}
    {%- set right = right_names[loop.index0] if right_names else name -%}
    {%- do parts.append(historize._qualified(name, left_alias) ~ ' = ' ~ historize._qualified(right, right_alias)) -%}
  {%- endfor -%}
  {{- return(parts | join(' and ')) -}}
{% endmacro %}


{#- The change set's key columns, `_historize_key_<i>`: the key of the select's
    row, or of the table's when the key is absent from the select. -#}
{% macro _change_set_keys(keys, source_alias, table_alias) %}
  {%- set parts = [] -%}
  {%- for name in keys -%}
    {%- do parts.append('coalesce(' ~ historize._qualified(name, source_alias) ~ ', ' ~ historize._qualified(name, table_alias)
        ~ ') as ' ~ historize._quote('_historize_key_' ~ loop.index0)) -%}
  {%- endfor -%}
  {{- return(parts | join(',\n        ')) -}}
{% endmacro %}


{#- The surrogate key of a version: a hash of the key's columns (of the
    relation `alias`) and the load_timestamp it began at. -#}
{% macro _version_key(keys, alias) %}
  {%- set expressions = [] -%}
  {%- for name in keys -%}{%- do expressions.append(historize._qualified(name, alias)) -%}{%- endfor -%}
  {%- do expressions.append(historize.load_timestamp_sql()) -%}
  {{- return(historize.hash_key(expressions)) -}}
{% endmacro %}


{#- Names of `columns` (dbt Column objects) not in `excluded`, in order. -#}
{% macro _names_except(columns, excluded) %}
  {%- set lowered = excluded | map('lower') | list -%}
  {%- set names = [] -%}
  {%- for column in columns if column.name | lower not in lowered -%}
    {%- do names.append(column.name | lower) -%}
  {%- endfor -%}
  {{- return(names) -}}
{% endmacro %}


{% macro _columns_named(columns, names) %}
  {%- set wanted = names | map('lower') | list -%}
  {%- set result = [] -%}
  {%- for column in columns if column.name | lower in wanted -%}
    {%- do result.append(column) -%}
  {%- endfor -%}
  {{- return(result) -}}
{% endmacro %}


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
