{#- Optimistic concurrency across a whole run. A run reads its table's Delta
    version (`_read_version`) right before it computes its change set, and every
    write it makes carries `_unchanged_since` in its source, which fails the
    statement when another writer committed rows after that version. Delta's
    own conflict detection covers a statement's own reads only; this covers the
    reads the run made before it. Tables record each row's commit version
    (delta.enableRowTracking, set on every history table). -#}

{#- The table's newest Delta version, and whether it holds rows at that version. -#}
{% macro _read_version(relation) %}
  {%- set history = run_query('describe history ' ~ relation ~ ' limit 1') -%}
  {%- set version = history.columns['version'].values()[0] | int -%}
  {%- set rows = run_query('select count(*) from ' ~ relation ~ ' version as of ' ~ version).rows[0][0] -%}
  {{ return({'relation': relation, 'version': version, 'empty': rows == 0}) }}
{% endmacro %}


{#- The guard of a write's source, {'join', 'predicate'}: `join` adds a one-row
    relation whose column is true while no row of the relation `read` was
    taken from was written after that version, and raises an error naming the
    table otherwise; `predicate` filters on it. An empty table has no rows to
    carry a version, so there any row is another run's. (A joined aggregate:
    Spark resolves the row metadata column there in any MERGE source.) -#}
{% macro _unchanged_since(read, model_name) %}
  {%- set relation = read.relation -%}
  {%- set message = "historize: model " ~ model_name ~ ": " ~ relation ~ " was written by another run after version "
      ~ read.version ~ ", which this run read; nothing of this run was written to it. Rerun the model" -%}
  {%- set test = 'count(*) = 0' if read.empty
        else 'coalesce(max(_metadata.row_commit_version), -1) <= ' ~ read.version -%}
  {%- set join -%}
        cross join (
            select {{ test }} or raise_error({{ historize._string_literal(message) }}) is null as _historize_unchanged
            from {{ relation }}
        ) as unchanged_since
  {%- endset -%}
  {{ return({'join': join, 'predicate': 'unchanged_since._historize_unchanged'}) }}
{% endmacro %}


{#- No guard: for rendering a statement on its own. -#}
{% macro _no_guard() %}
  {{ return({'join': '', 'predicate': 'true'}) }}
{% endmacro %}
