// drasim's own hook into the DRA plugin manager, added to package plugin at build time
// with go build -overlay (see drasim/gobuild.py). Upstream's files are not changed.

package plugin

import "time"

// DrasimSetWipingDelay sets the delay before the ResourceSlices of a driver that went
// away are deleted. Wipes already queued keep the time they were queued with.
func (pm *DRAPluginManager) DrasimSetWipingDelay(delay time.Duration) {
	pm.mutex.Lock()
	defer pm.mutex.Unlock()
	pm.wipingDelay = delay
}
