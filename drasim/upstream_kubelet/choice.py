"""``--kubelet emulated|upstream|upstream@<release>``: which DRA manager a run uses."""

from __future__ import annotations

from dataclasses import dataclass

from drasim import gobuild
from drasim.errors import ConfigError

EMULATED = "emulated"
UPSTREAM = "upstream"
PROGRAM = "kubelet"


@dataclass(frozen=True)
class KubeletChoice:
    """The parsed ``--kubelet`` value."""

    kind: str
    """``emulated`` or ``upstream``."""
    release: str | None = None
    """The pinned upstream release (``1.35.4``); None: the run's kubelet version's newest patch."""

    @property
    def upstream(self) -> bool:
        return self.kind == UPSTREAM

    @property
    def minor_version(self) -> str | None:
        """``1.35`` for a pinned release: the emulated profile the run uses beside it."""
        return None if self.release is None else ".".join(self.release.split(".")[:2])

    def __str__(self) -> str:
        return self.kind if self.release is None else f"{self.kind}@{self.release}"


def parse_kubelet_choice(text: str | None) -> KubeletChoice:
    """Parse ``--kubelet``; a ConfigError says what is accepted."""
    value = (text or EMULATED).strip()
    if value == EMULATED:
        return KubeletChoice(EMULATED)
    kind, _, release = value.partition("@")
    if kind != UPSTREAM:
        msg = f"--kubelet {value!r}: expected emulated, upstream or upstream@<release> (e.g. upstream@1.35.4)"
        raise ConfigError(msg)
    if not release:
        return KubeletChoice(UPSTREAM)
    try:
        return KubeletChoice(UPSTREAM, gobuild.parse_release(release).version)
    except gobuild.GoError as err:
        raise ConfigError(f"--kubelet {value!r}: {err}") from None


def release_for(choice: KubeletChoice, kubelet_version: str) -> str:
    """The upstream release to run for a kubelet version of the run (``1.37`` -> ``1.37.2``)."""
    if choice.release is not None:
        return choice.release
    try:
        return gobuild.parse_release(kubelet_version).version
    except gobuild.GoError as err:
        msg = f"--kubelet upstream: kubelet {kubelet_version} cannot run upstream: {err}"
        raise ConfigError(msg) from None


def upstream_binary(release: str, *, build: bool = True, quiet: bool = True) -> str:
    """The upstream kubelet binary for a release, built (and cached) when needed.

    Raises ConfigError naming what is missing (Go, a release the proxy does not serve, a
    compile error) so that front ends exit with status 2.
    """
    try:
        if not build:
            path = gobuild.cached(PROGRAM, release)
            if path is None:
                raise ConfigError(
                    f"the upstream kubelet for {release} is not built; run: drasim upstream build {release}"
                )
            return str(path)
        return str(gobuild.build(PROGRAM, release, quiet=quiet))
    except gobuild.GoError as err:
        raise ConfigError(f"--kubelet upstream needs the upstream kubelet for {release}: {err}") from None


def unavailable_reason(release: str | None = None) -> str | None:
    """Why the upstream kubelet cannot run here (for skips), or None."""
    problem = gobuild.go_problem()
    if problem:
        return problem
    try:
        gobuild.source_dir()
    except gobuild.GoError as err:
        return str(err)
    del release
    return None
