{#- SCD Type 2 history (`_hist`) table kept from a current snapshot.
    See docs/scd2_hist.md and docs/how_a_load_runs.md. -#}
{% materialization scd2_hist, adapter='spark' %}
  {%- set cfg = historize._scd2_hist_config() -%}

  {#- A table that does not exist yet may be a renamed history table (from a `_hist` name). -#}
  {%- set relations = historize._history_relations(cfg, '_hist') -%}
  {%- set target_relation, existing_relation, source_view, changes_view, found = relations.target, relations.existing,
        relations.source, relations.changes, relations.found -%}

  {{ run_hooks(pre_hooks) }}

  {#- The record of every load, which a late load needs. -#}
  {%- set ledger = historize._load_ledger(target_relation) if cfg.out_of_order == 'reconcile' else none -%}

  {{ historize._log_full_refresh(cfg.model_name) }}

  {#- The select as a view, with its row_hash; its columns decide the attributes. -#}
  {%- set select_columns = historize._stage_select(source_view, sql) -%}
  {%- set columns = historize._scd2_hist_columns(cfg, select_columns) -%}
  {%- call statement('stage_source') -%}
    create or replace temporary view {{ source_view }} as
    {{ historize._scd2_hist_source_sql(cfg, sql, columns.attributes, columns.has_row_hash) }}
  {%- endcall -%}

  {%- if found.relation is none -%}
    {{ historize._assert_unique_key(source_view, cfg.unique_key, cfg.model_name) }}
    {{ historize._create_history_table(target_relation, historize._history_properties(cfg),
        select_sql=historize._scd2_hist_first_load_sql(cfg, source_view, columns.business), name='main',
        partition_by=cfg.partition_by) }}
    {%- set created = run_query("select count(*) as created_keys from " ~ target_relation).rows[0]["created_keys"] -%}
    {%- set plan = {'new': created, 'writes': created} -%}
    {{ historize._report_load(cfg, plan, created, "created " ~ target_relation) }}
  {%- else -%}
    {%- set state = historize._read_table_state(found.relation) -%}
    {%- set changes = historize._history_table_changes(cfg, found, state,
          historize._columns_named(select_columns, columns.business), [cfg.version_key] + cfg.technical_columns) -%}
    {#- Keys are checked with the change set below (one read of the select),
        unless the table must change first. -#}
    {%- if changes.changes_table -%}
      {{ historize._assert_unique_key(source_view, cfg.unique_key, cfg.model_name) }}
    {%- endif -%}
    {{ historize._sync_history_table(cfg, found, target_relation, state, changes, cfg.hash_column) }}
    {{ historize._rehash_after_schema_change(changes.plan, target_relation,
        none if columns.has_row_hash else historize._scd2_hist_rehash_sql(cfg, target_relation, columns.attributes)) }}

    {#- With out_of_order='reconcile', a load before the newest one is applied where it belongs. -#}
    {%- set timeline = historize._load_timeline(cfg, target_relation, ledger) if ledger else none -%}
    {%- if timeline and timeline.newest and timeline.newest > historize.load_timestamp() -%}
      {%- set plan = historize._scd2_hist_load_late(cfg, target_relation, relations, columns.business, timeline) -%}
      {{ historize._report_load(cfg, plan, plan.new + plan.changed + plan.deleted, "late, before " ~ timeline.next) }}
    {%- else -%}
      {#- Every write fails if another run writes the table after this read. -#}
      {%- if cfg.strategy == 'merge' -%}
        {%- set read = historize._read_version(target_relation, cfg.guard_scope, rerun_scope=cfg.rerun_scope) -%}
        {#- One MERGE computes the change set, checks the load and writes it. -#}
        {{ historize._write_per_task(cfg, true) }}
        {%- call statement('main', fetch_result=true) -%}
          {{ historize._scd2_hist_checked_merge_sql(cfg, target_relation, source_view, columns.business, read,
              rerun=read.rerun_rows != 0) }}
        {%- endcall -%}
        {{ historize._write_per_task(cfg, false) }}
        {%- set merged = historize._merge_result(load_result('main'), read) -%}
        {%- set plan = historize._scd2_hist_counts(historize._scd2_hist_merged_counts(merged), read.rows) -%}
      {%- else -%}
        {%- set read = historize._read_version(target_relation, cfg.guard_scope, counted=false) -%}
        {{ historize._stage_change_set(relations,
            historize._scd2_hist_changes_sql(cfg, historize._as_read(read), source_view, columns.business)) }}
        {%- set plan = historize._scd2_hist_plan(cfg, target_relation, changes_view) -%}
        {%- if plan.writes == 0 -%}
          {#- dbt requires a 'main' result: no statement, no commit (_report_load says why) -#}
          {%- call noop_statement('main', 'nothing to write', 'nothing to write', 0) -%}{%- endcall -%}
        {%- else -%}
          {#- The steps with rows to write, in order; each guards against writers since the
              one before it (the version read again), and the last is dbt's 'main'. -#}
          {%- set guarded = {'read': historize._with_scope_rows(read, plan)} -%}
          {{ historize._write_per_task(cfg, true) }}
          {%- set steps = historize._scd2_hist_steps(plan) -%}
          {%- for step in steps -%}
            {%- call statement('main' if loop.last else step) -%}
              {{ historize._scd2_hist_step_sql(step, cfg, target_relation, changes_view, columns.business,
                  guard=historize._unchanged_since(guarded.read, cfg)) }}
            {%- endcall -%}
            {%- if not loop.last -%}
              {%- do guarded.update({'read': historize._read_version(target_relation, cfg.guard_scope)}) -%}
            {%- endif -%}
          {%- endfor -%}
          {{ historize._write_per_task(cfg, false) }}
        {%- endif -%}
      {%- endif -%}
      {{ historize._report_load(cfg, plan, plan.writes, cfg.strategy) }}
    {%- endif -%}
  {%- endif -%}

  {%- if ledger -%}
    {{ historize._record_load(ledger, cfg, target_relation, 'written' if plan.writes > 0 else 'nothing to write', plan) }}
  {%- endif -%}

  {{ historize._drop_session_views(relations) }}

  {#- Grants and docs, then post-hooks, as dbt's own materializations order them; a history
      table is never replaced, so grants another tool set stay unless the grants config says so. -#}
  {%- set grant_config = config.get('grants') -%}
  {%- do apply_grants(target_relation, grant_config, should_revoke=should_revoke(existing_relation, full_refresh_mode=false)) -%}
  {%- do persist_docs(target_relation, model) -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
