//go:build drasim_k8s_1_36

// Release differences for 1.36: see release_before_137.go.

package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/cm/dra"
	"k8s.io/kubernetes/pkg/kubelet/pluginmanager"
)

func nodeGetter(get func(context.Context) (*v1.Node, error)) dra.GetNodeFunc { return get }

func runPluginManager(ctx context.Context, pm pluginmanager.PluginManager, ready readiness) {
	pm.Run(ctx, ready, ctx.Done())
}
