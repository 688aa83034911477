"""The autoscaling-for-a-latency-SLA page (Swayam): inputs, data, views, figures."""
