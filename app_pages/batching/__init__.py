"""The GPU dynamic-batching page (Inoue 2021): script, inputs, views, figures, data."""
