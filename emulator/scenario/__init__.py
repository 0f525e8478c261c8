"""Scenario files: schema, loader (path-precise errors), runner, expectations."""
