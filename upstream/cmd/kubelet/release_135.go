//go:build drasim_k8s_1_35

// Release differences for 1.35 (see also release_before_137.go): the node getter takes no context.

package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/cm/dra"
	"k8s.io/kubernetes/pkg/kubelet/pluginmanager"
)

func nodeGetter(get func(context.Context) (*v1.Node, error)) dra.GetNodeFunc {
	return func() (*v1.Node, error) { return get(context.Background()) }
}

func runPluginManager(ctx context.Context, pm pluginmanager.PluginManager, ready readiness) {
	pm.Run(ctx, ready, ctx.Done())
}
