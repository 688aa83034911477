"""The LLM serving page (vLLM-style continuous batching, chunked prefill, paged KV cache):
page script, inputs, data, views, figures, answer."""
