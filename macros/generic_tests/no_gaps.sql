{% test no_gaps(model, unique_key=none, valid_from=none, valid_to=none, open_when=none, interval=none,
            step=none, deleted_when=none, version_column=none, since=none, known_at=none) %}
    {{ historize._temporal_invariant('no_gaps', model, unique_key, valid_from, valid_to, open_when, interval,
        step, deleted_when, version_column, since, known_at) }}
{% endtest %}
