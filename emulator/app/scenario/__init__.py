"""Scenario files: schema, loader (path-precise errors; ``loader`` over ``readers``, ``walker``,
``verbs`` and ``timeline``), runner, expectations."""
