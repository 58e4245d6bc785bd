"""Online-shopping domain: catalogue, orders, shipping, returns and promotions."""
