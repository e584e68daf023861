{{ config(materialized='table') }}

-- Each sale with the product's list price as it was when the order was placed.
select
    order_id,
    product_id,
    ordered_at,
    quantity,
    product_list_price,
    quantity * product_list_price as amount
from (
    {{ historize.as_of_join(ref('aw_sales'), ref('rc_aw_product_hist'), 'ordered_at', 'product_id',
                            ['list_price', 'color'], prefix='product_') }}
) as sales
