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


{#- The plan query of a load that caches its change set `changes`: one row of
    its counts by action (invalid, new, changed, deleted), the kind's own
    `counted_sql` columns, the rerun conflicts (_rerun_conflict_columns, of
    the keys' `started_column`), the rows in the guard's scope the change set
    read (`scope_rows`), and whether load_timestamp is older than the newest
    instant already in the table, the one row and column `newest_timestamp`
    of `newest_sql`. -#}
{% macro _plan_sql(cfg, changes, counted_sql, started_column, newest_sql) %}
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
            select
                {%- for action in ['invalid', 'new', 'changed', 'deleted'] %}
                coalesce(sum(case when _historize_action = '{{ action }}' then 1 else 0 end), 0) as {{ action }},
                {%- endfor %}
                {{ counted_sql | trim }},
                {{ historize._rerun_conflict_columns(cfg.unique_key | length, started_column) | trim }},
                max(_historize_scope_rows) as scope_rows
            from {{ changes }}
        ) as counted
        cross join (
            {{ newest_sql }}
        ) as newest
    ) as with_newest
{% endmacro %}


{#- Fails a load whose plan (the plan query's row) counted `invalid` rows
    (NULL or duplicated keys in the select, named from the change set
    `changes`), goes back in time, or reruns a load_timestamp over other data
    (`conflicts` keys whose `what` began at that instant differ). -#}
{% macro _assert_plan(plan, cfg, history, changes, what) %}
  {%- if plan['invalid'] > 0 -%}
    {{ historize._assert_unique_key("(select * from " ~ changes ~ " where _historize_action = 'invalid') as invalid_rows",
        cfg.unique_key, cfg.model_name) }}
  {%- endif -%}
  {%- if plan['load_is_older'] -%}
    {%- set refusal = historize._refusal('older_load', cfg.model_name, history=history) -%}
    {{ exceptions.raise_compiler_error(refusal[0] ~ plan['newest_instant'] ~ refusal[1]) }}
  {%- endif -%}
  {%- if plan['conflicts'] > 0 -%}
    {%- set refusal = historize._refusal('rerun_conflict', cfg.model_name, what=what) -%}
    {{ exceptions.raise_compiler_error(refusal[0] ~ plan['conflicts'] ~ refusal[1] ~ plan['conflict_examples'] ~ refusal[2]) }}
  {%- endif -%}
{% endmacro %}


{#- The refusals of a load's checks, as the texts around their figures, which
    the caller puts between them (in Jinja, or in SQL that raises): the same
    words whether the plan query, the checks inside a MERGE or the guard find
    the problem.
      null_key        around the rows of the select with a NULL key
      duplicated_key  around the number of duplicated keys, then their examples
      older_load      around the newest instant already in `history` (`detail`
                      says where that instant came from)
      rerun_conflict  around the number of keys whose `what` began at this
                      load_timestamp and now differ, then their examples
      rerun_conflict_key  around one such key, then what the select does to it
                      (the check of a row of the change set)
    `keys` and `label` name the key of the key refusals. -#}
{% macro _refusal(kind, model_name, keys=[], label='unique_key', history=none, detail='', what='') %}
  {%- set head = "historize: model " ~ model_name ~ ": " -%}
  {%- set key_head = head ~ label ~ " (" ~ keys | join(', ') ~ ") is " -%}
  {%- if kind == 'null_key' -%}
    {{ return([key_head ~ "NULL in ", " row(s) of the select; nothing was written"]) }}
  {%- elif kind == 'duplicated_key' -%}
    {{ return([key_head ~ "duplicated for ", " key(s) in the select, e.g. ", "; nothing was written"]) }}
  {%- elif kind == 'older_load' -%}
    {{ return([head ~ "load_timestamp " ~ historize.load_timestamp() ~ " is older than ",
        ", the newest time already in " ~ history ~ detail ~ "; loads must come in time order. Nothing was written"]) }}
  {%- elif kind == 'rerun_conflict' -%}
    {{ return([head ~ "load_timestamp " ~ historize.load_timestamp() ~ " was already loaded with other data: ",
        " key(s) whose " ~ what ~ " began at this load_timestamp now differ, e.g. ",
        "; a rerun must see the same snapshot, a new snapshot needs a new load_timestamp. Nothing was written"]) }}
  {%- elif kind == 'rerun_conflict_key' -%}
    {{ return([head ~ "load_timestamp " ~ historize.load_timestamp() ~ " was already loaded with other data: the "
        ~ what ~ " of key (", ") began at this load_timestamp and now differs (",
        "); a rerun must see the same snapshot, a new snapshot needs a new load_timestamp. Nothing was written"]) }}
  {%- endif -%}
  {{ exceptions.raise_compiler_error("historize: no refusal named '" ~ kind ~ "'") }}
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
    `passed`, {'join', 'predicate'}, is what every row of the source must
    pass: a write's guard (_unchanged_since: no other run wrote the table
    since this run read it), or a MERGE's checks; `with_sql`, a with clause,
    may define `changes` (and the checks' relation) in the source itself. The
    key condition: the table's key columns equal the merge keys. -#}
{% macro _split_merge_into(history, changes, keys, roles_sql, passed, with_sql='') %}
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
        {{ passed.join }}
        lateral view explode({{ roles_sql }}) roles as _historize_role
        where {{ passed.predicate }}
    ) as chg
    on {% for name in keys -%}
        {{ historize._quote(name, 'hist') }} = {{ historize._quote('_historize_merge_key_' ~ loop.index0, 'chg') }}{{ ' and ' if not loop.last }}
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


{#- The when-clauses of a MERGE whose change set `chg` is of versions (each
    matched on its key and start): `deleted` removes the version, `changed`
    rewrites its `written` columns, `new` inserts it with `table_columns`.
    (fivetran_history, and scd2_hist from change events.) -#}
{% macro _write_versions_by_action(written, table_columns) %}
    when matched and chg._historize_action = 'deleted' then delete
    when matched and chg._historize_action = 'changed' then update set
        {%- for name in written %}
        {{ historize._quote(name) }} = chg.{{ historize._quote(name) }}{{ ',' if not loop.last }}
        {%- endfor %}
    when not matched and chg._historize_action = 'new' then insert (
        {{ historize._column_list(table_columns) }}
    ) values (
        {{ historize._column_list(table_columns, 'chg') }}
    )
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


{#- What a load's one MERGE wrote, from its statement's `result` (dbt's
    load_result): Delta's counts of rows {'affected', 'updated', 'deleted',
    'inserted'}. -#}
{% macro _merge_result(result) %}
  {%- set row = result.table.rows[0] -%}
  {{ return({'affected': row['num_affected_rows'] | int, 'updated': row['num_updated_rows'] | int,
             'deleted': row['num_deleted_rows'] | int, 'inserted': row['num_inserted_rows'] | int}) }}
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
    keywords) stays one identifier; qualified by `relation_alias` if given. -#}
{% macro _quote(name, relation_alias=none) %}
  {{- return((relation_alias ~ '.' if relation_alias else '') ~ '`' ~ (name | string) | replace('`', '``') ~ '`') -}}
{% endmacro %}


