package docs_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tsbench/tsbench/internal/config"
)

// defaultProfile counts the default profile's series per target, and those of its largest
// metric name.
func defaultProfile(t *testing.T) (series, largest int, largestName string) {
	t.Helper()
	b, err := os.ReadFile("../profiles/node_exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Series []struct {
			Name string `json:"name"`
		} `json:"series"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, s := range p.Series {
		per[s.Name]++
		if per[s.Name] > largest {
			largest, largestName = per[s.Name], s.Name
		}
	}
	return len(p.Series), largest, largestName
}

// headerFigure is a figure an example's opening comment states: "5.03M active series",
// "≈ 34k samples/s", "1,000,088 samples/s".
var headerFigure = regexp.MustCompile(`(\d[\d,]*(?:\.\d+)?) ?([kM]?) (active series|samples/s)`)

// TestExampleHeaderFigures: the series and samples/s an example's header states are those of
// its own config (targets × writeReplicas × the default profile's series, over
// scrapeInterval), to the precision written (issue 31: clusters.yaml said 5.5M and 360k for
// 5.03M and 335.6k).
func TestExampleHeaderFigures(t *testing.T) {
	perTarget, _, _ := defaultProfile(t)
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		header, _, _ := strings.Cut(string(b), "\n\n")
		figures := headerFigure.FindAllStringSubmatch(header, -1)
		if len(figures) == 0 {
			continue
		}
		c, err := config.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if c.Profile != "" || c.ExporterURL != "" { // another exporter's series: not computable here
			continue
		}
		series := float64(c.TargetsCount * max(1, c.WriteReplicas) * perTarget)
		for _, m := range figures {
			want := series
			if m[3] == "samples/s" {
				want = series / c.ScrapeInterval.Seconds()
			}
			if !statedAs(m[1], m[2], want) {
				t.Errorf("%s: header says %q; its config gives %.0f (%d targets × %d × %d series, every %v)",
					filepath.Base(f), m[0], want, c.TargetsCount, max(1, c.WriteReplicas), perTarget, c.ScrapeInterval)
			}
			checked++
		}
	}
	if checked < 4 {
		t.Errorf("checked %d header figures, want the 4 or more the examples state", checked)
	}
}

// statedAs reports whether num with its unit (k, M) is want, rounded to the digits written.
func statedAs(num, unit string, want float64) bool {
	v, err := strconv.ParseFloat(strings.ReplaceAll(num, ",", ""), 64)
	if err != nil {
		return false
	}
	scale := map[string]float64{"": 1, "k": 1e3, "M": 1e6}[unit]
	step := scale
	if _, frac, ok := strings.Cut(num, "."); ok {
		step = scale / math.Pow(10, float64(len(frac)))
	}
	return math.Abs(v*scale-want) <= step/2+1e-9
}

// commas writes n with thousands separators, as the docs do.
func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestStorageLimitFigures: the figures docs/storages.md gives for the README's example
// (the limits a Mimir, Cortex or VictoriaMetrics must have raised) are computed from that
// example's config and the default profile.
func TestStorageLimitFigures(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```yaml\n# bench.yaml")
	block, _, _ = strings.Cut(block, "```")
	if !ok {
		t.Fatal("README.md: no ```yaml block opening with # bench.yaml")
	}
	c, err := config.Parse([]byte("#" + block))
	if err != nil {
		t.Fatal(err)
	}
	perTarget, largest, name := defaultProfile(t)
	series := c.TargetsCount * perTarget
	churned := int(math.Round(float64(c.TargetsCount)*c.ScrapeConfigUpdatePercent/100)) * perTarget // a round's new series
	rounds := int(c.Duration / c.ScrapeConfigUpdateInterval)
	perMinute := int(float64(churned) / c.ScrapeConfigUpdateInterval.Minutes())
	doc, err := os.ReadFile("storages.md")
	if err != nil {
		t.Fatal(err)
	}
	for what, n := range map[string]int{
		"samples/s":                         series / int(c.ScrapeInterval.Seconds()),
		"series at once":                    series,
		"series in the head at the end":     series + rounds*churned,
		"new series a minute":               perMinute,
		"series of " + name:                 c.TargetsCount * largest,
		"series of " + name + " at the end": c.TargetsCount*largest + rounds*churned/perTarget*largest,
		"series in an hour":                 series + 60*perMinute,
		"series in a day":                   series + 1440*perMinute,
		"samples per request":               c.MaxSamplesPerRequest,
	} {
		if !strings.Contains(string(doc), commas(n)) {
			t.Errorf("docs/storages.md does not give %s for the README's example: %s", what, commas(n))
		}
	}
}

// TestProtocolsProfileMetadata: what docs/protocols.md says the default profile carries as
// metadata (help and unit, sent by 2.0, OTLP and sendMetadata) is what it has (issue 31: it
// said "has neither" after both were added).
func TestProtocolsProfileMetadata(t *testing.T) {
	b, err := os.ReadFile("../profiles/node_exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Series []struct {
			Help string `json:"help"`
			Unit string `json:"unit"`
		} `json:"series"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	help, unit := 0, 0
	for _, s := range p.Series {
		if s.Help != "" {
			help++
		}
		if s.Unit != "" {
			unit++
		}
	}
	helpText := "a help on " + strconv.Itoa(help) + " of its " + strconv.Itoa(len(p.Series)) + " series"
	if help == len(p.Series) {
		helpText = "a help on all " + strconv.Itoa(help) + " series"
	}
	want := "the default profile has " + helpText + " and a unit on " + strconv.Itoa(unit)
	doc, err := os.ReadFile("protocols.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), want) { // as wrapped anywhere
		t.Errorf("docs/protocols.md: want %q, from profiles/node_exporter.json", want)
	}
}

// TestWorkloadProfileFigures: docs/workload.md's count of the default profile's series by
// shape is the profile's.
func TestWorkloadProfileFigures(t *testing.T) {
	b, err := os.ReadFile("../profiles/node_exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Series []struct {
			Shape struct {
				Kind string `json:"kind"`
			} `json:"shape"`
		} `json:"series"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, s := range p.Series {
		kinds[s.Shape.Kind]++
	}
	want := fmt.Sprintf("holds %d series of Debian's `prometheus-node-exporter`, watched for 5 minutes at 1 s on the loaded benchmark machine: "+
		"%d counters, %d CPU remainders, %d gauges, %d constants and %d NaN series",
		len(p.Series), kinds["counter"], kinds["remainder"], kinds["gauge"], kinds["constant"], kinds["nan"])
	doc, err := os.ReadFile("workload.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), want) {
		t.Errorf("docs/workload.md: want %q, from profiles/node_exporter.json", want)
	}
}
