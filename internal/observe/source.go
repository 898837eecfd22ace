package observe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/tsbench/tsbench/internal/storage"
)

// Figures a source may give; the names are those of results.json.
const (
	figCPU      = "cpuCores"
	figRSS      = "rssBytes"
	figDisk     = "diskBytes"
	figRead     = "diskReadBytesPerSecond"
	figWrite    = "diskWriteBytesPerSecond"
	figIngested = "ingestedSamples"
	figActive   = "activeSeries"
)

// Sample is one collection: cumulative counters (CPU seconds, read and written bytes,
// ingested samples) and current values (RSS, disk bytes, active series). A nil figure is
// unknown, and Missing says why.
type Sample struct {
	CPUSeconds, RSSBytes, DiskBytes, ReadBytes, WriteBytes, Ingested, ActiveSeries *float64
	// SeriesCreated is the storage's own count of series it created since it started
	// (series.go); nil where it has none. A cluster's is the sum over the components that
	// count them (each replica of a replicated series counted).
	SeriesCreated *float64

	Missing map[string]string
	// Absent holds the figures the source does not expose at all (vmselect has no
	// vm_data_size_bytes): a cluster sum leaves such a component out, where a component
	// that exposes a figure but cannot give it now makes the sum unknown.
	Absent map[string]bool
	Kind   storage.Kind // storage kind the metric names reveal, or ""
	// Start identifies the process (start time in clock ticks since boot from /proc, or
	// process_start_time_seconds): when it changes, the counters restarted from zero.
	Start *float64
	// IngestedRank is the rank in ingestMetrics of the metric Ingested came from: a cluster
	// adds only the components with the best rank (distributors, not ingesters).
	IngestedRank int
}

func (s *Sample) miss(figure, reason string) {
	if s.Missing == nil {
		s.Missing = map[string]string{}
	}
	s.Missing[figure] = reason
}

// absent marks a figure the source does not expose at all.
func (s *Sample) absent(figure, reason string) {
	s.miss(figure, reason)
	if s.Absent == nil {
		s.Absent = map[string]bool{}
	}
	s.Absent[figure] = true
}

// Source gives one storage's (or tsbench's own) resource figures.
type Source interface {
	Collect(ctx context.Context, now time.Time) (Sample, error)
}

// procSource reads a local process from /proc (with prometheus/procfs) and walks its data dir.
type procSource struct {
	root    string // "/proc", or testdata
	pid     int    // 0: no process
	self    bool   // read root/self instead of pid
	dataDir string // "": no data dir
}

func (p procSource) Collect(_ context.Context, _ time.Time) (Sample, error) {
	var s Sample
	if p.self || p.pid != 0 {
		p.readProc(&s)
	} else {
		for _, f := range []string{figCPU, figRSS, figRead, figWrite} {
			s.miss(f, "no pid")
		}
	}
	if p.dataDir == "" {
		s.miss(figDisk, "no dataDir")
	} else {
		n, err := dirBytes(p.dataDir)
		if err != nil {
			s.miss(figDisk, err.Error())
		} else {
			s.DiskBytes = &n
		}
	}
	s.absent(figActive, "/proc does not give a storage's series: set metricsURLs")
	return s, nil
}

// readProc fills CPU and the start time from stat, RSS from status and IO from io. A process
// that is gone leaves them unknown ("process PID exited"); an unreadable io file (another
// user's process) leaves only disk IO unknown.
func (p procSource) readProc(s *Sample) {
	fail := func(reason string) {
		for _, f := range []string{figCPU, figRSS, figRead, figWrite} {
			if s.Missing[f] == "" {
				s.miss(f, reason)
			}
		}
	}
	pfs, err := procfs.NewFS(p.root)
	if err != nil {
		fail(err.Error())
		return
	}
	var proc procfs.Proc
	if p.self {
		proc, err = pfs.Self()
	} else {
		proc, err = pfs.Proc(p.pid)
	}
	var stat procfs.ProcStat
	if err == nil {
		stat, err = proc.Stat()
	}
	switch {
	case errors.Is(err, fs.ErrNotExist) && p.self:
		fail(filepath.Join(p.root, "self") + " does not exist")
		return
	case errors.Is(err, fs.ErrNotExist):
		fail(fmt.Sprintf("process %d exited", p.pid))
		return
	case err != nil:
		fail(err.Error())
		return
	}
	cpu, start := stat.CPUTime(), float64(stat.Starttime)
	s.CPUSeconds, s.Start = &cpu, &start
	if status, err := proc.NewStatus(); err != nil {
		s.miss(figRSS, err.Error())
	} else {
		rss := float64(status.VmRSS) // procfs gives bytes
		s.RSSBytes = &rss
	}
	if pio, err := proc.IO(); err != nil {
		s.miss(figRead, err.Error())
		s.miss(figWrite, err.Error())
	} else {
		read, write := float64(pio.ReadBytes), float64(pio.WriteBytes)
		s.ReadBytes, s.WriteBytes = &read, &write
	}
}

// dirBytes is what `du -L --apparent-size` counts: the size of every file under dir,
// following symbolic links, each file (device and inode) once however many links it has.
func dirBytes(dir string) (float64, error) {
	seen := map[[2]uint64]bool{}
	var total float64
	var walk func(path string) error
	walk = func(path string) error {
		fi, err := os.Stat(path) // follows links
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path != dir { // removed while we walk (a merge), a dangling link
				return nil
			}
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			key := [2]uint64{uint64(st.Dev), st.Ino}
			if seen[key] {
				return nil
			}
			seen[key] = true
		}
		if !fi.IsDir() {
			if fi.Mode().IsRegular() {
				total += float64(fi.Size())
			}
			return nil
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		for _, e := range entries {
			if err := walk(filepath.Join(path, e.Name())); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(dir); err != nil {
		return 0, fmt.Errorf("measure %s: %w", dir, err)
	}
	return total, nil
}
