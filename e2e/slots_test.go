package e2e

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// machineSlots is how many e2e tests run at once on this machine, whichever go test runs
// them: each test that starts storages holds one of as many files in slotDir, locked with
// flock for as long as it runs, and the kernel frees a slot whose process died. One suite
// alone never waits (its -parallel is the same 8: setParallel). Two side by side (two make
// test, a CI job beside someone's) take turns, where each ran 8 tests of its own and the 16
// starved their storages into minutes of lag (issue 37's load runs).
const machineSlots = 8

// slotDir holds the slots' files, shared by every e2e run of every checkout on the machine.
var slotDir = filepath.Join(os.TempDir(), "tsbench-e2e-slots")

// parallel runs t beside the other tests (t.Parallel) once it holds a slot of the machine's,
// until it ends: every test that starts storages calls it first, so its own time bounds
// start once it runs. A test whose parallel subtests start the storages calls t.Parallel
// and leaves the slots to them (a parent holding one while its subtests wait could hold all).
func parallel(t *testing.T) {
	t.Helper()
	t.Parallel()
	asked := time.Now()
	slot := takeSlot(t, slotDir)
	t.Cleanup(func() { _ = slot.Close() }) // closing the file releases its lock
	if waited := time.Since(asked); waited > time.Second {
		t.Logf("waited %s for one of the machine's %d e2e slots: another e2e run holds the rest", waited.Round(time.Second), machineSlots)
	}
}

// takeSlot returns the file of a free slot of the pool in dir, locked, once there is one.
func takeSlot(t *testing.T, dir string) *os.File {
	t.Helper()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatalf("e2e slots: %v", err)
	}
	for {
		for i := range machineSlots {
			if f := trySlot(t, filepath.Join(dir, strconv.Itoa(i))); f != nil {
				return f
			}
		}
		time.Sleep(200*time.Millisecond + rand.N(200*time.Millisecond))
	}
}

// trySlot locks the slot's file at path without waiting: nil when another test holds it.
func trySlot(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		t.Fatalf("e2e slots: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil
	}
	return f
}

// TestSlotHeldUntilClosed: a slot taken is refused to any other open of its file, in this
// process as in another (flock locks an open file, not a process), until its test closes it.
// In a pool of its own: the machine's may all be held by another e2e run (one such wait took
// 3 minutes, holding up this run's every test, as this one is not parallel).
func TestSlotHeldUntilClosed(t *testing.T) {
	slot := takeSlot(t, t.TempDir())
	if other := trySlot(t, slot.Name()); other != nil {
		_ = other.Close()
		t.Fatalf("slot %s taken twice", slot.Name())
	}
	_ = slot.Close()
	again := trySlot(t, slot.Name())
	if again == nil {
		t.Fatalf("slot %s still held once closed", slot.Name())
	}
	_ = again.Close()
}
