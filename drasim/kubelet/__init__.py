"""The emulated kubelet DRA manager: a port of pkg/kubelet/cm/dra. Pure logic behind ports."""
