{{ config(materialized='fivetran_history', unique_key=['id'], meta={'unmodified_string': 'unmod'}) }}

select * from {{ ref('stg_fivetran_changes') }}
