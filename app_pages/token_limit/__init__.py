"""The LLM token-limit page (Yang et al. §III, §V-B): script, inputs, views, figures, data."""
