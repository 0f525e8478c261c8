"""Agents of the emulator: the scheduler, the kubelets, the controllers."""
