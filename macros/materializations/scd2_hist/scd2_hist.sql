{#- SCD Type 2 history (`_hist`) table kept from a current snapshot, or from change
    events (input='changes'). See docs/scd2_hist.md, docs/scd2_hist_changes.md and
    docs/how_a_load_runs.md. -#}
{% materialization scd2_hist, adapter='spark' %}
  {%- set cfg = historize._scd2_hist_config() -%}

  {#- A table that does not exist yet may be a renamed history table (from a `_hist` name). -#}
  {%- set relations = historize._history_relations(cfg, '_hist') -%}
  {%- set target_relation, existing_relation = relations.history, relations.existing -%}

  {{ run_hooks(pre_hooks) }}

  {#- A select dbt reads in part (--empty, --sample) leaves the table as it is. -#}
  {%- set left_as_is = historize._left_as_is(cfg, relations) -%}
  {%- if left_as_is -%}
    {{ historize._report_left_as_is(left_as_is) }}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
  {%- endif -%}

  {#- The record of every load, which a late load needs. -#}
  {%- set ledger = historize._load_ledger(target_relation) if cfg.out_of_order == 'reconcile' else none -%}

  {#- The select as a view; its columns decide the attributes. `load` is what every
      path reads. -#}
  {%- set select_columns = historize._stage_select(relations.staged, sql) -%}
  {%- set load = {
      'cfg': cfg,
      'relations': relations,
      'history': target_relation,
      'found': relations.found,
      'select_columns': select_columns,
      'columns': historize._scd2_hist_columns(cfg, select_columns),
      'ledger': ledger,
  } -%}

  {#- A snapshot's table made ready: taken over with adopt_from, or brought in line
      with the select (events bring theirs in line once they are checked). -#}
  {{ historize._scd2_hist_ready_table(load, sql) }}

  {#- One path per load (_scd2_hist_path). A path is its writes before the main
      statement (`_prepare`, when it has any), the main statement's text (`_sql`; none:
      nothing to write) and what the load did, read from that statement's result
      (`_result`). -#}
  {%- set path = historize._scd2_hist_path(load) -%}
  {{ historize._write_per_task(cfg, true) }}
  {%- set prepare = historize.get('_scd2_hist_' ~ path ~ '_prepare') -%}
  {%- if prepare -%}
    {{ prepare(load) }}
  {%- endif -%}
  {%- set main_sql = historize['_scd2_hist_' ~ path ~ '_sql'](load) -%}
  {%- if main_sql -%}
    {%- call statement('main', fetch_result=true) -%}
      {{ main_sql }}
    {%- endcall -%}
  {%- else -%}
    {%- call noop_statement(name='main', message='nothing to write', code='nothing to write', rows_affected=0) -%}{%- endcall -%}
  {%- endif -%}
  {{ historize._write_per_task(cfg, false) }}
  {%- set loaded = historize['_scd2_hist_' ~ path ~ '_result'](load, load_result('main')) -%}

  {{ historize._report_load(cfg, loaded) }}
  {%- if load.ledger -%}
    {{ historize._record_load(load.ledger, cfg, target_relation, loaded) }}
  {%- endif -%}
  {{ historize._drop_session_views(relations.cached + [relations.staged]) }}

  {#- Grants and docs, then post-hooks, as dbt's own materializations order them; a history
      table is never replaced, so grants another tool set stay unless the grants config says so. -#}
  {%- set grant_config = config.get('grants') -%}
  {%- do apply_grants(target_relation, grant_config, should_revoke=should_revoke(existing_relation, full_refresh_mode=false)) -%}
  {%- do persist_docs(target_relation, model) -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{#- The path a load takes, one of:
      events      input='changes' (_scd2_hist_events.sql)
      first_load  a snapshot into a table that does not exist (_scd2_hist_first_load.sql)
      beliefs     a snapshot into a bitemporal table, in time order, late or
                  restating a load (_scd2_hist_beliefs.sql)
      late        a snapshot older than the table's newest load, with out_of_order='reconcile'
                  (_scd2_hist_reconcile.sql)
      merge       a snapshot in time order, strategy 'merge' (_scd2_hist_merge.sql)
      ordered     a snapshot in time order, strategy 'ordered' (_scd2_hist_ordered.sql)
    Adding a path is adding its three macros and a line here. -#}
{% macro _scd2_hist_path(load) %}
  {%- if load.cfg.input == 'changes' -%}
    {{ return('events') }}
  {%- elif load.found.relation is none -%}
    {{ return('first_load') }}
  {%- elif load.cfg.bitemporal -%}
    {{ return('beliefs') }}
  {%- elif load.timeline and load.timeline.newest and load.timeline.newest > historize.load_timestamp() -%}
    {{ return('late') }}
  {%- endif -%}
  {{ return(load.cfg.strategy) }}
{% endmacro %}
