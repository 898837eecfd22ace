package storage

import (
	"cmp"
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/config"
)

// Kind names a storage family as tsbench's logs, a local start and a storage's settings name
// it: "victoriametrics". Each family's kind is a constant in its file; the constants are
// untyped (as net/http's methods), so a Kind parameter and a string both take one.
type Kind string

// Family is everything tsbench knows of one family of storages, each in its own file
// (victoriametrics.go, prometheus.go, ...): how it is recognised, started, measured, read
// back and refused. The stages ask the family of a storage's kind (Kind.Family) or walk
// Families; none names a kind (docs/development.md, "Adding a storage family"). A zero
// field is what tsbench does not know of the family, or does not do with it.
type Family struct {
	Kind Kind
	// Order places the family where the families are asked in turn and the first answer
	// wins (a /metrics page's kind, disk, ingestion and series metrics, limit messages), and
	// where a message lists them: the smaller first.
	Order int
	// MetricPrefix recognises a storage of unknown kind by its /metrics page: a metric name
	// that begins with it. "": its kind is not guessed.
	MetricPrefix string
	// Version is where its /metrics page says its version: a metric and its label, best
	// first (ReadVersion). nil: it does not say.
	Version []VersionLabel
	// Default: tsbench starts one, named after its kind, when the config names no storage.
	Default bool
	// RetentionDays is how long it keeps data by default; a local start keeps a run's
	// history beyond it (RetentionFor).
	RetentionDays int
	// Local is how tsbench starts one on this machine (package local); nil: it does not.
	Local *Local

	// Disk is its size on disk by its own metrics: exposed is false when the page has none
	// of them; why says, when it has some but not every part, why the figure is unknown.
	// nil: none.
	Disk func(p Page) (bytes float64, why string, exposed bool)
	// Ingested are its counters of the samples it took in, best first: observe ranks them
	// across the families, in Order, and a cluster adds only the components that expose the
	// best one seen.
	Ingested []Selector
	// Series is its gauge of the series it holds in memory; nil: none.
	Series *Selector
	// SeriesCreated is its counter of the series it created since it started (issue 22);
	// "": none.
	SeriesCreated string
	// Snapshot is how it makes a snapshot of its data, which observe measures; nil: it is
	// not asked for one.
	Snapshot *Snapshot

	// Export: it serves its raw samples at /api/v1/export (staleness markers as null), which
	// the read-back reads beside the query API as a cross-check.
	Export bool
	// ExtraLabel: it takes ?extra_label=name=value on its write URL, so with writeURLReplicas
	// each copy is a series of its own; a storage without it gets identical copies of one
	// series and keeps one (the read-back counts its copies either way, by its answers).
	ExtraLabel bool
	// ExactFloats: it stores a float as it was sent, bit for bit, so in scrape mode a value
	// it returns that the agent's parsing could have made is what the agent sent.
	ExactFloats bool

	// Limits are the limits it refuses writes at, recognised in the body of its refusal.
	Limits []Limit

	// readSettings gets the family's settings that change what tsbench measures from the
	// storage whose query API is at readURL: an error when it does not answer as this
	// family does. nil: tsbench does not read them.
	readSettings func(ctx context.Context, c *Client, readURL string) ([]Setting, error)
	// settingsAtRoot: readSettings reads the host's root (/metrics, /flags), not pages under
	// readURL. Such families are asked last when the kind is not known: a page under the
	// query API's own path answers for the storage, while a proxied API's host root may be
	// another server's.
	settingsAtRoot bool
	// warnSettings says, in words, which of its settings hide data from the checks c.
	warnSettings func(values map[string]string, c Checks) []string
}

// Local is how tsbench starts a storage of a family on this machine: from its Debian
// package's binary, on a free loopback port, with a temporary dir (package local).
type Local struct {
	Binary  string // on PATH: "victoria-metrics"
	Package string // the Debian package that installs it
	// ReadyPath answers 2xx once the storage is ready: "/health".
	ReadyPath string
	// Args are the flags that place it: its address, data dir and config files in the
	// place's work dir.
	Args func(p Place) ([]string, error)
	// Flags set its behaviour; nil: none.
	Flags []string
	// RetentionFlag, when set, is the flag that sets how long it keeps data, the days
	// following it: "-retentionPeriod=".
	RetentionFlag string
	// URLs sets the storage's URLs from its root; nil: the Prometheus API's own
	// (api/v1/write, the root, metrics).
	URLs func(root string, st *config.Storage)
	// Setup prepares a ready storage for writes; nil: nothing to do.
	Setup func(ctx context.Context, root string) error
	// SampleTypes are the flags it needs to store native histograms and exemplars; nil:
	// none.
	SampleTypes func(native, exemplars bool) []string
}

