// Package local starts and stops the storages (of the families that say how: storage.Local)
// and the scrape agents (vmagent, Prometheus in agent mode) tsbench runs on this machine: each
// from its Debian package's binary, on a free loopback port, with a temporary dir. bench starts the
// embedded default's storages and scrape mode's agent with it; the e2e tests start theirs.
//
// Invariant: a process started here dies with tsbench unless it is kept (-keep), and Stop
// leaves neither the process nor its dir behind.
package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/storage"
)

// Process is a storage or an agent tsbench started on a free loopback port with a temporary
// data dir.
type Process struct {
	Name    string
	Kind    string
	URL     string // http://127.0.0.1:PORT/
	DataDir string
	LogPath string
	Storage config.Storage // as it goes into remoteStorages: URLs, pid, dataDir, metricsURLs
	// Settings are the flags it was started with beyond its address and paths: what the
	// run's figures depend on (its retention, what it answers), printed as the run's.
	Settings []string
	// Version is its binary's Debian package version ("1.79.5+ds1-2+b5 (Debian)"), "" for a
	// binary no package installed: the storage's own word, when it has one, is read later.
	Version string

	cmd     *exec.Cmd
	workDir string // holds DataDir, the log and any config file
	done    chan struct{}
	waitErr error
}

// ErrMissingBinary says which Debian package to install.
type ErrMissingBinary struct{ Binary, Package string }

func (e *ErrMissingBinary) Error() string {
	return fmt.Sprintf("%s not found on PATH: install the Debian package %q (make deps, or apt-get install -y --no-install-recommends %s)",
		e.Binary, e.Package, e.Package)
}

// Start starts a storage of the given kind named name on a free loopback port and waits until
// it is ready (or ctx ends, or it exits). Unless keep is set, the storage dies with tsbench.
func Start(ctx context.Context, kind storage.Kind, name string, keep bool, logger *slog.Logger) (*Process, error) {
	return StartFor(ctx, kind, name, keep, 0, logger)
}

// StartFor is Start for a run whose workload begins history in the past: the storage's
// retention covers it (storage.Family's RetentionFor).
func StartFor(ctx context.Context, kind storage.Kind, name string, keep bool, history time.Duration, logger *slog.Logger) (*Process, error) {
	return StartWith(ctx, kind, name, keep, history, nil, logger)
}

// StartWith is StartFor with extra command-line flags for the storage (SampleTypeFlags).
func StartWith(ctx context.Context, kind storage.Kind, name string, keep bool, history time.Duration, extra []string, logger *slog.Logger) (*Process, error) {
	f := kind.Family()
	sp := f.Local
	if sp == nil {
		return nil, fmt.Errorf("storage kind %q: tsbench starts only %s", kind, storage.KindsWhere(func(f storage.Family) bool { return f.Local != nil }))
	}
	bin, err := exec.LookPath(sp.Binary)
	if err != nil {
		return nil, &ErrMissingBinary{Binary: sp.Binary, Package: sp.Package}
	}
	// A free port is free when asked, not always when the storage binds it: another process
	// may take it in between. Then the storage exits at once, and a new port is tried.
	for attempt := 1; ; attempt++ {
		l, err := startOnce(ctx, sp, bin, string(kind), name, keep, f.RetentionFor(history), extra, logger)
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			return l, err
		}
		logger.Warn("storage port taken before it could bind; trying another", "storage", name, "attempt", attempt)
	}
}

// errPortTaken marks a storage that exited because its port was taken.
var errPortTaken = errors.New("port taken")

