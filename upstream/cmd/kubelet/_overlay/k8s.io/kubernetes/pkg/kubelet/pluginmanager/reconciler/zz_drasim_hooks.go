// drasim's own hook into package reconciler, added at build time with go build -overlay
// (see drasim/gobuild.py). Upstream's files are not changed.

package reconciler

import (
	"k8s.io/kubernetes/pkg/kubelet/pluginmanager/operationexecutor"
	"k8s.io/kubernetes/pkg/util/goroutinemap"
)

// DrasimOperations is a snapshot of the reconciler's register and unregister operations,
// keyed by socket path.
func DrasimOperations(r Reconciler) map[string]goroutinemap.DrasimOperation {
	rc, ok := r.(*reconciler)
	if !ok {
		return nil
	}
	return operationexecutor.DrasimOperations(rc.operationExecutor)
}
