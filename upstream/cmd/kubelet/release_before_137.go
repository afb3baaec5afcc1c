//go:build drasim_k8s_1_34 || drasim_k8s_1_35 || drasim_k8s_1_36

// Release differences shared by 1.34, 1.35 and 1.36: the plugin handler's methods take no
// context and the DRA manager has no Stop.

package main

import (
	"time"

	"k8s.io/kubernetes/pkg/kubelet/cm/dra"
	"k8s.io/kubernetes/pkg/kubelet/pluginmanager/cache"
)

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
	h.k.registered(name, endpoint, versions, err)
	return err
}

func (h registrationHandler) DeRegisterPlugin(name, endpoint string) {
	h.inner.DeRegisterPlugin(name, endpoint)
	h.k.deregistered(name, endpoint)
}
