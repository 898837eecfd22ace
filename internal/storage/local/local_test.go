package local

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/storage"
)

// TestMain lets the test binary stand in for tsbench ("parent": starts a "child" as Start
// starts a storage, prints its pid, waits) and for a storage ("child": waits).
func TestMain(m *testing.M) {
	switch os.Getenv("TSBENCH_TEST_PROC") {
	case "child":
		time.Sleep(time.Minute)
		os.Exit(0)
	case "parent":
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "TSBENCH_TEST_PROC=child")
		cmd.SysProcAttr = procAttr(os.Getenv("TSBENCH_TEST_KEEP") == "true")
		if err := cmd.Start(); err != nil {
			os.Exit(1)
		}
		_, _ = os.Stdout.WriteString(strconv.Itoa(cmd.Process.Pid) + "\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	case "fake-storage":
		fakeStorage()
	}
	os.Exit(m.Run())
}

// fakeStorage stands in for victoria-metrics: its first TSBENCH_TEST_FAILS starts find their
// port taken (counted in the file TSBENCH_TEST_COUNT); a later one answers on its address.
func fakeStorage() {
	count := os.Getenv("TSBENCH_TEST_COUNT")
	b, _ := os.ReadFile(count)
	n, _ := strconv.Atoi(string(b))
	if err := os.WriteFile(count, []byte(strconv.Itoa(n+1)), 0o600); err != nil {
		os.Exit(1)
	}
	var addr string
	for _, a := range os.Args[1:] {
		if v, ok := strings.CutPrefix(a, "-httpListenAddr="); ok {
			addr = v
		}
	}
	if fails, _ := strconv.Atoi(os.Getenv("TSBENCH_TEST_FAILS")); n < fails {
		_, _ = os.Stdout.WriteString("cannot start http server at " + addr + ": listen tcp " + addr + ": bind: address already in use\n")
		os.Exit(255)
	}
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})}
	_ = srv.ListenAndServe()
	os.Exit(1)
}

// TestStartTriesAnotherPort: a storage whose port was taken between tsbench asking for it and
// the storage binding it exits at once; Start tries a new port, twice at most, and an error
// shows the end of the storage's log (its dir is removed).
func TestStartTriesAnotherPort(t *testing.T) {
	for _, tc := range []struct {
		fails     int
		wantErr   bool
		wantStart string
	}{
		{fails: 1, wantStart: "2"},
		{fails: 3, wantErr: true, wantStart: "3"},
	} {
		dir := t.TempDir()
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "victoria-metrics"), []byte("#!/bin/sh\nexec "+exe+" \"$@\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", dir)
		t.Setenv("TSBENCH_TEST_PROC", "fake-storage")
		t.Setenv("TSBENCH_TEST_COUNT", filepath.Join(dir, "count"))
		t.Setenv("TSBENCH_TEST_FAILS", strconv.Itoa(tc.fails))
		l, err := Start(t.Context(), storage.KindVictoriaMetrics, "vm", false, slog.New(slog.DiscardHandler))
		if tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), "bind: address already in use") {
				t.Errorf("%d failing starts: error %v, want one that shows the log's bind error", tc.fails, err)
			}
		} else if err != nil {
			t.Errorf("%d failing start: %v, want a start on another port", tc.fails, err)
		} else if err := l.Stop(); err != nil {
			t.Error(err)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "count")); string(got) != tc.wantStart {
			t.Errorf("%d failing starts: started %s times, want %s", tc.fails, got, tc.wantStart)
		}
	}
}

// A storage tsbench started dies with tsbench, however tsbench ends (here SIGKILL, which
// nothing in tsbench can catch): it does not outlive it holding its port and data dir. A
// kept storage (-keep) outlives it.
func TestStorageDiesWithTsbench(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run("keep="+strconv.FormatBool(keep), func(t *testing.T) {
			parent := exec.Command(os.Args[0], "-test.run=^$")
			parent.Env = append(os.Environ(), "TSBENCH_TEST_PROC=parent", "TSBENCH_TEST_KEEP="+strconv.FormatBool(keep))
			out, err := parent.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			child, perr := strconv.Atoi(strings.TrimSpace(line))
			if err != nil || perr != nil {
				_ = parent.Process.Kill()
				t.Fatalf("read the child's pid: %v %v (%q)", err, perr, line)
			}
			t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
			_ = parent.Process.Kill()
			_ = parent.Wait()
			wait := 5 * time.Second // for the kernel to kill the child
			if keep {
				wait = 500 * time.Millisecond // for nothing to happen
			}
			deadline := time.Now().Add(wait)
			for alive(child) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if alive(child) == !keep {
				t.Errorf("child alive %v after its parent was killed, want %v", alive(child), keep)
			}
		})
	}
}

// alive reports whether pid runs: it exists and is not a zombie waiting for a reaper.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// requireBinary skips when a storage binary is missing, but fails under CI=true: CI installs it.
func requireBinary(t *testing.T, bin string) {
	t.Helper()
	if _, err := exec.LookPath(bin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not installed: scripts/install-deps.sh installs it", bin)
		}
		t.Skipf("%s not installed", bin)
	}
}

// TestStartStop starts and stops a storage of every family tsbench starts: once started it
// answers its /metrics pages, or for a family without one (InfluxDB) its readiness path.
func TestStartStop(t *testing.T) {
	for _, f := range storage.Families() {
		if f.Local == nil {
			continue
		}
		t.Run(string(f.Kind), func(t *testing.T) {
			requireBinary(t, f.Local.Binary)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			l, err := Start(ctx, f.Kind, "x", false, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			urls, want := l.Storage.MetricsURLs, "process_cpu_seconds_total"
			if len(urls) == 0 {
				urls, want = []string{l.URL + f.Local.ReadyPath[1:]}, ""
			}
			for _, u := range urls {
				resp, err := http.Get(u)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode/100 != 2 || !strings.Contains(string(body), want) {
					t.Errorf("GET %s: %d, %.200s; want %s in it", u, resp.StatusCode, body, want)
				}
			}
			// Each is the Debian package's binary (scripts/install-deps.sh): its version is the
			// package's. A binary first on PATH that no package installed would have none.
			if bin, _ := exec.LookPath(f.Local.Binary); strings.HasPrefix(bin, "/usr/") && !strings.HasSuffix(l.Version, " (Debian)") {
				t.Errorf("Version = %q, want the Debian package's version of %s", l.Version, bin)
			}
			if err := l.Stop(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-l.Exited():
			default:
				t.Error("process still running after Stop")
			}
			if _, err := os.Stat(l.DataDir); !os.IsNotExist(err) {
				t.Errorf("data dir left behind: %v", err)
			}
		})
	}
}

func TestStartMissingBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Start(context.Background(), storage.KindPrometheus, "prom", false, slog.New(slog.DiscardHandler))
	want := `prometheus not found on PATH: install the Debian package "prometheus"`
	if err == nil || len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Errorf("got %v, want prefix %q", err, want)
	}
}
