{#- A model's options: read from its meta, then from config(), validated, and
    checked for names that are not options of its kind. -#}

{#- The options every history materialization reads, validated in one place.
    Each materialization's own config macro starts from this mapping and adds
    its options and its technical column names:
      kind              the materialization
      model_name        for messages
      unique_key        lowercase key columns (required)
      former_names      names the model's table had before (a rename takes it over)
      tblproperties     Delta properties of the table: every history table's, then the model's own
      version_key       the surrogate key column of a version, `<model>_key`
      hash_column       the column holding each version's hash of its attributes,
                        recomputed after a schema change that alters them (none:
                        the table keeps no hash), set by the materialization
      partition_by      the table's partition columns when the materialization
                        lays the table out itself (none: the model's partition_by)
    Options are read from the model's meta first, then from config(): dbt 1.11
    wants custom keys under meta, and warns when config.get() finds one there. -#}
{% macro _history_config(kind) %}
  {{ historize._refuse_unknown_options(kind) }}
  {%- set extra_properties = historize._read_option('tblproperties', {}) -%}
  {%- if extra_properties is not mapping and execute -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ model.name ~ ": option 'tblproperties' is "
        ~ extra_properties ~ "; expected a mapping of property names to values") }}
  {%- endif -%}
  {#- Every history table: column mapping by name (renames), row tracking (the
      guard reads each row's commit version). -#}
  {%- set properties = {
      'delta.columnMapping.mode': 'name',
      'delta.enableRowTracking': 'true',
  } -%}
  {%- for name, value in (extra_properties if extra_properties is mapping else {}).items() -%}
    {#- Written between quotes as it is: letters, digits, dots, dashes and underscores only. -#}
    {%- if execute and not modules.re.match('^[A-Za-z0-9_.-]+$', name | string) -%}
      {{ exceptions.raise_compiler_error("historize: model " ~ model.name ~ ": table property name '" ~ name
          ~ "' may hold only letters, digits, '.', '-' and '_'") }}
    {%- endif -%}
    {%- do properties.update({name | string: value | string}) -%}
  {%- endfor -%}
  {#- The vars every load writes with, checked before anything runs. -#}
  {%- if execute -%}
    {%- do historize.load_timestamp() -%}
    {%- do historize.load_run_id() -%}
  {%- endif -%}
  {%- set unique_key = historize._as_name_list('unique_key', historize._read_option('unique_key'), required=true) -%}
  {#- The table records its key as one property, the names joined by commas. -#}
  {%- for name in unique_key if ',' in name and execute -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ model.name ~ ": unique_key column '" ~ name
        ~ "' holds a comma, which the table property historize.unique_key (the key's columns, separated by "
        ~ "commas) cannot record; rename the column in the select") }}
  {%- endfor -%}
  {{ return({
      'kind': kind,
      'model_name': model.name,
      'unique_key': unique_key,
      'former_names': historize._as_name_list('former_names', historize._read_option('former_names', [])),
      'tblproperties': properties,
      'version_key': (model.name ~ '_key') | lower,
      'hash_column': none,
      'partition_by': none,
      'large_table': none,
  }) }}
{% endmacro %}


{#- One option: from the model's meta, else from config(), else `default`;
    when `one_of` lists the values allowed, any other is refused. While
    parsing, both answer ''; the validators raise only when executing. -#}
{% macro _read_option(name, default=none, one_of=none) %}
  {%- set value = config.meta_get(name) -%}
  {%- if value is none or value == '' -%}
    {%- set value = config.get(name) -%}
  {%- endif -%}
  {%- set value = default if value is none or value == '' else value -%}
  {%- if one_of is not none and value not in one_of and execute -%}
    {{ exceptions.raise_compiler_error(
        "historize: option '" ~ name ~ "' is '" ~ value ~ "'; allowed: " ~ one_of | join(', ')) }}
  {%- endif -%}
  {{ return(value) }}
{% endmacro %}


{#- A name or a list of names, as a list of lowercase names; [] when none,
    unless the option is `required`. -#}
{% macro _as_name_list(option_name, value, required=false) %}
  {%- if value is none or value == [] or value == '' -%}
    {%- if required and execute -%}
      {{ exceptions.raise_compiler_error(
          "historize: option '" ~ option_name ~ "' is required: a column name or a list of column names") }}
    {%- endif -%}
    {{ return([]) }}
  {%- endif -%}
  {%- set names = [value] if value is string else value -%}
  {%- if (names is mapping or names is not iterable) and execute -%}
    {{ exceptions.raise_compiler_error(
        "historize: option '" ~ option_name ~ "' is " ~ value ~ "; expected a name or a list of names") }}
  {%- endif -%}
  {%- set result = [] -%}
  {%- for name in names -%}
    {%- if (name is not string or name | trim == '') and execute -%}
      {{ exceptions.raise_compiler_error(
          "historize: option '" ~ option_name ~ "' holds " ~ name ~ "; every entry must be a name") }}
    {%- endif -%}
    {%- do result.append(name | string | trim | lower) -%}
  {%- endfor -%}
  {{ return(result) }}
{% endmacro %}


{#- Fails the model, before anything is written, on a key of its meta or
    config() that looks meant as an option of `kind` but is not one: an option
    of another kind (naming the kinds that take it), or a name within two edits
    of one of the kind's options (one edit for names of five characters or
    fewer) or differing from it in case only. Any other key of meta is the
    user's own and stays allowed, as do dbt's own config keys. -#}
{% macro _refuse_unknown_options(kind) %}
  {%- if not execute -%}{{ return(none) }}{%- endif -%}
  {%- set common = ['unique_key', 'tblproperties', 'former_names'] -%}
  {%- set adoption = ['adopt_from', 'adopt_repair'] -%}
  {%- set options_by_kind = {
      'scd2_hist': common + adoption + ['adopt_columns', 'strategy', 'out_of_order', 'input', 'sequence_by', 'deleted_when',
                    'bitemporal', 'deletion_vectors_from_mb'],
      'scd_type6': common + ['type0_columns', 'type1_columns', 'type3_columns', 'deletes', 'audit', 'actor'],
      'fivetran_history': common + adoption + ['tmax', 'unmodified_string', 'op_column'],
  } -%}
  {%- set options = options_by_kind[kind] -%}
  {#- The keys the user set: in meta, and in config() or YAML (dbt's record of
      them as written, which leaves out the defaults of dbt's own keys). -#}
  {%- set given = ((model.config.meta or {}).keys() | list) + ((model.unrendered_config or {}).keys() | list) -%}
  {%- for key in given | map('string') | unique | sort if key not in options -%}
    {%- set takers = [] -%}
    {%- for other, other_options in options_by_kind.items() if key in other_options -%}
      {%- do takers.append(other) -%}
    {%- endfor -%}
    {%- if takers -%}
      {{ exceptions.raise_compiler_error("historize: model " ~ model.name ~ ": option '" ~ key ~ "' is not an option of "
          ~ kind ~ "; it is one of " ~ takers | join(' and ') ~ ". Nothing was written") }}
    {%- endif -%}
    {%- set near = [] -%}
    {%- for option in options -%}
      {%- set allowed = 1 if option | length <= 5 else 2 -%}
      {#- Names whose lengths differ by more are farther apart than that. -#}
      {%- if (key | length - option | length) | abs <= allowed -%}
        {%- set edits = historize._edit_distance(key | lower, option) -%}
        {%- if edits <= allowed -%}{%- do near.append((edits, option)) -%}{%- endif -%}
      {%- endif -%}
    {%- endfor -%}
    {%- if near -%}
      {{ exceptions.raise_compiler_error("historize: model " ~ model.name ~ ": unknown option '" ~ key
          ~ "'; did you mean '" ~ (near | sort | first)[1] ~ "'?") }}
    {%- endif -%}
  {%- endfor -%}
{% endmacro %}


{#- The Levenshtein distance of two names: the fewest insertions, deletions
    and substitutions of one character that turn `left` into `right`. -#}
{% macro _edit_distance(left, right) %}
  {%- set rows = [range(right | length + 1) | list] -%}
  {%- for i in range(left | length) -%}
    {%- set row = [i + 1] -%}
    {%- for j in range(right | length) -%}
      {%- do row.append([rows[-1][j + 1] + 1, row[j] + 1, rows[-1][j] + (0 if left[i] == right[j] else 1)] | min) -%}
    {%- endfor -%}
    {%- do rows.append(row) -%}
  {%- endfor -%}
  {{ return(rows[-1][-1]) }}
{% endmacro %}
