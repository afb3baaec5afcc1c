// drasim's own hook into the DRA manager's checkpoint writes, added to package dra at
// build time with go build -overlay (see drasim/gobuild.py). Upstream's files are not changed.

package dra

import (
	"os"

	"k8s.io/kubernetes/pkg/kubelet/cm/dra/state"
)

// drasimReportingCheckpointer passes every Store on to the manager's own checkpointer and,
// when it succeeded, hands the file's bytes to report. The claim info cache calls Store
// with its lock held, so no other write comes between the store and the read.
type drasimReportingCheckpointer struct {
	inner  state.Checkpointer
	path   string
	report func([]byte)
}

func (c drasimReportingCheckpointer) GetOrCreate() (*state.Checkpoint, error) {
	return c.inner.GetOrCreate()
}

func (c drasimReportingCheckpointer) Store(checkpoint *state.Checkpoint) error {
	if err := c.inner.Store(checkpoint); err != nil {
		return err
	}
	if data, err := os.ReadFile(c.path); err == nil {
		c.report(data)
	}
	return nil
}

// DrasimReportCheckpointWrites makes the manager call report with the bytes of path (its
// checkpoint file) after each checkpoint it stores from now on; call it before Start.
func (m *Manager) DrasimReportCheckpointWrites(path string, report func([]byte)) {
	m.cache.checkpointer = drasimReportingCheckpointer{inner: m.cache.checkpointer, path: path, report: report}
}
