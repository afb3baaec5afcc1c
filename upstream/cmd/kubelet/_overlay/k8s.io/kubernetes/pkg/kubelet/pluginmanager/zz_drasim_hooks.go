// drasim's own hook into package pluginmanager, added at build time with go build -overlay
// (see drasim/gobuild.py). Upstream's files are not changed.

package pluginmanager

import (
	"k8s.io/kubernetes/pkg/kubelet/pluginmanager/cache"
	"k8s.io/kubernetes/pkg/kubelet/pluginmanager/reconciler"
	"k8s.io/kubernetes/pkg/util/goroutinemap"
)

// DrasimPluginState is a snapshot of the plugin manager: the sockets its watcher reported
// (desired), the plugins registered so far (actual) and the reconciler's operations by
// socket path.
type DrasimPluginState struct {
	Desired    []cache.PluginInfo
	Registered []cache.PluginInfo
	Operations map[string]goroutinemap.DrasimOperation
}

// DrasimState takes the snapshot; the zero value for a PluginManager of another type.
func DrasimState(m PluginManager) DrasimPluginState {
	pm, ok := m.(*pluginManager)
	if !ok {
		return DrasimPluginState{}
	}
	return DrasimPluginState{
		Desired:    pm.desiredStateOfWorld.GetPluginsToRegister(),
		Registered: pm.actualStateOfWorld.GetRegisteredPlugins(),
		Operations: reconciler.DrasimOperations(pm.reconciler),
	}
}
