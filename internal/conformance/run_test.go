package conformance

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/storage/promreceiver"
)

func TestMain(m *testing.M) {
	EnableParserFeatures() // before any test parses, as tsbench conformance does
	os.Exit(m.Run())
}

func TestReceiverTmp(t *testing.T) {
	rcv, err := promreceiver.Start(t.TempDir(), slog.New(slog.DiscardHandler), promreceiver.Options{DelayedNameRemoval: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	st := config.Storage{WriteURL: rcv.URL + promreceiver.WritePath, ReadURL: rcv.URL}
	t0 := time.Now()
	out, err := Run(context.Background(), s, "prom", st, time.Now(), slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(out.Passed, out.Failed, out.NotApplicable, out.Kinds, out.NotApplicableReasons, time.Since(t0))
	for _, f := range out.Failures {
		fmt.Printf("%s:%d %s [%s]\n   want %s\n   got  %s\n", f.File, f.Line, f.Expr, f.Kind, f.Expected, f.Got)
	}
}
