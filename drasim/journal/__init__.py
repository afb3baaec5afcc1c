"""The journal of a scenario run: every RPC, API call, checkpoint write and step, with timing.

:class:`Journal` implements the :class:`drasim.interfaces.Recorder` port. Event
kinds and their fields are listed in :mod:`drasim.journal.kinds` and docs/reports.md.
"""

from __future__ import annotations

from drasim.journal.calls import RpcCall, claims_of, method_matches
from drasim.journal.convert import to_jsonable
from drasim.journal.journal import Event, Journal
from drasim.journal.kinds import KIND_FIELDS, describe_event, short_method

__all__ = [
    "KIND_FIELDS",
    "Event",
    "Journal",
    "RpcCall",
    "claims_of",
    "describe_event",
    "method_matches",
    "short_method",
    "to_jsonable",
]
