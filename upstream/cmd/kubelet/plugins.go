package main

import (
	"sort"

	"k8s.io/kubernetes/pkg/kubelet/pluginmanager"
)

// checkpointFile is the DRA manager's checkpoint name in its state directory
// (upstream's draManagerStateFileName).
const checkpointFile = "dra_manager_state"

// eventCheckpoint names the event line sent after each checkpoint write.
const eventCheckpoint = "checkpoint"

// pluginSocket is what upstream's plugin manager knows of one registration socket: whether
// its watcher reported it (desired), whether the plugin behind it is registered, and what
// the last failed registration attempt said. drasim learns registrations from this report.
type pluginSocket struct {
	Socket  string `json:"socket"`
	Desired bool   `json:"desired"`
	// UUID is the socket's generation in the desired state (a re-created socket gets a new one).
	UUID string `json:"uuid,omitempty"`
	// Registered: the plugin is in the actual state and no operation on the socket runs.
	Registered     bool     `json:"registered"`
	RegisteredUUID string   `json:"registeredUUID,omitempty"`
	Name           string   `json:"name,omitempty"`
	Endpoint       string   `json:"endpoint,omitempty"`
	Versions       []string `json:"versions,omitempty"`
	Pending        bool     `json:"pending"`
	// Error and ErrorAt (Unix nanoseconds) are the last failed attempt's error and time.
	Error   string `json:"error,omitempty"`
	ErrorAt int64  `json:"errorAt,omitempty"`
}

// pluginSockets turns the plugin manager's snapshot into the report, sorted by socket path.
// versions maps driver name + "\x00" + endpoint to the versions it registered with.
func pluginSockets(state pluginmanager.DrasimPluginState, versions map[string][]string) []pluginSocket {
	bySocket := map[string]*pluginSocket{}
	get := func(path string) *pluginSocket {
		if s, ok := bySocket[path]; ok {
			return s
		}
		s := &pluginSocket{Socket: path}
		bySocket[path] = s
		return s
	}
	for _, p := range state.Desired {
		s := get(p.SocketPath)
		s.Desired = true
		s.UUID = string(p.UUID)
	}
	for _, p := range state.Registered {
		s := get(p.SocketPath)
		s.Registered = true
		s.RegisteredUUID = string(p.UUID)
		s.Name = p.Name
		s.Endpoint = p.Endpoint
		s.Versions = versions[p.Name+"\x00"+p.Endpoint]
	}
	for path, op := range state.Operations {
		s := get(path)
		s.Pending = op.Pending
		if op.LastError != "" {
			s.Error = op.LastError
			s.ErrorAt = op.LastErrorTime.UnixNano()
		}
	}
	out := make([]pluginSocket, 0, len(bySocket))
	for _, s := range bySocket {
		if s.Pending {
			// Added to the actual state before the handler ran: not registered until it returns.
			s.Registered = false
		}
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Socket < out[j].Socket })
	return out
}
