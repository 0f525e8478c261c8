"""Example out-of-tree scheduler plugins, loaded like any third-party plugin through
``schedulerOptions.plugins`` (``{Name: "package.module:Class"}``) or the ``kube_emulator.plugins``
entry-point group — never through the in-tree registry.

* ``coscheduling``: ``Coscheduling``, Permit-based gang scheduling (pod-group label and
  min-available annotation).
"""
