"""A recording, fault-injecting proxy on a DRA driver's two sockets.

The driver is told to put its registration socket in a directory of its own
(``driver_registry_dir``). The proxy watches that directory and, for every registration
socket the driver creates there, serves one of the same name in the kubelet's
``plugins_registry`` directory. A kubelet (drasim's emulated one, upstream's, any that reads
the registry directory) registers through it: ``GetInfo`` is forwarded to the driver and its
``endpoint`` replaced by the proxy's own DRA socket (in ``socket_dir``);
``NotifyRegistrationStatus`` is passed through. Every call on the DRA socket (any
``DRAPlugin`` version, ``DRAResourceHealth``) reaches the driver's socket: spliced, the bytes
copied unchanged and the HTTP/2 frames read on the side (:mod:`drasim.proxy.splice`,
:mod:`drasim.proxy.h2`), while no fault rule can apply; through a grpcio server that forwards
each call (:mod:`drasim.proxy.forward`) when rules are set.

Each call is journaled as an ``rpc`` event with the fields drasim's kubelet client writes
(:mod:`drasim.plugins.client`), so ``expectCalls`` and the reports read it unchanged, and
the scenario's plugin fault rules (:class:`drasim.faults.PluginFault`) are applied on the
wire (:mod:`drasim.proxy.forward`; docs/real-driver.md says what can and cannot be faked).

Python API (for any kubelet)::

    from drasim.proxy import start_proxy
    proxy = start_proxy("/var/lib/kubelet/plugins_registry", "/tmp/driver-registry",
                        "/tmp/proxy-sockets", recorder=my_recorder, driver_pid=1234)
    proxy.add_faults([PluginFault(rpc="NodePrepareResources", code="UNAVAILABLE", times=1)])
    ...
    proxy.stop()

Command line: ``drasim proxy --registry-dir D --driver-registry-dir D2 [--journal FILE]``.
"""

from __future__ import annotations

from drasim.faults import PROXY_CAPABILITY
from drasim.proxy.proxy import DEFAULT_POLL_INTERVAL, Proxy, ProxyConfig, start_proxy
from drasim.proxy.rules import FaultRules

__all__ = ["DEFAULT_POLL_INTERVAL", "PROXY_CAPABILITY", "FaultRules", "Proxy", "ProxyConfig", "start_proxy"]
