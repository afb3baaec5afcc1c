// drasim's own hook into package exponentialbackoff, added at build time with
// go build -overlay (see drasim/gobuild.py). Upstream's files are not changed.

package exponentialbackoff

import "time"

// DrasimLastError is the error of the last failed run and when it was recorded (nil and
// the zero time when no run failed).
func (expBackoff *ExponentialBackoff) DrasimLastError() (error, time.Time) {
	return expBackoff.lastError, expBackoff.lastErrorTime
}
