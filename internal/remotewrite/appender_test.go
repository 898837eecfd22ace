package remotewrite

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/workload"
)

// A fanout hands each wire the request its protocol's encoder makes alone, counts what the
// first encoder counts, and lets a request end only where every encoder's may: not within an
// OTLP summary point.
func TestFanoutSameRequests(t *testing.T) {
	meta := testMetadata()
	lbl := func(name string, extra ...workload.Label) []workload.Label {
		return sortedLabels(append([]workload.Label{
			{Name: "__name__", Value: name}, {Name: "instance", Value: "host-1:9100"}, {Name: "job", Value: "node_exporter"},
		}, extra...))
	}
	samples := []struct {
		labels []workload.Label
		whole  bool // a request may end after it
	}{
		{lbl("node_cpu_seconds_total", workload.Label{Name: "cpu", Value: "0"}), true},
		{lbl("go_gc_duration_seconds", workload.Label{Name: "quantile", Value: "0.5"}), false},
		{lbl("go_gc_duration_seconds_count"), false},
		{lbl("node_load1"), true},
		{[]workload.Label{{Name: "__name__", Value: "bad-name"}}, true}, // refused by every encoder
	}
	alone := []encoder{&encoderV1{}, newEncoderV2(meta, nil), newEncoderOTLP(meta)}
	f := newEncoder([wires]bool{wireRW1: true, wireRW2: true, wireOTLP: true, wireOTLPGzip: true}, meta, nil, nil)
	if _, ok := f.(*fanout); !ok {
		t.Fatalf("encoder of three protocols is %T, want a fanout", f)
	}
	for i, s := range samples {
		ex := &workload.Exemplar{TraceID: "0123456789abcdef0123456789abcdef", Value: 1, T: 1_700_000_000_000}
		for _, e := range append(alone, f) {
			if c, ok := e.(workload.CreatedAppender); ok { // not 1.0: it has no field for it
				c.SetCreated(1_699_000_000_000)
			}
			e.(workload.ExemplarAppender).SetExemplar(ex)
			e.Append(s.labels, 1_700_000_000_000+int64(i), 0.5)
		}
		n, oldest, whole := f.open()
		if wantN := min(i+1, 4); n != wantN || oldest != 1_700_000_000_000 || whole != s.whole {
			t.Errorf("after sample %d: open() = %d, %d, %v; want %d, 1700000000000, %v", i, n, oldest, whole, wantN, s.whole)
		}
	}
	var invalid, invalidAlone [wires]int64
	f.takeInvalid(&invalid)
	var got, want [wires]request
	f.flush(&got)
	for _, e := range alone {
		e.takeInvalid(&invalidAlone)
		e.flush(&want)
	}
	if invalid != [wires]int64{1, 1, 1, 1} || invalid != invalidAlone {
		t.Errorf("invalid by wire: fanout %v, alone %v; want 1 on each wire", invalid, invalidAlone)
	}
	for wr := range wires {
		if !bytes.Equal(got[wr].body, want[wr].body) || got[wr].points != want[wr].points || len(got[wr].body) == 0 {
			t.Errorf("wire %d: fanout's request (%d bytes, %d points) differs from its encoder's alone (%d bytes, %d points)",
				wr, len(got[wr].body), got[wr].points, len(want[wr].body), want[wr].points)
		}
	}
	if n, _, _ := f.open(); n != 0 {
		t.Errorf("after flush: %d samples open, want 0", n)
	}
}

// TestAppenderDoesNotAllocate: a sample through a shard appender — the dispatch to its
// encoder, one protocol's or a fanout over several, and the count of invalid samples taken
// after each scrape — allocates nothing once the encoders' buffers have grown.
func TestAppenderDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector; `go test` without -race checks them")
	}
	for _, protocols := range []string{"prometheus-rw1", "prometheus-rw2", "otlp-http", "prometheus-rw1,prometheus-rw2", "prometheus-rw1,prometheus-rw2,otlp-http"} {
		t.Run(protocols, func(t *testing.T) {
			storages := map[string]config.Storage{}
			for p := range strings.SplitSeq(protocols, ",") {
				storages[p] = config.Storage{WriteURL: "http://s.test/write", Protocol: config.Protocol(p)}
			}
			w := newWriter(t, storages, nil, func(c *config.Config) { c.MaxSamplesPerRequest = 1 << 30 })
			ln := w.lanes[0]
			a := w.newShardAppender(ln, 0, &ln.openOldest[0], false)
			app := a.appender()
			targets := w.work.Targets()
			i := 0
			scrape := func() {
				w.work.Scrape(app, i%targets, int64(i/targets))
				a.dropInvalid()
				if i++; i%targets == 0 {
					a.enc.flush(&a.out) // a new request, nothing sent
				}
			}
			for range 10 * targets {
				scrape()
			}
			if allocs := testing.AllocsPerRun(20*targets, scrape); allocs > 0 {
				t.Errorf("a scrape of %d samples allocates %.2f times", w.work.SeriesPerTarget(), allocs)
			}
		})
	}
}
