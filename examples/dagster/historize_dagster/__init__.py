"""The demo's product history as Dagster assets (dagster-dbt): see definitions.py."""
