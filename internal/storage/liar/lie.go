package liar

import (
	"hash/fnv"
	"math"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
)

// kind is what a point is: which lies can touch it.
type kind int

const (
	// kindFloat is a float sample (a staleness marker too).
	kindFloat kind = iota
	// kindHistogram is a native histogram sample.
	kindHistogram
	// kindExemplar is an exemplar.
	kindExemplar
	// kindGroup is an OTLP summary or classic histogram point: N float samples of several
	// series (quantiles or buckets, _sum, _count), which only a label lie touches.
	kindGroup
)

// point is one sample as no wire format writes it: what a lie is decided on. Each wire
// format's adapter (v1.go, v2.go, otlp.go) makes its points, asks tell, and writes back what
// tell answers.
type point struct {
	series string // the series' key: its labels in labels.Labels' String form (OTLP: otlpKey)
	target string // the target that wrote it (instance; OTLP: service.instance.id), for Reached
	t      int64  // ms
	v      float64
	stale  bool // a staleness marker: 1.0's and 2.0's StaleNaN, OTLP's NoRecordedValue flag
	kind   kind
	n      int64 // the samples it is: 1 but for a group
	// moved says a label lie changes where the point's series is stored: the adapter knows
	// how its format carries labels (relabel, otlpMoves).
	moved bool
}

// tell decides the lie on p, records p if the lie touches it, and returns what to store in
// its place: keep false drops it; else p with its value or time changed. It is the one place
// a lie on a sample is decided and recorded.
func (l *Liar) tell(rq *request, p point) (out point, keep bool) {
	if p.kind != kindExemplar {
		rq.saw(p.target, p.t)
	}
	number := !p.stale && !math.IsNaN(p.v)
	record := func(n int64) { l.recordPoint(p, n) }
	switch lie := l.lies.Lie; {
	case lie == LieAddLabel || lie == LieRenameJobInstance:
		if p.moved && p.kind != kindExemplar {
			record(p.n)
		}
	case p.kind == kindHistogram:
		if lie == LieDropHistograms {
			record(1)
			return p, false
		}
	case p.kind == kindExemplar:
		if lie == LieDropExemplars {
			record(1)
			return p, false
		}
	case p.kind == kindGroup:
	case lie == LieDropSamples:
		if number && l.sampleChosen(p.series, p.t) {
			record(1)
			return p, false
		}
	case lie == LieDropStale:
		if p.stale {
			record(1)
			return p, false
		}
	case lie == LieULP:
		if number && !math.IsInf(p.v, 0) && l.sampleChosen(p.series, p.t) {
			record(1)
			p.v = math.Nextafter(p.v, math.Inf(1))
		}
	case lie == LieRound:
		if r := math.Round(p.v); number && r != p.v {
			record(1)
			p.v = r
		}
	case lie == LieShiftTimestamps:
		if l.sampleChosen(p.series, p.t) {
			record(1)
			p.t += l.lies.Shift.Milliseconds()
		}
	case lie == LiePartial || lie == LieDeleteAfter:
		// Told in the query answers (answer.go), which leave the chosen series out:
		// recorded here, where each of their samples with a number is written.
		if number && l.chosen(p.series) {
			record(1)
		}
	}
	return p, true
}

// tellMetadata reports whether the lie drops the metadata of a metric family, recording the
// family the first time.
func (l *Liar) tellMetadata(family string) bool {
	if l.lies.Lie != LieDropMetadata {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.seen[family] {
		l.seen[family] = true
		l.told = append(l.told, Told{Series: family, N: 1})
	}
	return true
}

// tellRequest decides the lie on a write request of n samples that arrived at t (ms), and
// records the request if the lie touches it: refused (LieRefuse: every 1/Share-th request,
// counted from the first), or held and forwarded Delay later (LieDelay: every request).
func (l *Liar) tellRequest(t, n int64) (refuse, hold bool) {
	switch l.lies.Lie {
	case LieRefuse:
		l.mu.Lock()
		l.requests++
		i := l.requests
		l.mu.Unlock()
		refuse = math.Floor(float64(i)*l.lies.Share) > math.Floor(float64(i-1)*l.lies.Share)
	case LieDelay:
		hold = true
	}
	if refuse || hold {
		l.recordRequest(t, n)
	}
	return refuse, hold
}

// relabel is the series' labels as stored under a label lie.
func (l *Liar) relabel(ls labels.Labels) labels.Labels {
	switch l.lies.Lie {
	case LieAddLabel:
		return labels.NewBuilder(ls).Set(l.lies.Label.Name, l.lies.Label.Value).Labels()
	case LieRenameJobInstance:
		b := labels.NewBuilder(ls)
		for from, to := range map[string]string{"job": "service_name", "instance": "service_instance_id"} {
			if v := ls.Get(from); v != "" {
				b.Del(from).Set(to, v)
			}
		}
		return b.Labels()
	}
	return ls
}

// hides reports whether the lie is told in query answers (answer.go): LiePartial, and
// LieDeleteAfter from its After on.
func (l *Liar) hides() bool { return l.lies.Lie == LiePartial || l.lies.Lie == LieDeleteAfter }

// recordPoint records p, n samples, once: a write retried (its answer lost to a timeout on
// a starved machine) brings the same samples again, and the lie touches each the same way,
// but a sample lied about is one lie (the invariant on Liar).
func (l *Liar) recordPoint(p point, n int64) {
	key := pointKey{p.kind, p.series, p.t}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.recorded[key]; ok {
		return
	}
	if l.recorded == nil { // a Liar made without Start, as unit tests do
		l.recorded = map[pointKey]struct{}{}
	}
	l.recorded[key] = struct{}{}
	l.told = append(l.told, Told{Series: p.series, T: p.t, N: n})
}

// pointKey is a point's identity in the record.
type pointKey struct {
	kind   kind
	series string
	t      int64
}

// recordRequest records a request of n samples that arrived at t: each is a lie of its own,
// a retried one too.
func (l *Liar) recordRequest(t, n int64) {
	l.mu.Lock()
	l.told = append(l.told, Told{T: t, N: n})
	l.mu.Unlock()
}

// chosen reports whether the lie touches key: a hash of key below Share.
func (l *Liar) chosen(key string) bool {
	if l.lies.Share >= 1 {
		return true
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return float64(h.Sum64()>>11)/(1<<53) < l.lies.Share
}

func (l *Liar) sampleChosen(series string, t int64) bool {
	return l.chosen(series + "@" + strconv.FormatInt(t, 10))
}

// skipName reports whether Skip leaves the series of metric name alone.
func (l *Liar) skipName(name string) bool {
	return l.lies.Skip != "" && strings.HasPrefix(name, l.lies.Skip)
}
