{#- Optimistic concurrency across a whole run. A run reads its table's Delta
    version (`_read_version`) right before it computes its change set, and every
    write it makes carries `_unchanged_since` in its source, which fails the
    statement when another writer committed rows after that version. Delta's
    own conflict detection covers a statement's own reads only; this covers the
    reads the run made before it. Tables record each row's commit version
    (delta.enableRowTracking, set on every history table).

    The guard looks only at the rows in the materialization's `guard_scope`
    (e.g. the open versions): every load that writes the table inserts,
    updates or removes at least one of them, so another run's commit shows
    there as a row committed after the version read, or as a different count.
    Its cost follows the open versions, not the history. -#}

{#- The table's newest Delta version, and how many rows in `scope` (a
    predicate on the table's rows as alias `guarded`; none: all) it holds.
    `counted=false` leaves the count to a change set that reads the whole
    scope anyway (`_classified_with_scope_rows`, then `_with_scope_rows`).
    `rerun_scope`, a further predicate, also counts the rows in scope a rerun
    of this load_timestamp would have written (`rerun_rows`): none, and no
    rerun conflict is possible while the guard holds. -#}
{% macro _read_version(relation, scope=none, counted=true, rerun_scope=none) %}
  {%- set history = run_query('describe history ' ~ relation ~ ' limit 1') -%}
  {%- set version = history.columns['version'].values()[0] | int -%}
  {%- if not counted -%}
    {{ return({'relation': relation, 'version': version, 'scope': scope, 'rows': none}) }}
  {%- endif -%}
  {#- Counted on the table as it is now, not at `version` (time travel
      rebuilds that version's state, a cost of its own): a commit after
      `version` and before this count is seen by the guard as a row committed
      after it, or, if it only removed rows from the scope, was also seen by
      the change set, which is computed after this count. -#}
  {%- set count_sql -%}
    select
        count(*) as scope_rows,
        {{ 'count_if(' ~ rerun_scope ~ ')' if rerun_scope else 'cast(null as bigint)' }} as rerun_rows
    {%- if scope %}
    from {{ relation }} as guarded
    where {{ scope }}
    {%- else %}
    from {{ relation }}
    {%- endif %}
  {%- endset -%}
  {%- set counted_row = run_query(count_sql).rows[0] -%}
  {{ return({'relation': relation, 'version': version, 'scope': scope, 'rows': counted_row['scope_rows'] | int,
             'rerun_rows': counted_row['rerun_rows']}) }}
{% endmacro %}


{#- The table at the version `read` was taken at, for a query to read: what a
    cached change set reads. Spark re-plans a cached query, and recomputes it,
    once a table it reads is written; of a version, no write changes it. So
    the plan and every write of the load read the same rows, and a write
    costs no re-planning of the change set after it. -#}
{% macro _as_read(read) %}
  {{- return(read.relation ~ ' version as of ' ~ read.version) -}}
{% endmacro %}


{#- The end of a change set query that reads every row in the guard's
    scope: its `classified` rows kept by `keep`, each with the scope's rows
    counted in the same query (`_historize_scope_rows`), one snapshot and no
    query of its own. A commit between the version read and the change set
    is then seen by the guard as a row committed after that version, or, if
    it only removed rows from the scope, in both the change set and the
    count. A load whose change set is empty writes nothing and needs no
    guard. -#}
{% macro _classified_with_scope_rows(history, scope, keep) %}
    scope_rows as (
        select count(*) as _historize_scope_rows
        from {{ history }} as guarded
        where {{ scope }}
    )

    select
        classified.*,
        scope_rows._historize_scope_rows
    from classified
    cross join scope_rows
    where {{ keep }}
{%- endmacro %}


{#- The plan column of that count. -#}
{% macro _scope_rows_column() %}
            max(_historize_scope_rows) as scope_rows
{%- endmacro %}


{#- A read without its count (`counted=false`), completed by the plan's. -#}
{% macro _with_scope_rows(read, plan) %}
  {{ return({'relation': read.relation, 'version': read.version, 'scope': read.scope,
             'rows': plan['scope_rows'] | int if plan['scope_rows'] is not none else none}) }}
{% endmacro %}


{#- The guard of a write's source, {'join', 'predicate'}: `join` adds a one-row
    relation whose column is the guard (_unchanged_since_column) over the rows
    in scope of the relation `read` was taken from; `predicate` filters on it.
    (A joined aggregate: Spark resolves the row metadata column there in any
    MERGE source.) -#}
{% macro _unchanged_since(read, cfg, refuse_older=true) %}
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
    when a row in scope began after this load's load_timestamp
    (cfg.guard_newest), the other run's load was a later one: the error is then
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
  {%- if refuse_older and cfg.guard_newest -%}
    {%- set newest = 'max(' ~ cfg.guard_newest ~ ')' ~ in_scope -%}
    {%- set refusal = historize._older_load_message(cfg, relation,
          " (written by another run after version " ~ read.version ~ ", which this run read)") -%}
    {%- set message = "case when " ~ newest ~ " > " ~ historize.load_timestamp_sql() ~ " then concat("
          ~ historize._string_literal(refusal[0]) ~ ", cast(" ~ newest ~ " as string), "
          ~ historize._string_literal(refusal[1]) ~ ") else " ~ message ~ " end" -%}
  {%- endif -%}
  {#- Two lines: the caller indents the second to its place. -#}
  {{- return("(count(*)" ~ in_scope ~ " = " ~ read.rows ~ " and coalesce(max(" ~ qualifier ~ "_metadata.row_commit_version)"
      ~ in_scope ~ ", -1) <= " ~ read.version ~ ")\nor raise_error(" ~ message ~ ") is null") -}}
{% endmacro %}


{#- The refusal of a load older than the table's newest instant, as the text
    before and after that instant; `detail` says where that instant came from. -#}
{% macro _older_load_message(cfg, history, detail='') %}
  {{- return(["historize: model " ~ cfg.model_name ~ ": load_timestamp " ~ historize.load_timestamp() ~ " is older than ",
      ", the newest time already in " ~ history ~ detail ~ "; loads must come in time order. Nothing was written"]) -}}
{% endmacro %}


{#- No guard: for rendering a statement on its own. -#}
{% macro _no_guard() %}
  {{ return({'join': '', 'predicate': 'true'}) }}
{% endmacro %}