{#- "a.`x`, a.`y`": names quoted, optionally qualified and suffixed; with
    `lines`, one to a line (select targets). -#}
{% macro _column_list(names, relation_alias=none, suffix='', separator=', ', lines=false) %}
  {%- set parts = [] -%}
  {%- for name in names -%}
    {%- do parts.append(historize._quote(name, relation_alias) ~ suffix) -%}
  {%- endfor -%}
  {{- return(parts | join(',\n            ' if lines else separator)) -}}
{% endmacro %}


{#- "t.`a` = s.`b` and ...": a null-intolerant equi-join on key columns. -#}
{% macro _key_join(names, left_alias, right_alias, right_names=none) %}
  {%- set parts = [] -%}
  {%- for name in names -%}
    {%- set right = right_names[loop.index0] if right_names else name -%}
    {%- do parts.append(historize._quote(name, left_alias) ~ ' = ' ~ historize._quote(right, right_alias)) -%}
  {%- endfor -%}
  {{- return(parts | join(' and ')) -}}
{% endmacro %}


{#- The change set's key columns, `_historize_key_<i>`: the key of the select's
    row, or of the table's when the key is absent from the select. -#}
{% macro _change_set_keys(keys, source_alias, table_alias) %}
  {%- set parts = [] -%}
  {%- for name in keys -%}
    {%- do parts.append('coalesce(' ~ historize._quote(name, source_alias) ~ ', ' ~ historize._quote(name, table_alias)
        ~ ') as ' ~ historize._quote('_historize_key_' ~ loop.index0)) -%}
  {%- endfor -%}
  {{- return(parts | join(',\n        ')) -}}
{% endmacro %}


{#- The surrogate key of a version: a hash of the key's columns (of the
    relation `alias`) and the load_timestamp it began at. -#}
{% macro _version_key(keys, alias) %}
  {%- set expressions = [] -%}
  {%- for name in keys -%}{%- do expressions.append(historize._quote(name, alias)) -%}{%- endfor -%}
  {%- do expressions.append(historize.load_timestamp_sql()) -%}
  {{- return(historize.hash_key(expressions)) -}}
{% endmacro %}


{#- The `columns` (dbt Column objects) whose name is one of `names`, in order. -#}
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
  {%- set key_targets = historize._column_list(unique_key, lines=true) -%}
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
    {%- set null_key = historize._refusal('null_key', model_name, unique_key, label) -%}
    {%- set duplicated_key = historize._refusal('duplicated_key', model_name, unique_key, label) -%}
    {%- set width = unique_key | length -%}
    {%- set first = result.rows[0] -%}
    {%- if first[width + 1] == 1 -%}
      {{ exceptions.raise_compiler_error(null_key[0] ~ first[width + 3] ~ null_key[1]) }}
    {%- endif -%}
    {%- set examples = [] -%}
    {%- for row in result.rows -%}
      {%- do examples.append("(" ~ row[:width] | join(', ') ~ ") x" ~ row[width]) -%}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error(duplicated_key[0] ~ first[width + 2] ~ duplicated_key[1]
        ~ examples | join('; ') ~ duplicated_key[2]) }}
  {%- endif -%}
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
