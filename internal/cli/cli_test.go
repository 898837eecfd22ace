package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"tsbench": func() { os.Exit(Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) },
		// tsbench-signals is tsbench ended by its first SIGINT or SIGTERM, as cmd/tsbench is.
		"tsbench-signals": func() {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
			stop()
			os.Exit(code)
		},
		// tsbench-code is tsbench that also prints its exit code last on stderr, for scripts
		// that check which non-zero code it was.
		"tsbench-code": func() {
			code := Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
			fmt.Fprintf(os.Stderr, "exit code %d\n", code)
			os.Exit(code)
		},
	})
}

// TestScript runs the CLI scripts in testdata/script: the test binary acts as tsbench.
func TestScript(t *testing.T) {
	t.Parallel() // its scripts run side by side, and beside the other tests
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: os.Getenv("UPDATE") != "",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"fakestorage": fakeStorage,
			"waitgrep":    waitGrep,
		},
	})
}

// waitGrep waits, up to 60 s, until the file (args[1]) matches the regexp (args[0]): for a
// file a command in the background writes.
func waitGrep(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitgrep REGEXP FILE")
	}
	re := regexp.MustCompile(args[0])
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if b, err := os.ReadFile(ts.MkAbs(args[1])); err == nil && re.Match(b) {
			return
		}
	}
	ts.Fatalf("%s did not match %q within a minute", args[1], args[0])
}

// fakeStorage starts a storage on loopback that acknowledges every remote write and answers
// every query with an empty result, and writes its URL where the files named say FAKE_URL.
func fakeStorage(ts *testscript.TestScript, neg bool, files []string) {
	if neg {
		ts.Fatalf("unsupported: ! fakestorage")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch {
		case strings.HasSuffix(r.URL.Path, "/write"):
			w.WriteHeader(http.StatusNoContent)
		case strings.HasSuffix(r.URL.Path, "/query"):
			_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
		case strings.HasSuffix(r.URL.Path, "/query_range"):
			_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"matrix","result":[]}}`)
		default: // series, labels, label values
			_, _ = io.WriteString(w, `{"status":"success","data":[]}`)
		}
	}))
	ts.Defer(srv.Close)
	for _, f := range files {
		path := ts.MkAbs(f)
		b, err := os.ReadFile(path)
		ts.Check(err)
		ts.Check(os.WriteFile(path, []byte(strings.ReplaceAll(string(b), "FAKE_URL", srv.URL+"/")), 0o644))
	}
}
