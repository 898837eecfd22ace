//go:build race

package remotewrite

// The race detector instruments memory accesses and allocates on its own,
// so allocation counts mean nothing under it.
const raceEnabled = true
