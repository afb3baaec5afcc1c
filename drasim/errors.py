"""The exception hierarchy shared by every layer.

Every error a user can cause derives from :class:`DrasimError`; the CLI and the
pytest plugin print its message and never a traceback.
"""

from __future__ import annotations


class DrasimError(Exception):
    """Base class of all errors drasim raises on purpose."""


class ConfigError(DrasimError):
    """Bad input from a user: a flag, a file, a value. The message says what was expected."""


class CheckpointError(DrasimError):
    """A checkpoint file could not be read or written."""


class CorruptCheckpointError(CheckpointError):
    """The checkpoint's checksum or structure is wrong (upstream: "checkpoint is corrupted")."""


class ApiError(DrasimError):
    """An error answer from an API server, shaped like a Kubernetes ``Status``.

    ``code`` is the HTTP status code and ``reason`` the Kubernetes reason
    (``NotFound``, ``Conflict``, ...). ``str()`` gives the message as client-go would
    print it.
    """

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message

    @classmethod
    def not_found(cls, resource: str, name: str) -> ApiError:
        """The error a real API server gives for a missing object."""
        return cls(404, "NotFound", f'{resource} "{name}" not found')

    def __str__(self) -> str:
        return self.message


class RpcError(DrasimError):
    """A failed gRPC call, printed the way Go's status package prints it.

    ``code`` is the Go-style code name (``DeadlineExceeded``, ``Unavailable``, ...),
    which is what the kubelet's error strings and metrics contain.
    """

    def __init__(self, code: str, details: str) -> None:
        super().__init__(f"rpc error: code = {code} desc = {details}")
        self.code = code
        self.details = details


class DriverNotRegisteredError(DrasimError):
    """No plugin instance is registered for a driver name (upstream wording)."""

    def __init__(self, driver_name: str) -> None:
        if driver_name:
            super().__init__(f"DRA driver {driver_name} is not registered")
        else:
            super().__init__("DRA driver name is empty")
        self.driver_name = driver_name


class KubeletError(DrasimError):
    """An error returned by the emulated kubelet's DRA manager (upstream message text)."""


class ScenarioError(ConfigError):
    """A scenario file is malformed. ``problems`` holds every ``file:line:col: path: message``."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class ExpectationFailedError(DrasimError):
    """A scenario expectation did not hold. The message shows expected versus actual."""
