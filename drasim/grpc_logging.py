"""Keep gRPC's C-core INFO lines off the user's terminal.

grpcio logs some INFO lines to stderr whatever the application does, e.g.
``chttp2_transport.cc:1403] unix:/.../dra.sock: Got goaway [2] ... Cancelling all calls``
whenever a plugin's server is stopped or killed while the kubelet has a call or a health
stream open on it, which scenarios do on purpose. They mean nothing to a driver author
and clutter the output of ``drasim`` and of pytest. gRPC reads ``GRPC_VERBOSITY`` once, when
it initialises, so this must run before the first ``import grpc`` of the process. A value the
user set (``GRPC_VERBOSITY=debug`` to look into a transport problem) is kept.
"""

from __future__ import annotations

import os

DEFAULT_VERBOSITY = "ERROR"


def quiet_grpc_logs() -> None:
    """Set ``GRPC_VERBOSITY=ERROR`` unless the environment already says otherwise."""
    os.environ.setdefault("GRPC_VERBOSITY", DEFAULT_VERBOSITY)
