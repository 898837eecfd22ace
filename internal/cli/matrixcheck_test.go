package cli

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage/liar"
)

// The matrix's verdicts: each compares a storage's results with the liar's count over the
// window the cell expects to be read back (verdict.told), and returns what differs.

func want(what string, want, got int64) string {
	if want != got {
		return fmt.Sprintf("%s: want %d (the liar's count), got %d; ", what, want, got)
	}
	return ""
}

// renamed is the verdict on a label lie: every sample found under other labels, none missing.
func renamed(change string) func(c verdict) string {
	return func(c verdict) string {
		v, told := c.st.Verify, c.told
		var changes []string
		for _, c := range v.LabelChanges {
			changes = append(changes, c.String())
		}
		if !strings.Contains(strings.Join(changes, "; "), change) {
			return fmt.Sprintf("labelChanges %q, want one naming %q", changes, change)
		}
		return want("verify.renamedSamples", told, v.RenamedSamples) + want("verify.missingSamples", 0, v.MissingSamples)
	}
}

// refused is the verdict on refused requests: their samples dropped (400) or retried until
// taken (429, 503), none missing from the read-back either way.
func refused(status int) func(c verdict) string {
	return func(c verdict) string {
		w := c.st.Write
		code := fmt.Sprint(status)
		msg := want("write.requestsByStatus["+code+"]", c.requests(func(w *results.Write) int64 { return w.RequestsByStatus[code] }), w.RequestsByStatus[code])
		if status == http.StatusBadRequest {
			var dropped int64
			for _, n := range w.DroppedSamples {
				dropped += n
			}
			return msg + want("write.droppedSamples", c.told, dropped)
		}
		return msg + want("write.retries", c.requests(func(w *results.Write) int64 { return w.Retries }), w.Retries) +
			want("verify.missingSamples", 0, c.st.Verify.MissingSamples)
	}
}

// limitRequests is the answers that named a storage's first limit.
func limitRequests(w *results.Write) int64 {
	if len(w.Limits) == 0 {
		return 0
	}
	return w.Limits[0].Requests
}

// mimirRateLimit is Mimir's answer to a write past a tenant's ingestion rate.
const mimirRateLimit = "the request has been rejected because the tenant exceeded the ingestion rate limit, set to 10000 items/s " +
	"with a maximum allowed burst of 200000. This limit is applied on the total number of samples, exemplars and metadata " +
	"received across all distributors (err-mimir-tenant-max-ingestion-rate). To adjust the related per-tenant limits, " +
	"configure -distributor.ingestion-rate-limit and -distributor.ingestion-burst-size, or contact your service administrator."

// seen is the delay row's event: each freshness probe has seen a canary sample.
func seen(st *results.Storage) bool {
	f := st.Freshness
	return f != nil && f.Instant != nil && f.Range != nil && f.Series != nil &&
		f.Instant.Visible > 0 && f.Range.Visible > 0 && f.Series.Visible > 0
}

// delayed is the verdict on a visibility delay, a bound (see the row): the instant, range and
// series (index) probes saw canary samples, and each of their quantiles' brackets
// (lowerBoundSeconds to seconds) meets the span in which the liar's held writes became
// visible, from the earliest forwarding (Held.Sent) to the latest answer (Held.Answered),
// widened below by what the run itself measured of a loaded machine: its slowest query and
// its own largest schedule drift (a query started before a write was forwarded reaches the
// receiver after it, an ack reaches tsbench late).
func delayed(c verdict) string {
	f := c.st.Freshness
	if f == nil {
		return "no freshness in the results"
	}
	held := c.liar.Delays()
	if len(held) == 0 {
		return "the liar held no write"
	}
	lo, hi := held[0].Sent, held[0].Answered
	for _, h := range held {
		lo, hi = min(lo, h.Sent), max(hi, h.Answered)
	}
	var slack float64
	if q := c.st.Query; q != nil && q.LatencySeconds.Max != nil {
		slack += *q.LatencySeconds.Max
	}
	if c.st.Write != nil {
		slack += c.st.Write.MaxScheduleDriftSeconds
	}
	low := lo.Seconds() - slack
	var msg string
	for _, p := range []struct {
		name  string
		probe *results.FreshnessProbe
	}{{"instant", f.Instant}, {"range", f.Range}, {"series", f.Series}} {
		if p.probe == nil || p.probe.Visible == 0 {
			msg += fmt.Sprintf("freshness.%s: no sample seen (%+v); ", p.name, p.probe)
			continue
		}
		below, above := p.probe.LowerBoundSeconds, p.probe.Seconds
		for _, q := range []struct {
			name         string
			below, above *float64
		}{{"p50", below.P50, above.P50}, {"p90", below.P90, above.P90}, {"p99", below.P99, above.P99}, {"max", below.Max, above.Max}} {
			if q.below == nil || q.above == nil || *q.below > hi.Seconds() || *q.above < low {
				msg += fmt.Sprintf("freshness.%s %s: %v to %v s, want a bracket meeting the liar's %.3f to %.3f s (%.3f s below for the machine's load); ",
					p.name, q.name, fmtPtr(q.below), fmtPtr(q.above), lo.Seconds(), hi.Seconds(), slack)
			}
		}
	}
	return msg
}

