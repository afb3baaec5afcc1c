"""Action steps on API objects: apply, create, delete (what kubectl does)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drasim.runner.actions.registry import RESOURCE_V1, api_error, check_error, handles
from drasim.runner.backends import CLUSTER_SCOPED
from drasim.runner.context import StepContext
from drasim.runner.world import World
from drasim.scenario import steps as S  # noqa: N812 - S.Apply reads like the YAML


def _write_objects(
    world: World, objects: list[dict[str, Any]], write: Callable[[dict[str, Any]], object]
) -> str | None:
    """Write manifests in order; the first API error stops the step and is returned."""
    for obj in objects:
        manifest = world.api.manifest(obj)
        error = api_error(lambda: write(manifest))  # noqa: B023 - called at once
        if error is not None:
            return error
    return None


@handles(S.Apply)
def apply(world: World, args: S.Apply, ctx: StepContext) -> None:
    """kubectl apply."""
    check_error(args.expect_error, _write_objects(world, args.objects, world.api.runner_api.apply), "apply")


@handles(S.Create)
def create(world: World, args: S.Create, ctx: StepContext) -> None:
    """kubectl create."""
    check_error(args.expect_error, _write_objects(world, args.objects, world.api.runner_api.create), "create")


def _api_version(kind: str, given: str) -> str:
    if given:
        return given
    core = {"Pod", "Node", "Namespace", "Event", "ConfigMap", "Secret"}
    return "v1" if kind in core else RESOURCE_V1


@handles(S.Delete)
def delete(world: World, args: S.Delete, ctx: StepContext) -> None:
    """Delete one object."""
    api_version = _api_version(args.kind, args.api_version)
    name = world.api.backend.object_name(args.kind, args.name)
    namespace = "" if args.kind in CLUSTER_SCOPED else world.api.namespace(args.namespace)
    error = api_error(lambda: world.api.runner_api.delete(api_version, args.kind, name, namespace))
    check_error(args.expect_error, error, f"delete {args.kind} {args.namespace}/{args.name}")
