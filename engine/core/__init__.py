"""Engine code shared by every model, and nothing model-specific.

* ``domains``     each parameter's domain, declared once (validation, slider bounds, fuzzing)
* ``stats``       simulation statistics: batch-means confidence intervals, percentiles
* ``jit``         the optional-numba switch for simulator loops
* ``token_laws``  output-token-length laws (scipy-like, incl. empirical samples)
* ``service_laws`` service-time laws of one server (scipy frozen laws, measured samples)
* ``roots``       vectorised root finding: the smallest real or integer meeting a target
"""
