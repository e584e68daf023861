{{ config(materialized='table') }}

-- The rawcore snapshot of products for the load given by var('demo_load').
select
    {{ historize.hash_key(['product_id']) }} as rc_aw_product_key,
    product_id,
    product_name,
    color,
    list_price,
    discontinued_on
from {{ ref('aw_product_snapshots') }}
where load_number = {{ var('demo_load', 1) }}
