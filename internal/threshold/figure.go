package threshold

import (
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// Figure reads one number from a storage's results; nil when unknown.
type Figure func(s *results.Storage) *float64

// unit is how a figure is measured, for printing it.
type unit int

const (
	unitPlain          unit = iota // samples/s, cores, bytes per sample, ratios
	unitCount                      // an exact integer count
	unitSeconds                    // a duration
	unitBytes                      // a size
	unitBytesPerSecond             // a disk rate
)

// figure is one nameable figure: how to read it and its unit.
type figure struct {
	get  Figure
	unit unit
	// why says why get is nil for a storage when its section is there but the figure is
	// not (nothing checked, no query completed); nil where unknownWhy's general reasons do.
	why func(s *results.Storage) string
}

// figureTable is the one home of the figures thresholds and compare can name, each area's
// in a function of its own below.
func figureTable() map[string]figure {
	figs := writeFigures()
	maps.Copy(figs, queryFigures())
	maps.Copy(figs, resourceFigures())
	maps.Copy(figs, verifyFigures())
	maps.Copy(figs, seriesFigures())
	maps.Copy(figs, haFigures())
	return figs
}

// partFigure is a figure read from one part of a storage's results (its write, query or
// read-back section), unknown where the storage has no such part.
func partFigure[T any](u unit, part func(*results.Storage) *T, f func(*T) float64) figure {
	return figure{unit: u, get: func(s *results.Storage) *float64 {
		p := part(s)
		if p == nil {
			return nil
		}
		return new(f(p))
	}}
}

// writeFigures are the write account's figures, unknown for a storage not written to.
func writeFigures() map[string]figure {
	w := func(u unit, f func(*results.Write) float64) figure {
		return partFigure(u, func(s *results.Storage) *results.Write { return s.Write }, f)
	}
	return map[string]figure{
		"write.generatedSamples":         w(unitCount, func(w *results.Write) float64 { return float64(w.GeneratedSamples) }),
		"write.ackedSamples":             w(unitCount, func(w *results.Write) float64 { return float64(w.AckedSamples) }),
		"write.droppedSamples":           w(unitCount, func(w *results.Write) float64 { return float64(w.Dropped()) }),
		"write.pendingSamples":           w(unitCount, func(w *results.Write) float64 { return float64(w.PendingSamples) }),
		"write.retries":                  w(unitCount, func(w *results.Write) float64 { return float64(w.Retries) }),
		"write.bytesSent":                w(unitBytes, func(w *results.Write) float64 { return float64(w.BytesSent) }),
		"write.lagSeconds":               w(unitSeconds, func(w *results.Write) float64 { return w.LagSeconds }),
		"write.maxLagSeconds":            w(unitSeconds, func(w *results.Write) float64 { return w.MaxLagSeconds }),
		"write.maxScheduleDriftSeconds":  w(unitSeconds, func(w *results.Write) float64 { return w.MaxScheduleDriftSeconds }),
		"write.targetSamplesPerSecond":   w(unitPlain, func(w *results.Write) float64 { return w.TargetSamplesPerSecond }),
		"write.achievedSamplesPerSecond": w(unitPlain, func(w *results.Write) float64 { return w.AchievedSamplesPerSecond }),
	}
}

// queryFigures are the read load's figures, unknown for a storage not queried.
func queryFigures() map[string]figure {
	q := func(u unit, f func(*results.Query) float64) figure {
		return partFigure(u, func(s *results.Storage) *results.Query { return s.Query }, f)
	}
	latency := func(f func(results.Latency) *float64) figure { // unknown when nothing completed
		return figure{unit: unitSeconds, get: func(s *results.Storage) *float64 {
			if s.Query == nil {
				return nil
			}
			return f(s.Query.LatencySeconds)
		}, why: func(*results.Storage) string { return "no query completed" }}
	}
	return map[string]figure{
		"query.executed": q(unitCount, func(q *results.Query) float64 { return float64(q.Executed) }),
		"query.ok":       q(unitCount, func(q *results.Query) float64 { return float64(q.OK) }),
		"query.errors":   q(unitCount, func(q *results.Query) float64 { return float64(sumCounts(q.Errors)) }),
		"query.warnings": q(unitCount, func(q *results.Query) float64 { return float64(q.Warnings) }),
		"query.missed":   q(unitCount, func(q *results.Query) float64 { return float64(q.Missed) }),
		"query.p50":      latency(func(l results.Latency) *float64 { return l.P50 }),
		"query.p90":      latency(func(l results.Latency) *float64 { return l.P90 }),
		"query.p99":      latency(func(l results.Latency) *float64 { return l.P99 }),
		"query.max":      latency(func(l results.Latency) *float64 { return l.Max }),
	}
}

// resourceFigures are the storage's resources, unknown where not observed.
func resourceFigures() map[string]figure {
	r := func(u unit, f func(*results.Resources) *float64) figure {
		return figure{unit: u, get: func(s *results.Storage) *float64 {
			if s.Resources == nil {
				return nil
			}
			return f(s.Resources)
		}}
	}
	return map[string]figure{
		"resources.cpuCoresMean": r(unitPlain, func(r *results.Resources) *float64 { return r.CPUCoresMean }),
		"resources.cpuCoresMax":  r(unitPlain, func(r *results.Resources) *float64 { return r.CPUCoresMax }),
		"resources.rssBytesMean": r(unitBytes, func(r *results.Resources) *float64 { return r.RSSBytesMean }),
		"resources.rssBytesMax":  r(unitBytes, func(r *results.Resources) *float64 { return r.RSSBytesMax }),
		"resources.diskBytesEnd": r(unitBytes, func(r *results.Resources) *float64 { return r.DiskBytesEnd }),
		"resources.diskBytesMax": r(unitBytes, func(r *results.Resources) *float64 { return r.DiskBytesMax }),
		"resources.diskReadBytesPerSecond": r(unitBytesPerSecond, func(r *results.Resources) *float64 {
			return r.DiskReadBytesPerSecond
		}),
		"resources.diskWriteBytesPerSecond": r(unitBytesPerSecond, func(r *results.Resources) *float64 {
			return r.DiskWriteBytesPerSecond
		}),
		"resources.ingestedSamples": r(unitCount, func(r *results.Resources) *float64 { return r.IngestedSamples }),
		"resources.bytesPerSample":  r(unitPlain, func(r *results.Resources) *float64 { return r.BytesPerSample }),
		"resources.snapshotBytes":   r(unitBytes, func(r *results.Resources) *float64 { return r.SnapshotBytes }),
		"resources.snapshotBytesPerSample": r(unitPlain, func(r *results.Resources) *float64 {
			return r.SnapshotBytesPerSample
		}),
	}
}

// verifyFigures are the read-back's figures, unknown for a storage not read back.
func verifyFigures() map[string]figure {
	v := func(u unit, f func(*results.Verify) float64) figure {
		return partFigure(u, func(s *results.Storage) *results.Verify { return s.Verify }, f)
	}
	// among is a count over the checked samples (or markers), unknown when none was checked:
	// "0 missing" of nothing would pass verify.missingSamples == 0 and look best.
	among := func(c checked, u unit, f func(*results.Verify) float64) figure {
		return figure{unit: u, get: func(s *results.Storage) *float64 {
			if s.Verify == nil || c.count(s.Verify) == 0 {
				return nil
			}
			return new(f(s.Verify))
		}, why: func(*results.Storage) string { return c.none }}
	}
	samples := checked{func(v *results.Verify) int64 { return v.CheckedSamples }, "the read-back checked no samples"}
	// Markers are checked one way per storage: honoured by an instant query through the query
	// API, or stored among the raw samples of remote read.
	honoured := checked{func(v *results.Verify) int64 {
		if v.ReadBackVia == "remoteRead" {
			return 0
		}
		return v.CheckedStaleMarkers
	}, "no staleness marker was checked through the query API"}
	stored := checked{func(v *results.Verify) int64 {
		if v.ReadBackVia != "remoteRead" {
			return 0
		}
		return v.CheckedStaleMarkers
	}, "no staleness marker was checked through remote read"}
	// Data lost after its ack is known only where a check read again what it had found.
	rechecked := checked{func(v *results.Verify) int64 {
		if v.Continuous == nil {
			return 0
		}
		return v.Continuous.Total.Rechecked
	}, "no check read again what it had found"}
	// Probes and rules need the query API: unknown for a storage read back through remote read.
	viaAPI := func(u unit, f func(*results.Verify) float64) figure {
		return figure{unit: u, get: func(s *results.Storage) *float64 {
			if s.Verify == nil || s.Verify.ReadBackVia == "remoteRead" {
				return nil
			}
			return new(f(s.Verify))
		}, why: func(*results.Storage) string { return "read back through remote read, without the query API" }}
	}
	return map[string]figure{
		"verify.checkedSamples":      v(unitCount, func(v *results.Verify) float64 { return float64(v.CheckedSamples) }),
		"verify.uncheckedSamples":    v(unitCount, func(v *results.Verify) float64 { return float64(v.UncheckedSamples) }),
		"verify.readErrors":          v(unitCount, func(v *results.Verify) float64 { return float64(v.ReadErrors) }),
		"verify.missingSamples":      among(samples, unitCount, func(v *results.Verify) float64 { return float64(v.MissingSamples) }),
		"verify.duplicateSamples":    among(samples, unitCount, func(v *results.Verify) float64 { return float64(v.DuplicateSamples) }),
		"verify.unexpectedSamples":   among(samples, unitCount, func(v *results.Verify) float64 { return float64(v.UnexpectedSamples) }),
		"verify.changedValues":       among(samples, unitCount, func(v *results.Verify) float64 { return float64(v.ChangedValues) }),
		"verify.maxRelativeError":    among(samples, unitPlain, func(v *results.Verify) float64 { return v.MaxRelativeError }),
		"verify.nanAltered":          among(samples, unitCount, func(v *results.Verify) float64 { return float64(v.NaNAltered) }),
		"verify.stalenessIgnored":    among(honoured, unitCount, func(v *results.Verify) float64 { return float64(v.StalenessIgnored) }),
		"verify.missingStaleMarkers": among(stored, unitCount, func(v *results.Verify) float64 { return float64(v.MissingStaleMarkers) }),
		"verify.checkedStaleMarkers": v(unitCount, func(v *results.Verify) float64 { return float64(v.CheckedStaleMarkers) }),
		"verify.shiftedTimestamps":   among(samples, unitCount, func(v *results.Verify) float64 { return float64(v.ShiftedTimestamps) }),
		"verify.differentProbes":     viaAPI(unitCount, func(v *results.Verify) float64 { return float64(v.DifferentProbes()) }),
		"verify.lostAfterAck":        among(rechecked, unitCount, func(v *results.Verify) float64 { return float64(v.LostAfterAck) }),
		"verify.ruleDiffs":           viaAPI(unitCount, func(v *results.Verify) float64 { return float64(len(v.RuleDiffs)) }),
	}
}

// checked is what a read-back count is over (samples, markers), and why the count is unknown
// when none was checked.
type checked struct {
	count func(*results.Verify) int64
	none  string
}

// Figures is the table of figures thresholds and compare can name.
func Figures() map[string]Figure {
	out := map[string]Figure{}
	for name, f := range figureTable() {
		out[name] = f.get
	}
	return out
}

// unknownWhy says why a figure of a storage is unknown in a run, as far as the run's results
// tell, "" where they do not; s is the storage's results, nil when the run has no such storage.
func unknownWhy(name string, s *results.Storage) string {
	section, field, _ := strings.Cut(name, ".")
	switch {
	case s == nil:
		return "the storage is not in it (pair renamed ones with -map old=new)"
	case section == "write" && s.Write == nil:
		return "the storage got no writes"
	case section == "query" && s.Query == nil:
		return "the storage was not queried"
	case section == "resources" && s.Resources == nil:
		return "the storage's resources were not observed"
	case section == "resources":
		return s.Resources.Reasons[field]
	case section == "verify" && s.Verify == nil:
		return "the storage was not read back"
	}
	if why := figureTable()[name].why; why != nil {
		return why(s)
	}
	return ""
}

// FigureNames lists Figures' names, sorted.
func FigureNames() []string {
	var names []string
	for n := range figureTable() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// FormatFigure prints a value of the named figure in its unit: counts as exact integers,
// seconds as a duration ("120ms"), sizes in IEC units ("372.0MiB"), in the forms a
// threshold accepts. An unknown figure name prints as a plain number.
func FormatFigure(name string, v float64) string {
	switch figureTable()[name].unit {
	case unitCount:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case unitSeconds:
		return time.Duration(v * float64(time.Second)).Round(time.Microsecond).String()
	case unitBytes:
		return FormatBytes(v)
	case unitBytesPerSecond:
		return FormatBytes(v) + "/s"
	}
	return FormatPlain(v)
}

// FormatBytes prints a size in the largest IEC unit it reaches, with one decimal.
func FormatBytes(v float64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	if math.Abs(v) < 1<<10 {
		return strconv.FormatFloat(v, 'f', 0, 64) + "B"
	}
	i := 0
	for v /= 1 << 10; math.Abs(v) >= 1<<10 && i < len(units)-1; i++ {
		v /= 1 << 10
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + units[i]
}

// FormatPlain prints an integer exactly, a large number with one decimal and a small one with
// six significant digits: never an exponent for a number a reader counts in.
func FormatPlain(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func sumCounts(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// seriesFigures are the held samples' figures thresholds and compare can name, unknown
// without them: write.late.sent, .acked, .refused; verify.late.checked, .stored; the same
// for outOfOrder.
func seriesFigures() map[string]figure {
	out := map[string]figure{}
	kinds := map[string]struct {
		write func(*results.Write) *results.WriteHeld
		read  func(*results.Verify) *results.VerifyHeld
	}{
		"late":       {func(w *results.Write) *results.WriteHeld { return w.Late }, func(v *results.Verify) *results.VerifyHeld { return v.Late }},
		"outOfOrder": {func(w *results.Write) *results.WriteHeld { return w.OutOfOrder }, func(v *results.Verify) *results.VerifyHeld { return v.OutOfOrder }},
	}
	for kind, k := range kinds {
		w := func(f func(*results.WriteHeld) int64) figure {
			return figure{unit: unitCount, get: func(s *results.Storage) *float64 {
				if s.Write == nil || k.write(s.Write) == nil {
					return nil
				}
				return new(float64(f(k.write(s.Write))))
			}}
		}
		v := func(f func(*results.VerifyHeld) int64) figure {
			return figure{unit: unitCount, get: func(s *results.Storage) *float64 {
				if s.Verify == nil || k.read(s.Verify) == nil {
					return nil
				}
				return new(float64(f(k.read(s.Verify))))
			}}
		}
		out["write."+kind+".sent"] = w(func(h *results.WriteHeld) int64 { return h.Sent })
		out["write."+kind+".acked"] = w(func(h *results.WriteHeld) int64 { return h.Acked })
		out["write."+kind+".refused"] = w(func(h *results.WriteHeld) int64 { return h.RefusedTotal() })
		out["verify."+kind+".checked"] = v(func(h *results.VerifyHeld) int64 { return h.Checked })
		out["verify."+kind+".stored"] = v(func(h *results.VerifyHeld) int64 { return h.Stored })
	}
	return out
}

// haFigures are the HA read-back's counts thresholds and compare can name:
// verify.ha.allCopies, .oneCopy, .gaps and .switchovers.
func haFigures() map[string]figure {
	count := func(f func(h *results.VerifyHA) *int64) figure {
		return figure{unit: unitCount, get: func(s *results.Storage) *float64 {
			if s.Verify == nil || s.Verify.HA == nil || f(s.Verify.HA) == nil { // unknown: nothing checked (issue 29)
				return nil
			}
			return new(float64(*f(s.Verify.HA)))
		}, why: func(s *results.Storage) string {
			if s.Verify.HA == nil {
				return "no HA pairs"
			}
			return strings.TrimSuffix("no HA scrape checked: "+s.Verify.HA.Reason, ": ")
		}}
	}
	return map[string]figure{
		"verify.ha.allCopies":   count(func(h *results.VerifyHA) *int64 { return h.AllCopies }),
		"verify.ha.oneCopy":     count(func(h *results.VerifyHA) *int64 { return h.OneCopy }),
		"verify.ha.gaps":        count(func(h *results.VerifyHA) *int64 { return h.Gaps }),
		"verify.ha.switchovers": count(func(h *results.VerifyHA) *int64 { return h.Switchovers }),
	}
}
