// drasim's own hooks into the DRA manager, added to package dra at build time with
// go build -overlay (see drasim/gobuild.py). Upstream's files are not changed.

package dra

import (
	"context"
	"time"

	"k8s.io/kubernetes/pkg/kubelet/cm/dra/state"
)

// DrasimSetReconcilePeriod sets the period of the manager's own reconcile loop; call it
// before Start. drasim drives reconcile passes itself (DrasimReconcileNow) and sets a
// period long enough that the loop started by Start never runs a second time.
func (m *Manager) DrasimSetReconcilePeriod(period time.Duration) {
	m.reconcilePeriod = period
}

// DrasimReconcileNow runs one pass of the manager's reconcile loop now.
func (m *Manager) DrasimReconcileNow(ctx context.Context) {
	m.reconcileLoop(ctx)
}

// DrasimSetWipingDelay sets how long the plugin manager waits after a driver went away
// before it deletes the driver's ResourceSlices; call it after Start.
func (m *Manager) DrasimSetWipingDelay(delay time.Duration) {
	m.draPlugins.DrasimSetWipingDelay(delay)
}

// DrasimClaim is one entry of the manager's claim info cache.
type DrasimClaim struct {
	State    state.ClaimInfoState
	Prepared bool
}

// DrasimClaims is a snapshot of the claim info cache.
func (m *Manager) DrasimClaims() []DrasimClaim {
	m.cache.RLock()
	defer m.cache.RUnlock()
	out := make([]DrasimClaim, 0, len(m.cache.claimInfo))
	for _, info := range m.cache.claimInfo {
		out = append(out, DrasimClaim{State: *info.ClaimInfoState.DeepCopy(), Prepared: info.isPrepared()})
	}
	return out
}
