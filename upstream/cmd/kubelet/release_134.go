//go:build drasim_k8s_1_34

// Release differences for 1.34: the plugin handler's methods take no context, the node getter takes none, the plugin manager's Run takes none.

package main

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/cm/dra"
	"k8s.io/kubernetes/pkg/kubelet/pluginmanager"
	"k8s.io/kubernetes/pkg/kubelet/pluginmanager/cache"
)

func nodeGetter(get func(context.Context) (*v1.Node, error)) dra.GetNodeFunc {
	return func() (*v1.Node, error) { return get(context.Background()) }
}

func runPluginManager(ctx context.Context, pm pluginmanager.PluginManager, ready readiness) {
	pm.Run(ready, ctx.Done())
}

// stopManager: this release's DRA manager has no Stop; cancelling the context ends it.
func stopManager(*dra.Manager) {}

// registrationHandler passes registrations on to the DRA manager's handler, with drasim's
// call timeout, and notes which drivers are registered.
type registrationHandler struct {
	inner cache.PluginHandler
	k     *kubelet
}

func newRegistrationHandler(inner cache.PluginHandler, k *kubelet) cache.PluginHandler {
	return registrationHandler{inner, k}
}

func (h registrationHandler) ValidatePlugin(name, endpoint string, versions []string) error {
	return h.inner.ValidatePlugin(name, endpoint, versions)
}

func (h registrationHandler) RegisterPlugin(name, endpoint string, versions []string, timeout *time.Duration) error {
	err := h.inner.RegisterPlugin(name, endpoint, versions, h.k.callTimeout(timeout))
	h.k.registered(name, endpoint, err)
	return err
}

func (h registrationHandler) DeRegisterPlugin(name, endpoint string) {
	h.inner.DeRegisterPlugin(name, endpoint)
	h.k.deregistered(name, endpoint)
}
