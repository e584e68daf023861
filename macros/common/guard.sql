{#- Optimistic concurrency across a whole run. A run reads its table's Delta
    version (`_read_version`) right before it computes its change set, and every
    write it makes carries `_unchanged_since` in its source, which fails the
    statement when another writer committed rows after that version. Delta's
    own conflict detection covers a statement's own reads only; this covers the
    reads the run made before it. A load whose one read of the table's rows is
    its write's (scd2_hist's `merge` strategy, fivetran_history) needs no
    guard: Delta's commit fails it. Tables record each row's commit version
    (delta.enableRowTracking, set on every history table).

    The guard looks only at the rows in its scope (_guard_scope: the open
    versions, the current rows): every load that writes the table inserts,
    updates or removes at least one of them, so another run's commit shows
    there as a row committed after the version read, or as a different count.
    Its cost follows the open versions, not the history. -#}

{#- The guard's scope as a predicate on the history table as `alias`: the
    open versions of scd2_hist, the current rows of scd_type6. Those rows
    begin at their valid_from, which no load older than the table may
    precede. -#}
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
    `snapshot` is the table at that version, for a query to read:
    what a cached change set reads. Spark re-plans a cached query, and
    recomputes it, once a table it reads is written; of a version, no write
    changes it. So the plan and every write of the load read the same rows,
    and a write costs no re-planning of the change set after it. -#}
{% macro _read_version(relation, scope=none, counted=true) %}
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
    select count(*) as scope_rows
    {%- if scope %}
    from {{ relation }} as guarded
    where {{ scope }}
    {%- else %}
    from {{ relation }}
    {%- endif %}
  {%- endset -%}
  {{ return({'relation': relation, 'version': version, 'scope': scope, 'rows': run_query(count_sql).rows[0]['scope_rows'] | int,
             'snapshot': relation ~ ' version as of ' ~ version}) }}
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
    MERGE source.) Without `read`, a statement rendered on its own, the guard
    is true. -#}
{% macro _unchanged_since(read, cfg, refuse_older=true) %}
  {%- if read is none -%}
    {{ return({'join': '', 'predicate': 'true'}) }}
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
    it), and an error naming the table otherwise. With `refuse_older`,
    when a row in scope began after this load's load_timestamp (its
    valid_from), the other run's load was a later one: the error is then
    the refusal a rerun would get, not a conflict to retry (a late load's rows
    in scope may begin after it, so its guard's error is the conflict). -#}
{% macro _unchanged_since_column(read, cfg, refuse_older=true) %}
  {%- set relation = read.relation -%}
  {%- if read.rows is none -%}
    {{ exceptions.raise_compiler_error("historize: a write of " ~ relation ~ " was guarded by a read without its count") }}
  {%- endif -%}
  {%- set conflict = "historize: model " ~ cfg.model_name ~ ": " ~ relation ~ " was written by another run after version "
      ~ read.version ~ ", which this run read; nothing of this run was written to it. Rerun the model" -%}
  {%- set qualifier = 'guarded.' if read.scope else '' -%}
  {%- set message = historize._string_literal(conflict) -%}
  {%- if refuse_older and historize._guard_scope(cfg, 'guarded') -%}
    {%- set newest = 'max(' ~ historize._quote(cfg.valid_from, 'guarded') ~ ')' -%}
    {%- set refusal = historize._refusal('older_load', cfg.model_name, history=relation,
          detail=" (written by another run after version " ~ read.version ~ ", which this run read)") -%}
    {%- set message = "case when " ~ newest ~ " > " ~ historize.load_timestamp_sql() ~ " then concat("
          ~ historize._string_literal(refusal[0]) ~ ", cast(" ~ newest ~ " as string), "
          ~ historize._string_literal(refusal[1]) ~ ") else " ~ message ~ " end" -%}
  {%- endif -%}
  {#- Two lines: the caller indents the second to its place. -#}
  {{- return("(count(*) = " ~ read.rows ~ " and coalesce(max(" ~ qualifier ~ "_metadata.row_commit_version), -1) <= "
      ~ read.version ~ ")\nor raise_error(" ~ message ~ ") is null") -}}
{% endmacro %}
