"""The floor under the agents: what the scheduler, the kubelets and the controllers stand on.

``runtime`` (the virtual-time loop, the clock, seeded RNG streams, the watch ``Channel``),
``inputs`` (reading what users hand us), ``api`` (the API objects, quantities, selectors,
validation), ``apiserver`` (the versioned store and the per-kind strategies, the watch hub),
``client`` (``Client``, ``Informer`` with indexers, retries, Events) and ``http`` (the
Kubernetes HTTP API that ``serve`` puts in front of the API server, with its certificates and
kubeconfig). Nothing here imports ``agents`` or ``emulator.app``; import-linter checks it.
"""