// Settings are the flags that set the behaviour of a local storage that keeps retentionDays
// of data: Flags, then the retention.
func (l *Local) Settings(retentionDays int) []string {
	s := slices.Clone(l.Flags)
	if l.RetentionFlag != "" {
		s = append(s, l.RetentionFlag+strconv.Itoa(retentionDays)+"d")
	}
	return s
}

// Place is where a local storage lives.
type Place struct {
	Addr    string // 127.0.0.1:PORT, free when asked
	DataDir string
	WorkDir string // holds DataDir, its log and any config file
	// FreePort asks the kernel for another free loopback port.
	FreePort func() (int, error)
}

// Snapshot is how a storage makes a snapshot of its data, under <dataDir>/snapshots/<name>.
type Snapshot struct {
	// Create asks for one through call and returns its name.
	Create func(ctx context.Context, call Call) (name string, err error)
	// Delete deletes it, named name, in dir: through the storage's API, or by removing dir.
	Delete func(ctx context.Context, call Call, name, dir string) error
}

// Call sends method to path under the storage's readURL and decodes its JSON answer into
// into (nil: the answer is not read); an error unless it answers 2xx.
type Call func(ctx context.Context, method, path string, into any) error

// Limit is one limit a storage refuses writes at (issue 31), recognised in the body of its
// refusal: a user who brings a Mimir or a Cortex meets its per-tenant defaults far below a
// benchmark's load, and a count of 429s alone does not say which. The messages are the
// storages' own (their source, cited per limit); they are matched as text because that is
// all a storage sends, and they are stable because their users grep their logs for them.
type Limit struct {
	// Name is the limit ("series per tenant"); "$1" in it is the match's first group, which
	// then names the limit rather than giving its value.
	Name string
	// Family is who speaks, as results.json's writeLimits[].family says it: "Mimir",
	// "Prometheus TSDB".
	Family string
	// Match finds the message; its first group, when it has one, is the limit's value.
	Match string
	// Raise says what raises the limit; "$1" in it is the match's first group.
	Raise string
	// RaiseFrom, when set, finds in the message the flags it says raise the limit (one or
	// two groups): they replace Raise.
	RaiseFrom string
}

// families has one exported method per family, each in its family's file, that returns its
// Family. Families finds them by reflection, so that adding a family is adding its file:
// no list elsewhere names the families (docs/development.md, "Adding a storage family").
type families struct{}

// Families are the families tsbench knows, in Order.
func Families() []Family {
	v := reflect.ValueOf(families{})
	fs := make([]Family, v.NumMethod())
	for i := range fs {
		fs[i] = v.Method(i).Call(nil)[0].Interface().(Family)
	}
	slices.SortFunc(fs, func(a, b Family) int { return cmp.Compare(a.Order, b.Order) })
	return fs
}

// Family is the family of kind k: the zero Family, which knows nothing, for a kind tsbench
// does not know ("" included).
func (k Kind) Family() Family {
	for _, f := range Families() {
		if f.Kind == k && k != "" {
			return f
		}
	}
	return Family{}
}

// KindsWhere are the kinds of the families for which has is true, in Order, as a message
// lists them: "victoriametrics, prometheus and influxdb".
func KindsWhere(has func(Family) bool) string {
	var kinds []string
	for _, f := range Families() {
		if has(f) {
			kinds = append(kinds, string(f.Kind))
		}
	}
	if len(kinds) < 2 {
		return strings.Join(kinds, "")
	}
	return strings.Join(kinds[:len(kinds)-1], ", ") + " and " + kinds[len(kinds)-1]
}

// DefaultKinds are the kinds tsbench starts when the config names no storage, in name order.
func DefaultKinds() []Kind {
	var kinds []Kind
	for _, f := range Families() {
		if f.Default {
			kinds = append(kinds, f.Kind)
		}
	}
	slices.Sort(kinds)
	return kinds
}

// RetentionFor is the retention, in days, a local storage of the family gets for a run whose
// workload begins history in the past: its own default, or the history plus a day when that
// is longer. A storage drops data older than its retention, and VictoriaMetrics refuses to
// ingest it: a shorter one would lose the history being written.
func (f Family) RetentionFor(history time.Duration) int {
	return max(f.RetentionDays, int((history+24*time.Hour-1)/(24*time.Hour))+1)
}
