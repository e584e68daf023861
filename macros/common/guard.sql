{#- Optimistic concurrency across a whole run. A run reads its table's Delta
    version (`_read_version`) right before it computes its change set, and every
    write it makes carries `_unchanged_since` in its source, which fails the
    statement when another writer committed rows after that version. Delta's
    own conflict detection covers a statement's own reads only; this covers the
    reads the run made before it. A load whose one read of the table's rows is
    its write's (scd2_hist's `merge` strategy, fivetran_history, scd_type6
    without an audit) needs no guard: Delta's commit fails it. Tables record each row's commit version
    (delta.enableRowTracking, set on every history table).

    The guard looks only at the rows in its scope, a predicate on the table
    as `guarded` that the kind passes (the open versions of scd2_hist, the
    current rows of scd_type6 with an audit; each begins at its valid_from, which no load
    older than the table may precede): every load that writes the table inserts,
    updates or removes at least one of them, so another run's commit shows
    there as a row committed after the version read, or as a different count.
    Its cost follows the open versions, not the history. -#}

{#- The table's newest Delta version, and how many rows in `scope` (a
    predicate on the table as `guarded`; none: all) it holds.
    `counted=false` leaves the count to a change set that reads the whole
    scope anyway (its `_historize_scope_rows`; the load then sets `rows`).
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




{#- The guard of a write's source: a one-row relation whose column
    `_historize_unchanged` is true while the rows in scope of the relation
    `read` was taken from are those of that version (as many, none committed
    after it), and raises an error naming the table otherwise. The write
    cross joins it and keeps its rows where that column is true. (A joined
    aggregate: Spark resolves the row metadata column there in any MERGE
    source.) With `refuse_older`, when a row in scope began after this load's
    load_timestamp (its valid_from), the other run's load was a later one: the
    error is then the refusal a rerun would get, not a conflict to retry (a
    late load's rows in scope may begin after it, so its guard's error is the
    conflict). Without `read`, a statement rendered on its own, it is true. -#}
{% macro _unchanged_since(read, cfg, refuse_older=true) %}
  {%- if read is none -%}
    {{ return('select true as _historize_unchanged') }}
  {%- endif -%}
  {%- set relation = read.relation -%}
  {%- if read.rows is none -%}
    {{ exceptions.raise_compiler_error("historize: a write of " ~ relation ~ " was guarded by a read without its count") }}
  {%- endif -%}
  {%- set message = historize._string_literal("historize: model " ~ cfg.model_name ~ ": " ~ relation
        ~ " was written by another run after version " ~ read.version ~ ", which this run read; nothing of this run "
        ~ "was written to it. Rerun the model") -%}
  {%- if refuse_older -%}
    {%- set newest = 'max(' ~ historize._quote(cfg.valid_from, 'guarded') ~ ')' -%}
    {%- set message = "case when " ~ newest ~ " > " ~ historize.load_timestamp_sql() ~ " then "
          ~ historize._refusal('older_load', cfg.model_name, ['cast(' ~ newest ~ ' as string)'], history=relation,
              detail=" (written by another run after version " ~ read.version ~ ", which this run read)", sql=true)
          ~ " else " ~ message ~ " end" -%}
  {%- endif -%}
  {%- set guard_sql -%}
    select
        (count(*) = {{ read.rows }} and coalesce(max({{ 'guarded.' if read.scope else '' }}_metadata.row_commit_version), -1) <= {{ read.version }})
        or raise_error({{ message }}) is null as _historize_unchanged
    {%- if read.scope %}
    from {{ relation }} as guarded
    where {{ read.scope }}
    {%- else %}
    from {{ relation }}
    {%- endif %}
  {%- endset -%}
  {{ return(guard_sql) }}
{% endmacro %}


{#- The rows of `changes` (alias `chg`) that a write takes, each passing the
    guard `guard` (_unchanged_since): a whole query, a MERGE's source. -#}
{% macro _guarded_rows_sql(changes, guard) %}
    select chg.*
    from {{ changes }} as chg
    cross join (
        {{ guard | indent(4) }}
    ) as unchanged_since
    where unchanged_since._historize_unchanged
{% endmacro %}
