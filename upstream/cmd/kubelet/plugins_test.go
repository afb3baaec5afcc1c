package main

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/kubelet/pluginmanager"
	"k8s.io/kubernetes/pkg/kubelet/pluginmanager/cache"
	"k8s.io/kubernetes/pkg/util/goroutinemap"
)

func TestPluginSocketsMergesDesiredRegisteredAndOperations(t *testing.T) {
	failedAt := time.Unix(100, 5)
	state := pluginmanager.DrasimPluginState{
		Desired: []cache.PluginInfo{
			{SocketPath: "/r/b.sock", UUID: types.UID("u2")},
			{SocketPath: "/r/a.sock", UUID: types.UID("u1")},
			{SocketPath: "/r/c.sock", UUID: types.UID("u3")},
		},
		Registered: []cache.PluginInfo{
			{SocketPath: "/r/a.sock", UUID: types.UID("u1"), Name: "gpu", Endpoint: "/p/gpu.sock"},
			{SocketPath: "/r/c.sock", UUID: types.UID("u3"), Name: "nic", Endpoint: "/p/nic.sock"},
		},
		Operations: map[string]goroutinemap.DrasimOperation{
			"/r/b.sock": {LastError: "RegisterPlugin error -- boom", LastErrorTime: failedAt},
			"/r/c.sock": {Pending: true},
		},
	}
	got := pluginSockets(state, map[string][]string{"gpu\x00/p/gpu.sock": {"v1.DRAPlugin"}})
	if len(got) != 3 || got[0].Socket != "/r/a.sock" || got[1].Socket != "/r/b.sock" {
		t.Fatalf("sockets %+v", got)
	}
	if a := got[0]; !a.Desired || !a.Registered || a.Name != "gpu" || len(a.Versions) != 1 || a.Pending {
		t.Fatalf("registered socket %+v", a)
	}
	if b := got[1]; b.Registered || b.Error != "RegisterPlugin error -- boom" || b.ErrorAt != failedAt.UnixNano() {
		t.Fatalf("failed socket %+v", b)
	}
	if c := got[2]; c.Registered || !c.Pending {
		t.Fatalf("a socket whose registration runs is not registered yet: %+v", c)
	}
}
