"""The kube-scheduler agent (queue, cache, framework, plugins, cycles)."""