// startOnce starts the storage on a free port and waits until it is ready. On failure it
// stops it and removes its dir, so the error carries the end of its log.
func startOnce(ctx context.Context, sp *storage.Local, bin, kind, name string, keep bool, retentionDays int, extra []string, logger *slog.Logger) (*Process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	workDir, err := os.MkdirTemp("", "tsbench-"+name+"-")
	if err != nil {
		return nil, err
	}
	l := &Process{
		Name: name, Kind: kind, URL: fmt.Sprintf("http://127.0.0.1:%d/", port), Version: packageVersion(ctx, bin),
		DataDir: filepath.Join(workDir, "data"), LogPath: filepath.Join(workDir, "log.txt"),
		workDir: workDir, done: make(chan struct{}),
	}
	args, err := sp.Args(storage.Place{Addr: "127.0.0.1:" + strconv.Itoa(port), DataDir: l.DataDir, WorkDir: workDir, FreePort: freePort})
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(workDir))
	}
	l.Settings = sp.Settings(retentionDays)
	l.Settings = append(l.Settings, extra...)
	args = append(args, l.Settings...)
	logFile, err := os.Create(l.LogPath)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(workDir))
	}
	// Not canceled with ctx: the process outlives the load and is stopped by Stop.
	l.cmd = exec.CommandContext(context.WithoutCancel(ctx), bin, args...)
	l.cmd.Stdout, l.cmd.Stderr = logFile, logFile
	l.cmd.SysProcAttr = procAttr(keep)
	if err := l.cmd.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("start %s: %w", sp.Binary, err), logFile.Close(), os.RemoveAll(workDir))
	}
	go func() {
		l.waitErr = l.cmd.Wait()
		_ = logFile.Close()
		close(l.done)
	}()
	l.Storage = config.Storage{
		WriteURL:    l.URL + "api/v1/write",
		ReadURL:     l.URL,
		MetricsURLs: []string{l.URL + "metrics"},
		PID:         l.cmd.Process.Pid,
		DataDir:     l.DataDir,
	}
	if sp.URLs != nil {
		sp.URLs(l.URL, &l.Storage)
	}
	logger.Info("storage starting", "storage", name, "kind", kind, "url", l.URL, "pid", l.Storage.PID, "log", l.LogPath,
		"settings", strings.Join(l.Settings, " "))
	err = l.waitReady(ctx, l.URL+sp.ReadyPath[1:])
	if err == nil && sp.Setup != nil {
		err = sp.Setup(ctx, l.URL)
	}
	if err != nil {
		tail := logTail(l.LogPath, 5)
		if strings.Contains(tail, "address already in use") {
			err = fmt.Errorf("%w: %w", errPortTaken, err)
		}
		return nil, errors.Join(fmt.Errorf("%w; its log ended with:\n%s", err, tail), l.Stop())
	}
	return l, nil
}

// logTail is the last n lines of the log at path ("" if it cannot be read).
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// procAttr puts a storage in its own process group, so that a terminal's ^C reaches tsbench
// only. Unless the storage is kept, the kernel also kills it when tsbench dies, whatever the
// way: a second ^C's os.Exit, SIGKILL, a crash (Linux's parent-death signal). The signal
// follows the OS thread that started the process; Go ends a thread only when a goroutine
// locked to it exits, which tsbench never does.
func procAttr(keep bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if !keep {
		a.Pdeathsig = syscall.SIGKILL
	}
	return a
}

// waitReady polls the readiness URL for up to a minute.
func (l *Process) waitReady(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode/100 == 2 { // InfluxDB's /ping answers 204
				return nil
			}
		}
		select {
		case <-l.done:
			if l.waitErr == nil { // exit status 0: the message reads as it did with %v
				return fmt.Errorf("storage %s exited before it was ready (<nil>)", l.Name)
			}
			return fmt.Errorf("storage %s exited before it was ready (%w)", l.Name, l.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("storage %s not ready at %s: %w", l.Name, url, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WorkDir is the temporary dir of the process: its data dir, log and config files.
func (l *Process) WorkDir() string { return l.workDir }

// Exited is closed when the process has exited.
func (l *Process) Exited() <-chan struct{} { return l.done }

// Stop terminates the process (SIGTERM, then SIGKILL after 15 s) and removes its data dir.
// With -keep, bench does not call it: the storage outlives tsbench.
func (l *Process) Stop() error {
	select {
	case <-l.done:
	default:
		_ = l.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-l.done:
		case <-time.After(15 * time.Second):
			_ = l.cmd.Process.Kill()
			<-l.done
		}
	}
	return os.RemoveAll(l.workDir)
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	return port, ln.Close()
}

// packageVersion is the version of the Debian package that installed bin, with "(Debian)"
// after it, or "" when no package did (a binary built from source) or dpkg is not there.
func packageVersion(ctx context.Context, bin string) string {
	if target, err := filepath.EvalSymlinks(bin); err == nil {
		bin = target
	}
	out, err := exec.CommandContext(ctx, "dpkg-query", "-S", bin).Output()
	if err != nil {
		return ""
	}
	pkg, _, ok := strings.Cut(strings.TrimSpace(string(out)), ": ")
	if !ok || strings.Contains(pkg, "\n") {
		return ""
	}
	v, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Version}", pkg).Output()
	if err != nil || len(v) == 0 {
		return ""
	}
	return string(v) + " (Debian)"
}
