{{ config(materialized='table') }}

-- Every change to products after the first load: new, changed and deleted keys.
select
    product_id,
    color,
    list_price,
    change_kind,
    change_at
from (
    {{ historize.changes_since(ref('rc_aw_product_hist'), "timestamp'2026-01-01 06:00:00+00:00'") }}
) as changes
