//go:build !drasim_k8s_1_34 && !drasim_k8s_1_35 && !drasim_k8s_1_36

// Release differences, 1.37 (and the module's default release): the plugin handler's
// methods take a context, the node getter takes a context, the DRA manager has Stop.

package main

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/cm/dra"
	"k8s.io/kubernetes/pkg/kubelet/pluginmanager"
	"k8s.io/kubernetes/pkg/kubelet/pluginmanager/cache"
)

func nodeGetter(get func(context.Context) (*v1.Node, error)) dra.GetNodeFunc { return get }

func runPluginManager(ctx context.Context, pm pluginmanager.PluginManager, ready readiness) {
	pm.Run(ctx, ready, ctx.Done())
}

func stopManager(m *dra.Manager) { m.Stop() }

// registrationHandler passes registrations on to the DRA manager's handler, with drasim's
// call timeout, and notes which drivers are registered.
type registrationHandler struct {
	inner cache.PluginHandler
	k     *kubelet
}

func newRegistrationHandler(inner cache.PluginHandler, k *kubelet) cache.PluginHandler {
	return registrationHandler{inner, k}
}

func (h registrationHandler) ValidatePlugin(ctx context.Context, name, endpoint string, versions []string) error {
	return h.inner.ValidatePlugin(ctx, name, endpoint, versions)
}

func (h registrationHandler) RegisterPlugin(ctx context.Context, name, endpoint string, versions []string, timeout *time.Duration) error {
	err := h.inner.RegisterPlugin(ctx, name, endpoint, versions, h.k.callTimeout(timeout))
	h.k.registered(name, endpoint, versions, err)
	return err
}

func (h registrationHandler) DeRegisterPlugin(ctx context.Context, name, endpoint string) {
	h.inner.DeRegisterPlugin(ctx, name, endpoint)
	h.k.deregistered(name, endpoint)
}
