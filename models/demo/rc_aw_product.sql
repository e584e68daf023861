{{ config(materialized='table') }}

-- The rawcore snapshot of products for the load given by var('demo_load').
-- From load 4 on its schema changes: product_name is renamed product_title,
-- list_price widens to decimal(14,2), size is new and discontinued_on is gone.
select
    {{ historize.hash_key(['product_id']) }} as rc_aw_product_key,
    product_id,
{%- if var('demo_load', 1) | int >= 4 %}
    product_name as product_title,
    color,
    cast(list_price as decimal(14, 2)) as list_price,
    size
{%- else %}
    product_name,
    color,
    list_price,
    discontinued_on
{%- endif %}
from {{ ref('aw_product_snapshots') }}
where load_number = {{ var('demo_load', 1) }}
