package workload

import (
	"encoding/hex"
	"math"
	"slices"
	"strings"
	"unsafe"
)

// Exemplar is one exemplar (exemplars, issue 23): a trace id, the observed value and its
// time. TraceID is 32 hex digits (16 bytes, as OpenTelemetry's); it goes as the exemplar
// label trace_id over remote write, as trace_id over OTLP.
type Exemplar struct {
	TraceID string
	Value   float64
	T       int64
}

// ExemplarAppender takes the exemplar of the sample appended next (Append, AppendSeries or
// AppendHistogram): the generator calls it just before that sample. e is valid until then.
type ExemplarAppender interface {
	SetExemplar(e *Exemplar)
}

// ExemplarLabel is the exemplar label that carries the trace id over remote write.
const ExemplarLabel = "trace_id"

// exemplarSeries marks the series that carry exemplars: counters.
func exemplarSeries(p *Profile) []bool {
	out := make([]bool, len(p.Series))
	for i, s := range p.Series {
		out[i] = s.Type == "counter" && (s.Shape.Kind == Counter || s.Shape.Kind == Remainder)
	}
	return out
}

// hasExemplar reports whether series s of target at t carries an exemplar: a seeded draw
// with probability exemplars percent / 100. Native families draw with f+len(series).
func (g *Generator) hasExemplar(target, s int, t int64) bool {
	return g.exemplarP > 0 && unit(hash(g.opts.Seed, 9, uint64(target), uint64(s), uint64(t))) < g.exemplarP
}

// traceID writes the 16-byte trace id of (target, s, t) as hex into sc.trace.
func (g *Generator) traceID(sc *scratch, target, s int, t int64) string {
	var raw [16]byte
	h1, h2 := hash(g.opts.Seed, 10, uint64(target), uint64(s), uint64(t)), hash(g.opts.Seed, 11, uint64(target), uint64(s), uint64(t))
	for i := range 8 {
		raw[i], raw[8+i] = byte(h1>>(8*i)), byte(h2>>(8*i))
	}
	sc.trace = hex.AppendEncode(sc.trace[:0], raw[:])
	return unsafe.String(unsafe.SliceData(sc.trace), len(sc.trace)) // valid until the next traceID
}

// counterExemplar sets, when series s of target at t draws one, the exemplar of a counter's
// sample: the increase since the previous scrape, as client_golang's Add(v) records v.
func (g *Generator) counterExemplar(app Appender, sc *scratch, target, s int, t int64, v, scale float64) {
	ea, ok := app.(ExemplarAppender)
	if !ok || g.exemplar == nil || !g.exemplar[s] || !g.hasExemplar(target, s, t) {
		return
	}
	prev := g.value(&g.templates[s].shape, target, s, t-g.interval, scale)
	sc.ex = Exemplar{TraceID: g.traceID(sc, target, s, t), Value: max(0, v-prev), T: t}
	ea.SetExemplar(&sc.ex)
}

// histogramExemplar sets, when native family f of target at t draws one, an observation in
// a non-empty bucket of h: its upper bound.
func (g *Generator) histogramExemplar(app Appender, sc *scratch, target, f int, t int64, h *Histogram) {
	ea, ok := app.(ExemplarAppender)
	s := len(g.templates) + f
	if !ok || h.Count == 0 || !g.hasExemplar(target, s, t) {
		return
	}
	n := uint64(hash(g.opts.Seed, 12, uint64(target), uint64(s), uint64(t)) % h.Count) // the n-th observation
	v := 0.0                                                                           // in the zero bucket
	if n >= h.ZeroCount {
		n -= h.ZeroCount
		for i, c := range h.Buckets {
			if n < c {
				v = BucketUpper(h.Offset+int32(i), h.Schema)
				break
			}
			n -= c
		}
	}
	if math.IsNaN(v) {
		return
	}
	sc.ex = Exemplar{TraceID: g.traceID(sc, target, s, t), Value: v, T: t}
	ea.SetExemplar(&sc.ex)
}

// LabeledExemplar is an exemplar with its series' full label set.
type LabeledExemplar struct {
	Labels []Label
	Exemplar
}

// Exemplars lists the exemplars target's scrape k carries, with their series' labels, for
// the read-back.
func (g *Generator) Exemplars(target int, k int64) []LabeledExemplar {
	var rec exemplarRecorder
	g.Scrape(&rec, target, k)
	return rec.out
}

// exemplarRecorder keeps each exemplar with the labels of the sample it preceded.
type exemplarRecorder struct {
	out     []LabeledExemplar
	pending *Exemplar
}

func (r *exemplarRecorder) SetExemplar(e *Exemplar) {
	c := *e
	c.TraceID = strings.Clone(e.TraceID)
	r.pending = &c
}

func (r *exemplarRecorder) Append(ls []Label, _ int64, _ float64) { r.took(ls) }

func (r *exemplarRecorder) AppendHistogram(ls []Label, _ int64, _ *Histogram) { r.took(ls) }

func (r *exemplarRecorder) took(ls []Label) {
	if r.pending == nil {
		return
	}
	own := slices.Clone(ls)
	for i, l := range own {
		own[i] = Label{Name: strings.Clone(l.Name), Value: strings.Clone(l.Value)}
	}
	r.out = append(r.out, LabeledExemplar{Labels: own, Exemplar: *r.pending})
	r.pending = nil
}

// Exemplars is the generator's for the part's target j.
func (p *Part) Exemplars(j int, k int64) []LabeledExemplar { return p.g.Exemplars(p.targets[j], k) }
