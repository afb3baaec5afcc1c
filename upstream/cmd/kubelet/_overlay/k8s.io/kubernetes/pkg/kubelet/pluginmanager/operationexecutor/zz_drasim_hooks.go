// drasim's own hook into package operationexecutor, added at build time with
// go build -overlay (see drasim/gobuild.py). Upstream's files are not changed.

package operationexecutor

import "k8s.io/kubernetes/pkg/util/goroutinemap"

// DrasimOperations is a snapshot of the executor's register and unregister operations,
// keyed by socket path.
func DrasimOperations(oe OperationExecutor) map[string]goroutinemap.DrasimOperation {
	e, ok := oe.(*operationExecutor)
	if !ok {
		return nil
	}
	return goroutinemap.DrasimOperations(e.pendingOperations)
}
