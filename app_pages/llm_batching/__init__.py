"""The LLM batching-strategy page (Yang et al. §IV-V): page script, inputs, views, figures, data."""
