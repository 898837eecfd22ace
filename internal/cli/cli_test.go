package cli

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"tsbench": func() { os.Exit(Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScript runs the CLI scripts in testdata/script: the test binary acts as tsbench.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: os.Getenv("UPDATE") != "",
	})
}
