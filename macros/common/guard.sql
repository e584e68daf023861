{#- Optimistic concurrency across a whole run. A run reads its table's Delta
    version (`_read_version`) right before it computes its change set, and every
    write it makes carries `_unchanged_since` in its source, which fails the
    statement when another writer committed rows after that version. Delta's
    own conflict detection covers a statement's own reads only; this covers the
    reads the run made before it. Tables record each row's commit version
    (delta.enableRowTracking, set on every history table).

    The guard looks only at the rows in its scope (_guard_scope: the open
    versions, the current rows): every load that writes the table inserts,
    updates or removes at least one of them, so another run's commit shows
    there as a row committed after the version read, or as a different count.
    Its cost follows the open versions, not the history. -#}

{#- The guard's scope as a predicate on the history table as `alias`: the
    open versions of scd2_hist, the current rows of scd_type6; none for
    fivetran_history, whose guard reads every row. Those rows begin at their
    valid_from, which no load older than the table may precede. -#}
{% macro _guard_scope(cfg, alias) %}
  {%- if cfg.kind == 'scd2_hist' -%}
    {{ return(historize._quote(cfg.valid_to, alias) ~ ' is null') }}
  {%- elif cfg.kind == 'scd_type6' -%}
    {{ return(historize._quote(cfg.current_flag, alias)) }}
  {%- endif -%}
  {{ return(none) }}
{% endmacro %}

{#- The table's newest Delta version, and how many rows in `scope` (a
    predicate on the table as `guarded`, _guard_scope's; none: all) it holds.
    `counted=false` leaves the count to a change set that reads the whole
    scope anyway (`_classified_with_scope_rows`; the block then sets `rows`).
    `rerun_started`, the column of the rows in scope that says when they
    began, also counts those a rerun of this load_timestamp would have
    written (`rerun_rows`): none, and no rerun conflict is possible while the
    guard holds. `snapshot` is the table at that version, for a query to read:
    what a cached change set reads. Spark re-plans a cached query, and
    recomputes it, once a table it reads is written; of a version, no write
    changes it. So the plan and every write of the load read the same rows,
    and a write costs no re-planning of the change set after it. -#}
{% macro _read_version(relation, scope=none, counted=true, rerun_started=none) %}
  {%- set history = run_query('describe history ' ~ relation ~ ' limit 1') -%}
  {%- set version = history.columns['version'].values()[0] | int -%}
  {%- if not counted -%}
    {{ return({'relation': relation, 'version': version, 'scope': scope, 'rows': none,
               'snapshot': relation ~ ' version as of ' ~ version}) }}
  {%- endif -%}
  {#- Counted on the table as it is now, not at `version` (time travel
      rebuilds that version's state, a cost of its own): a commit after
      `version` and before this count is seen by the guard as a row committed
      after it, or, if it only removed rows from the scope, was also seen by
      the change set, which is computed after this count. -#}
  {%- set count_sql -%}
    select
        count(*) as scope_rows,
        {%- if rerun_started %}
        count_if({{ historize._quote(rerun_started, 'guarded') }} = {{ historize.load_timestamp_sql() }}) as rerun_rows
        {%- else %}
        cast(null as bigint) as rerun_rows
        {%- endif %}
    {%- if scope %}
    from {{ relation }} as guarded
    where {{ scope }}
    {%- else %}
    from {{ relation }}
    {%- endif %}
  {%- endset -%}
  {%- set counted_row = run_query(count_sql).rows[0] -%}
  {{ return({'relation': relation, 'version': version, 'scope': scope, 'rows': counted_row['scope_rows'] | int,
             'rerun_rows': counted_row['rerun_rows'], 'snapshot': relation ~ ' version as of ' ~ version}) }}
{% endmacro %}


{#- The end of a change set query that reads every row in the guard's
    scope: its `classified` rows kept by `keep`, each with the scope's rows
    counted in the same query (`_historize_scope_rows`), one snapshot and no
    query of its own. A commit between the version read and the change set
    is then seen by the guard as a row committed after that version, or, if
    it only removed rows from the scope, in both the change set and the
    count. A load whose change set is empty writes nothing and needs no
    guard. -#}
{% macro _classified_with_scope_rows(history, cfg, keep) %}
    scope_rows as (
        select count(*) as _historize_scope_rows
        from {{ history }} as guarded
        where {{ historize._guard_scope(cfg, 'guarded') }}
    )

    select
        classified.*,
        scope_rows._historize_scope_rows
    from classified
    cross join scope_rows
    where {{ keep }}
{%- endmacro %}


{#- The guard of a write's source, {'join', 'predicate'}: `join` adds a one-row
    relation whose column is the guard (_unchanged_since_column) over the rows
    in scope of the relation `read` was taken from; `predicate` filters on it.
    (A joined aggregate: Spark resolves the row metadata column there in any
    MERGE source.) `within` names a one-row relation of the source that
    computes the guard's column already, so that the guard joins nothing:
    'newest', the checks' scan for the newest instant (_scd2_hist_newest_sql,
    given `read`); 'checks', the checks' relation `historize_checks`
    (_plan_checks_sql), whose column raises the guard's error before any
    check's. Without `read`, a statement rendered on its own, the guard is
    true. -#}
{% macro _unchanged_since(read, cfg, refuse_older=true, within=none) %}
  {%- if within == 'checks' -%}
    {{ return({'join': 'cross join historize_checks', 'predicate': 'historize_checks._historize_checked'}) }}
  {%- elif read is none -%}
    {{ return({'join': '', 'predicate': 'true'}) }}
  {%- elif within == 'newest' -%}
    {{ return({'join': '', 'predicate': 'newest._historize_unchanged'}) }}
  {%- endif -%}
  {%- set join -%}
        cross join (
            select
                {{ historize._unchanged_since_column(read, cfg, refuse_older=refuse_older) | indent(16) }} as _historize_unchanged
            {%- if read.scope %}
            from {{ read.relation }} as guarded
            where {{ read.scope }}
            {%- else %}
            from {{ read.relation }}
            {%- endif %}
        ) as unchanged_since
  {%- endset -%}
  {{ return({'join': join, 'predicate': 'unchanged_since._historize_unchanged'}) }}
{% endmacro %}


{#- The guard as one boolean aggregate over the rows of the relation `read`
    was taken from (alias `guarded` when the read has a scope): true while the
    rows in scope are those of that version (as many, none committed after
    it), and an error naming the table otherwise. With `filtered`, the
    aggregate reads more rows than the scope (it serves other checks too) and
    each of its aggregates keeps the rows in scope only. With `refuse_older`,
    when a row in scope began after this load's load_timestamp (its
    valid_from), the other run's load was a later one: the error is then
    the refusal a rerun would get, not a conflict to retry (a late load's rows
    in scope may begin after it, so its guard's error is the conflict). -#}
{% macro _unchanged_since_column(read, cfg, filtered=false, refuse_older=true) %}
  {%- set relation = read.relation -%}
  {%- if read.rows is none -%}
    {{ exceptions.raise_compiler_error("historize: a write of " ~ relation ~ " was guarded by a read without its count") }}
  {%- endif -%}
  {%- set conflict = "historize: model " ~ cfg.model_name ~ ": " ~ relation ~ " was written by another run after version "
      ~ read.version ~ ", which this run read; nothing of this run was written to it. Rerun the model" -%}
  {%- set qualifier = 'guarded.' if read.scope else '' -%}
  {%- set in_scope = ' filter (where ' ~ read.scope ~ ')' if filtered else '' -%}
  {%- set message = historize._string_literal(conflict) -%}
  {%- if refuse_older and historize._guard_scope(cfg, 'guarded') -%}
    {%- set newest = 'max(' ~ historize._quote(cfg.valid_from, 'guarded') ~ ')' ~ in_scope -%}
    {%- set refusal = historize._refusal('older_load', cfg.model_name, history=relation,
          detail=" (written by another run after version " ~ read.version ~ ", which this run read)") -%}
    {%- set message = "case when " ~ newest ~ " > " ~ historize.load_timestamp_sql() ~ " then concat("
          ~ historize._string_literal(refusal[0]) ~ ", cast(" ~ newest ~ " as string), "
          ~ historize._string_literal(refusal[1]) ~ ") else " ~ message ~ " end" -%}
  {%- endif -%}
  {#- Two lines: the caller indents the second to its place. -#}
  {{- return("(count(*)" ~ in_scope ~ " = " ~ read.rows ~ " and coalesce(max(" ~ qualifier ~ "_metadata.row_commit_version)"
      ~ in_scope ~ ", -1) <= " ~ read.version ~ ")\nor raise_error(" ~ message ~ ") is null") -}}
{% endmacro %}


{#- A load that is its write alone: the change set is computed inside the
    MERGE's source (a CTE `historize_changes`), and the plan's checks (NULL
    or duplicate keys, a load older than the table, a rerun over other data)
    raise from inside it (a CTE `historize_checks`), with the same messages
    as the plan query's, before Delta writes anything. No query runs before
    the write to compute or count the change set; the counts of what was
    written are read afterwards (a load that changes nothing commits nothing
    and reads nothing more). -#}

{#- The one-row relation of the plan's checks: its column
    `_historize_checked` is true, or the first failing check raises its
    refusal. The checks read the staged select `staged` (its keys, column
    pruned) and the table, never the change set, which Spark would compute
    again for them. `newest_sql` gives the newest instant already in the
    table (one row, column `newest_timestamp`); `conflicts_sql`, when a rerun
    of this load_timestamp may conflict, one row of _rerun_conflict_columns
    (`what` names what began at this load_timestamp). The guard
    (_unchanged_since's relation, joined in, or a column of `newest_sql`'s row
    that `guard.predicate` names) raises while its row is computed, before any
    check is evaluated, so a run overtaken by another gets the guard's error
    whatever else the table now shows. The key check groups the select by
    key: its rows with a NULL key (`null_key_rows`), and its duplicated keys
    (`duplicated_keys`), each {order, key columns, example} so that sorting
    puts the most repeated first, then by key, as _assert_unique_key does. -#}
{% macro _plan_checks_sql(cfg, history, staged, newest_sql, conflicts_sql, what, guard) %}
  {%- set null_key = historize._refusal('null_key', cfg.model_name, cfg.unique_key) -%}
  {%- set duplicated_key = historize._refusal('duplicated_key', cfg.model_name, cfg.unique_key) -%}
  {%- set older = historize._refusal('older_load', cfg.model_name, history=history) -%}
  {%- set rerun = historize._refusal('rerun_conflict', cfg.model_name, what=what) -%}
  {%- set text = historize._string_literal -%}
  {%- set keys = cfg.unique_key -%}
  {%- set key_names = [] -%}
  {%- for name in keys -%}{%- do key_names.append(historize._quote('_historize_key_' ~ loop.index0)) -%}{%- endfor -%}
  {%- set any_null = key_names | join(' is null or ') ~ ' is null' -%}
    select
        case
            when invalid_keys.null_key_rows > 0
                then raise_error(concat({{ text(null_key[0]) }}, cast(invalid_keys.null_key_rows as string), {{ text(null_key[1]) }}))
            when size(invalid_keys.duplicated_keys) > 0
                then raise_error(concat({{ text(duplicated_key[0]) }}, cast(size(invalid_keys.duplicated_keys) as string),
                    {{ text(duplicated_key[1]) }},
                    concat_ws('; ', transform(slice(array_sort(invalid_keys.duplicated_keys), 1, 5), duplicated -> duplicated.example)),
                    {{ text(duplicated_key[2]) }}))
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
                {{ historize._quote(name, 'src') }} as {{ key_names[loop.index0] }},
                {%- endfor %}
                count(*) as _historize_occurrences
            from {{ staged }} as src
            group by {{ historize._column_list(keys, 'src') }}
        ) as occurrences
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


{#- What a load's one MERGE did, from its statement's `result` (dbt's
    load_result): Delta's counts of rows {'affected', 'updated', 'deleted',
    'inserted'}, and, when it wrote and `with_metrics`, its commit's operation
    metrics (`metrics`, a mapping of names to numbers): those of the first
    MERGE after the version `read` that updated and inserted as many rows.
    (The guard failed this MERGE if another run wrote the rows it writes after
    that version; a session setting would not do to tag it, since dbt's
    threads share the session.) -#}
{% macro _merge_result(result, read, with_metrics=true) %}
  {%- set row = result.table.rows[0] -%}
  {%- set merged = {'affected': row['num_affected_rows'] | int, 'updated': row['num_updated_rows'] | int,
                    'deleted': row['num_deleted_rows'] | int, 'inserted': row['num_inserted_rows'] | int,
                    'metrics': none} -%}
  {%- if merged.affected == 0 or not with_metrics -%}
    {{ return(merged) }}
  {%- endif -%}
  {%- set history = run_query('describe history ' ~ read.relation ~ ' limit 10') -%}
  {%- for commit in history.rows | reverse if commit['operation'] == 'MERGE' and commit['version'] | int > read.version
        and merged.metrics is none -%}
    {%- set listed = commit['operationMetrics'] -%}
    {%- set parsed = listed if listed is mapping else fromjson(listed) -%}
    {%- set metrics = {} -%}
    {%- for name, value in parsed.items() -%}{%- do metrics.update({name: value | int}) -%}{%- endfor -%}
    {%- if metrics.get('numTargetRowsUpdated') == merged.updated and metrics.get('numTargetRowsInserted') == merged.inserted -%}
      {%- do merged.update({'metrics': metrics}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if merged.metrics is none -%}
    {{ exceptions.raise_compiler_error("historize: no commit of this run's MERGE in the history of "
        ~ read.relation ~ " after version " ~ read.version) }}
  {%- endif -%}
  {{ return(merged) }}
{% endmacro %}
