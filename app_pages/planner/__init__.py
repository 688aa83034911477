"""The capacity-planner page: the cheapest hardware, batching settings, token limit and
replica count that meet a latency SLA (``engine.planner``): script, inputs, the hardware
table, the plan file, data, views, figures."""
