{#- The options every history materialization reads, validated in one place.
    Each materialization's own config macro starts from this mapping and adds
    its options and its technical column names:
      kind              the materialization
      model_name        for messages
      unique_key        lowercase key columns (required)
      former_names      names the model's table had before (a rename takes it over)
      tblproperties     Delta properties of the table: `defaults`, then the model's own
      version_key       the surrogate key column of a version, `<model>_key`
      guard_scope       the rows every write touches, a predicate on alias
                        `guarded` (the concurrency guard reads only those;
                        none: all rows), set by the materialization
      hash_column       the column holding each version's hash of its attributes,
                        recomputed after a schema change that alters them (none:
                        the table keeps no hash), set by the materialization
      guard_newest      the column of those rows holding when they began, for
                        materializations that refuse older loads (none: no
                        such rule): the guard's error is then the refusal
      partition_by      the table's partition columns when the materialization
                        lays the table out itself (none: the model's partition_by)
    Options are read from the model's meta first, then from config(): dbt 1.11
    wants custom keys under meta, and warns when config.get() finds one there. -#}
{% macro _history_config(kind, default_properties={}) %}
  {%- set extra_properties = historize._read_option('tblproperties', {}) -%}
  {%- if extra_properties is not mapping and execute -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ model.name ~ ": option 'tblproperties' is "
        ~ extra_properties ~ "; expected a mapping of property names to values") }}
  {%- endif -%}
  {%- set properties = {} -%}
  {%- do properties.update(default_properties) -%}
  {%- for name, value in (extra_properties if extra_properties is mapping else {}).items() -%}
    {%- do properties.update({historize._property_name(name): value | string}) -%}
  {%- endfor -%}
  {#- The vars every load writes with, checked before anything runs. -#}
  {%- if execute -%}
    {%- do historize.load_timestamp() -%}
    {%- do historize.load_run_id() -%}
  {%- endif -%}
  {%- set unique_key = historize._as_column_list('unique_key', historize._read_option('unique_key')) -%}
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
      'guard_scope': none,
      'guard_newest': none,
      'hash_column': none,
      'partition_by': none,
  }) }}
{% endmacro %}


{#- One option: from the model's meta, else from config(), else `default`.
    While parsing, both answer ''; the validators raise only when executing. -#}
{% macro _read_option(name, default=none) %}
  {%- set value = config.meta_get(name) -%}
  {%- if value is none or value == '' -%}
    {%- set value = config.get(name) -%}
  {%- endif -%}
  {{ return(default if value is none or value == '' else value) }}
{% endmacro %}


{#- A column name or a list of them, as a list of lowercase names. -#}
{% macro _as_column_list(option_name, value, required=true) %}
  {%- set names = historize._as_name_list(option_name, value) -%}
  {%- if not names and required and execute -%}
    {{ exceptions.raise_compiler_error(
        "historize: option '" ~ option_name ~ "' is required: a column name or a list of column names") }}
  {%- endif -%}
  {{ return(names) }}
{% endmacro %}


{#- A name or a list of names, as a list of lowercase names; [] when none. -#}
{% macro _as_name_list(option_name, value) %}
  {%- if value is none or value == [] or value == '' -%}
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


{% macro _assert_one_of(option_name, value, allowed) %}
  {%- if value not in allowed and execute -%}
    {{ exceptions.raise_compiler_error(
        "historize: option '" ~ option_name ~ "' is '" ~ value ~ "'; allowed: " ~ allowed | join(', ')) }}
  {%- endif -%}
{% endmacro %}


{#- A table property's name: letters, digits, dots, dashes and underscores
    only, so that it can be written between quotes as it is. -#}
{% macro _property_name(name) %}
  {%- if execute and not modules.re.match('^[A-Za-z0-9_.-]+$', name | string) -%}
    {{ exceptions.raise_compiler_error("historize: model " ~ model.name ~ ": table property name '" ~ name
        ~ "' may hold only letters, digits, '.', '-' and '_'") }}
  {%- endif -%}
  {{ return(name | string) }}
{% endmacro %}
