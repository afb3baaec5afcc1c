"""Upstream's own DRA manager as drasim's kubelet (``--kubelet upstream``).

:mod:`.process` starts ``upstream/cmd/kubelet`` (built by :mod:`drasim.gobuild`) and talks
to it over its JSON-lines control protocol; :mod:`.adapter` gives it the method names the
runner calls on the emulated :class:`drasim.kubelet.manager.Manager`; :mod:`.choice` parses
``--kubelet upstream[@1.35.4]`` and says what is missing when it cannot run.
"""
