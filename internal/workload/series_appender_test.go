package workload

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// seriesCollector takes Scrape's fast path and rebuilds each sample's full label set from
// SeriesLabels and the target values, as an encoder does.
type seriesCollector struct {
	g       *Generator
	values  []string
	samples []sample
}

func (c *seriesCollector) Append([]Label, int64, float64) { panic("the fast path was not taken") }

func (c *seriesCollector) StartTarget(values []string) {
	c.values = c.values[:0]
	for _, v := range values {
		c.values = append(c.values, strings.Clone(v)) // values are valid only until the next call
	}
}

func (c *seriesCollector) AppendSeries(s int, t int64, v float64) {
	full := slices.Clone(c.g.SeriesLabels(s))
	for i, name := range c.g.TargetLabelNames() {
		full = append(full, Label{Name: name, Value: c.values[i]})
	}
	slices.SortFunc(full, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
	var col collector
	col.Append(full, t, v)
	c.samples = append(c.samples, col.samples...)
}

// TestSeriesAppenderGetsScrapesSamples: through a SeriesAppender, Scrape gives the same
// samples — labels, times, values, staleness markers — as through a plain Appender, with
// replicas and churn.
func TestSeriesAppenderGetsScrapesSamples(t *testing.T) {
	for _, replicas := range []int{1, 3} {
		g := newGen(t, Options{Seed: 3, Hosts: 20, Replicas: replicas, ChurnPercent: 20, ChurnInterval: 10 * time.Second})
		var plain collector
		fast := seriesCollector{g: g}
		var stale int
		for target := range g.Targets() {
			for k := range int64(4) {
				_, n := g.Scrape(&plain, target, k)
				g.Scrape(&fast, target, k)
				stale += n
			}
		}
		if stale == 0 {
			t.Fatalf("replicas %d: no staleness marker: the case tests nothing", replicas)
		}
		if diff := cmp.Diff(plain.samples, fast.samples, cmp.AllowUnexported(sample{}), cmp.Comparer(func(a, b float64) bool {
			return a == b || (math.IsNaN(a) && math.IsNaN(b) && IsStaleNaN(a) == IsStaleNaN(b))
		})); diff != "" {
			t.Errorf("replicas %d (-Appender +SeriesAppender):\n%s", replicas, diff)
		}
	}
}

// discardSeries takes the fast path and keeps nothing.
type discardSeries struct{ n int }

func (d *discardSeries) Append([]Label, int64, float64)   {}
func (d *discardSeries) StartTarget(values []string)      { d.n += len(values) }
func (d *discardSeries) AppendSeries(int, int64, float64) { d.n++ }

// BenchmarkScrapeSeries is BenchmarkScrape through a SeriesAppender: the generator's own cost
// when the encoder takes series by index (values, times, churn; no labels).
func BenchmarkScrapeSeries(b *testing.B) {
	benchScrape(b, &discardSeries{})
}
