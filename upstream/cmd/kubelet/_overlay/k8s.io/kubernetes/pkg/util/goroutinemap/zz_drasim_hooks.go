// drasim's own hook into package goroutinemap, added at build time with go build -overlay
// (see drasim/gobuild.py). Upstream's files are not changed.

package goroutinemap

import "time"

// DrasimOperation is what the map knows of one named operation: whether it is running
// and, when an earlier run failed, that run's error and time.
type DrasimOperation struct {
	Pending       bool
	LastError     string
	LastErrorTime time.Time
}

// DrasimOperations is a snapshot of the operations the map holds, by name (a successful
// operation leaves the map; a failed one stays, with its backoff).
func DrasimOperations(m GoRoutineMap) map[string]DrasimOperation {
	grm, ok := m.(*goRoutineMap)
	if !ok {
		return nil
	}
	grm.lock.RLock()
	defer grm.lock.RUnlock()
	out := make(map[string]DrasimOperation, len(grm.operations))
	for name, op := range grm.operations {
		err, at := op.expBackoff.DrasimLastError()
		entry := DrasimOperation{Pending: op.operationPending, LastErrorTime: at}
		if err != nil {
			entry.LastError = err.Error()
		}
		out[name] = entry
	}
	return out
}
