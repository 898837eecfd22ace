package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

// TestSyncWriterSerializes writes to one buffer as a run's log and its progress line do, from
// two goroutines: under -race, writes that are not serialized are reported, and lines would be
// lost or torn.
func TestSyncWriterSerializes(t *testing.T) {
	var buf bytes.Buffer
	mu := &sync.Mutex{}
	var wg sync.WaitGroup
	for _, w := range []io.Writer{syncWriter{mu, &buf}, syncWriter{mu, &buf}} {
		wg.Go(func() {
			for range 1000 {
				fmt.Fprintln(w, "a whole line")
			}
		})
	}
	wg.Wait()
	if got := strings.Count(buf.String(), "a whole line\n"); got != 2000 {
		t.Errorf("%d whole lines, want 2000", got)
	}
}