func fmtPtr(f *float64) string {
	if f == nil {
		return "null"
	}
	return fmt.Sprint(*f)
}

// missing is the verdict on data not returned: every sample the liar dropped or hides missing.
// A starved run's is a bound (verdict.starved).
func missing(c verdict) string {
	if c.starved {
		return bounded("verify.missingSamples", c.told, c.st.Verify)
	}
	return want("verify.missingSamples", c.told, c.st.Verify.MissingSamples)
}

// starved reports whether tsbench dropped samples of the run (queue full, retries given up on
// a storage a loaded machine stalled): the read-back does not look for the samples of those
// writes (verify.notAckedSamples), and the liar's record, which has the lies of every write it
// received, cannot tell which those were. An exact count then becomes a bound.
func starved(st *results.Storage) bool {
	return st != nil && st.Write != nil && st.Write.Dropped() > 0
}

// bounded is the verdict of a starved run: at most the liar's count missing, and samples left
// unlooked-for by the drops (else the run was not starved where it was read, and the count
// must be exact).
func bounded(what string, told int64, v *results.Verify) string {
	if v.NotAckedSamples == 0 {
		return want(what, told, v.MissingSamples)
	}
	if v.MissingSamples > told {
		return fmt.Sprintf("%s %d, more than the liar's %d (a starved run: %d samples not looked for); ", what, v.MissingSamples, told, v.NotAckedSamples)
	}
	return ""
}

// dropped is the verdict on a sample type acked and not kept, read back at the run's end over
// every target (the first 5, of 2) after the run's last gap: every item the liar dropped
// there checked, and missing.
func dropped(what string, read func(*results.Verify) (string, int64, int64)) func(c verdict) string {
	return func(c verdict) string {
		got, checked, missing := read(c.st.Verify)
		if got != "dropped" {
			return fmt.Sprintf("%s: verdict %q, want dropped", what, got)
		}
		told := c.want.Last().Count(c.liar, nil)
		return want(what+" checked", told, checked) + want(what+" missing", told, missing)
	}
}

// whole is whether a check read all it planned: no read failed or was cut short.
func whole(ch results.Check) bool { return ch.Checked > 0 && ch.ReadErrors == 0 && ch.Unchecked == 0 }

// checkedLies matches the log line of a check during the run that found data missing.
var checkedLies = regexp.MustCompile(`msg="checked during the run" .* checked=[1-9][0-9]* missing=[1-9]`)

// wholeChecks is how many of checks read all they planned of data the liar lied in.
func wholeChecks(checks []results.Check, l *liar.Liar) int {
	n := 0
	for _, ch := range checks {
		if whole(ch) && !ch.Span.To.Before(ch.Span.From) && l.Count(ch.Span.From, ch.Span.To, nil) > 0 {
			n++
		}
	}
	return n
}

// checkedDuringRun is the verdict on the checks made while the load ran (dropSamples and
// partial: lies fixed at the write, which no later read changes). Their spans follow one
// another from the window's start. A whole check finds missing exactly the liar's count over
// its span: it reads every sample there (verifySamples is above them), and the scrapes it
// reads again were complete when first read. A check cut short (by the load's end, or a
// read that failed), or one of a starved run (starved), finds at most that count: a bound is
// all it can know.
func checkedDuringRun(v *results.Verify, l *liar.Liar, w liar.Window, starved bool) string {
	if v == nil || v.Continuous == nil || wholeChecks(v.Checks, l) == 0 {
		return fmt.Sprintf("no whole check of data the liar lied in: %+v", v)
	}
	var msg string
	next := w.From
	for i, ch := range v.Checks {
		if ch.Span.To.Before(ch.Span.From) { // nothing new was settled
			continue
		}
		if !ch.Span.From.Equal(next) {
			msg += fmt.Sprintf("checks[%d].span from %s, want %s (where the one before ended, or the run's start); ", i, ch.Span.From, next)
		}
		next = ch.Span.To.Add(time.Millisecond)
		told := l.Count(ch.Span.From, ch.Span.To, nil)
		switch {
		case whole(ch) && !starved:
			msg += want(fmt.Sprintf("checks[%d].missing", i), told, ch.Missing)
		case ch.Missing > told:
			msg += fmt.Sprintf("checks[%d].missing %d, more than the liar's %d (cut short: %d unchecked, %d read errors); ", i, ch.Missing, told, ch.Unchecked, ch.ReadErrors)
		}
		msg += want(fmt.Sprintf("checks[%d].lostAfterAck", i), 0, ch.LostAfterAck)
	}
	if msg != "" {
		return fmt.Sprintf("%s(checks %+v)", msg, v.Checks)
	}
	return ""
}
