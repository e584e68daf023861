{#- Optimistic concurrency across a whole run. A run reads its table as of the
    version it found at its start (`_delta_version`) and every write it makes
    carries `_unchanged_since_predicate`, which fails the statement when another
    writer committed rows after that version. Delta's own conflict detection
    covers a write's own statement only; this covers the reads before it. -#}

{#- The table's newest Delta version, and whether it holds rows at that version. -#}
{% macro _delta_version(relation) %}
  {%- set history = run_query('describe history ' ~ relation ~ ' limit 1') -%}
  {%- set version = history.columns['version'].values()[0] | int -%}
  {%- set rows = run_query('select count(*) from ' ~ relation ~ ' version as of ' ~ version).rows[0][0] -%}
  {{ return({'version': version, 'empty': rows == 0}) }}
{% endmacro %}


{#- A predicate for a write's source: true while no row of `relation` was
    written after `read` (from `_delta_version`), else an error. Rows carry
    their commit version (delta.enableRowTracking); an empty table has no rows
    to carry it, so there any row is another run's. -#}
{% macro _unchanged_since_predicate(relation, read, model_name) %}
  {%- set message = "historize: model " ~ model_name ~ ": " ~ relation ~ " was written by another run after version "
      ~ read.version ~ ", which this run read; nothing of this run was written to it. Rerun the model" -%}
  {%- if read.empty -%}
    ((select count(*) from {{ relation }}) = 0
  {%- else -%}
    (coalesce((select max(_metadata.row_commit_version) from {{ relation }}), -1) <= {{ read.version }}
  {%- endif %}
        or raise_error('{{ message | replace("'", "\\'") }}') is null)
{% endmacro %}
