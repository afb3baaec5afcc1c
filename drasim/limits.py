"""Upper bounds on the sizes a scenario may ask for, so that a valid scenario runs in bounded
time and memory.

Each bound is declared on the field it limits, ``doc(..., maximum=...)`` for numbers and
``doc(..., max_items=...)`` for lists; the decoder enforces it (``file:line:col: path: must
be at most N``), the JSON Schema carries it as ``maximum``/``maxItems`` and the generated
reference in docs/scenarios.md prints it next to the field. A new field picks one of the
constants below (or its own) the same way. Bounds that span several fields (devices of all
drivers together, nested ``parallel``) are checked in :mod:`drasim.scenario.validation`.

The values sit far above what a real node or a meaningful test needs; where upstream
Kubernetes has a limit, the bound follows it.
"""

from __future__ import annotations

from typing import Any


def doc(text: str, **extra: Any) -> dict[str, Any]:
    """Field metadata: the description plus optional ``yaml`` (key override), ``internal`` (not a
    YAML key), ``minimum``, ``maximum`` (numbers) or ``max_items`` (lists): the bounds below."""
    return {"description": text, **extra}


RESOURCE_SLICE_MAX_DEVICES = 128
"""Devices in one ResourceSlice (upstream ``resourceapi.ResourceSliceMaxDevices``); a driver with
more devices publishes its pool as several slices."""

MAX_NODE_DEVICES = 4096
"""Devices the fake drivers of one node publish together: 32 full ResourceSlices."""

MAX_DRIVERS = 16
"""Drivers on one node."""

MAX_CLAIM_REQUESTS = 32
"""Requests in one claim (upstream ``resourceapi.DeviceRequestsMaxSize``)."""

MAX_CLAIM_DEVICES = 32
"""Devices allocated to one claim (upstream ``resourceapi.AllocationResultsMaxSize``)."""

MAX_STEPS = 10_000
"""Steps of one scenario (top level)."""

MAX_PARALLEL_STEPS = 64
"""Actions of one ``parallel`` step (each runs in its own thread)."""

MAX_OBJECTS = 10_000
"""Manifests in ``spec.objects`` or one ``apply``/``create`` step, after ``{file: ...}`` is inlined."""

MAX_CLAIMS = 1_000
"""Claims written with the ``spec.claims`` shorthand."""

MAX_DURATION = 86_400.0
"""Any nominal duration (timers, delays, downtimes, advanceClock): one day of kubelet time."""

MAX_TIME_SCALE = 10.0
"""Real seconds per nominal second (1 is the real kubelet's timing)."""

MAX_START_TIMEOUT = 600.0
"""Real seconds to wait for a driver process to register."""

MAX_TIMER_RUNS = 10_000
"""Reconcile passes and pod-worker retries the nominal clock may fire in one run. Checked while
the scenario runs (the number depends on periods, pods and failures): a run that needs more ends
in an error naming the step. A day of ``advanceClock`` with the default 60 s reconcile period and
no failing pod takes 1440."""

MAX_COUNT = 1_000_000
"""Counts that only number things (fault ``times``/``after``, the counts expectations compare)."""

MAX_HTTP_STATUS = 599
"""The largest HTTP status code an API-server fault can answer with."""

MAX_FILE_BYTES = 1024 * 1024
"""Bytes of one scenario file or ``{file: ...}`` manifest, checked before it is read: six
hundred times the largest file of the built-in library, and room for :data:`MAX_STEPS` steps."""

MAX_DECODED_VALUES = 100_000
"""YAML values (mappings, lists, scalars) one scenario file may decode to once aliases are
expanded (``{file: ...}`` manifests included): a guard against alias bombs, a thousand times
the largest file of the built-in library."""

DEFAULT_SCENARIO_TIMEOUT = 600.0
"""Real seconds one scenario may run by default (``drasim run --scenario-timeout``,
``--drasim-scenario-timeout``): the limit for what validation cannot bound, real waits and
the work a driver under test does."""
