package reproduce

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tsbench/tsbench/internal/results"
)

// Judge sets each of pub's figures beside the run's, at the given scale.
func Judge(r *results.Run, pub *Published, scale float64) *results.Reproduction {
	rep := &results.Reproduction{
		Name: pub.Name, Article: pub.Article, Scale: scale, Date: pub.Date, Versions: pub.Versions, Hardware: pub.Hardware,
		Rows: []results.ReproductionRow{},
	}
	if r.Workload.Targets > 0 {
		rep.ArticleScale = scale * pub.Setup.Targets / float64(r.Workload.Targets)
	}
	for _, name := range sortedKeys(pub.StandIns) {
		if r.Storage(name) != nil {
			rep.StandIns = append(rep.StandIns, name+": "+pub.StandIns[name])
		}
	}
	for _, f := range pub.Figures {
		rep.Rows = append(rep.Rows, judgeRow(r, pub, f))
	}
	if z := pub.Sizing; z != nil {
		perCore, why := generatorPerCore(r, nil)
		perSeries, why2 := generatorPerSeries(r, nil)
		if why != "" || why2 != "" {
			rep.Notes = append(rep.Notes, "no sizing: "+strings.Trim(why+"; "+why2, "; "))
		} else {
			rep.Notes = append(rep.Notes, "sizing at this run's figures: "+Size(z.SamplesPerSecond, z.ActiveSeries, perCore, perSeries).String())
		}
	}
	return rep
}

func judgeRow(r *results.Run, pub *Published, f Figure) results.ReproductionRow {
	row := results.ReproductionRow{Figure: f.Figure, Published: f.Text, Tolerance: f.Tolerance, PublishedValue: f.Value * units[f.Unit] / pub.Setup.per(f.Per)}
	if f.Unmeasured != "" {
		row.Compared, row.Verdict, row.Reason = "-", results.NotComparable, f.Unmeasured
		return row
	}
	m := measures[f.Measure]
	row.Compared = m.compared
	names := strings.Split(f.Storage, "/")
	vals := make([]float64, 0, len(names))
	for _, name := range names {
		v, reason := read(r, pub, m, name)
		if reason != "" {
			if name != "" {
				reason = name + ": " + reason
			}
			row.Verdict, row.Reason = results.NotComparable, reason
			return row
		}
		vals = append(vals, v)
	}
	v := vals[0]
	row.Measured = fmt.Sprintf("%.3g", v)
	if len(vals) == 2 {
		if vals[1] == 0 {
			row.Verdict, row.Reason = results.NotComparable, fmt.Sprintf("%s: 0, a ratio over it is undefined", names[1])
			return row
		}
		v = vals[0] / vals[1]
		row.Compared = "ratio " + f.Storage + " of " + m.compared
		row.Measured = fmt.Sprintf("%.3g / %.3g = %.3g×", vals[0], vals[1], v)
	}
	row.MeasuredValue = &v
	row.Verdict = verdict(row.PublishedValue, v, f.Tolerance)
	if row.PublishedValue != 0 {
		row.Ratio = new(v / row.PublishedValue)
	}
	var notes []string
	for _, name := range names {
		if note, ok := pub.StandIns[name]; ok {
			notes = append(notes, name+": "+note)
		}
	}
	row.Reason = strings.Join(notes, "; ")
	return row
}

// read is the measure of the named storage ("" for the workload), or why it is unknown.
func read(r *results.Run, pub *Published, m measure, name string) (float64, string) {
	if name == "" {
		return m.fn(r, nil)
	}
	s := r.Storage(name)
	switch {
	case s == nil && pub.Absent[name] != "":
		return 0, pub.Absent[name]
	case s == nil:
		return 0, "no storage of that name in this run: name one in remoteStorages (-config overrides.yaml)"
	case s.Resources == nil || s.Write == nil:
		return 0, "not written to, or its resources not observed"
	}
	return m.fn(r, s)
}

// verdict is holds when measured is within the tolerance factor of published.
func verdict(published, measured, tolerance float64) string {
	if published == 0 || measured == 0 {
		if published == measured {
			return results.Holds
		}
		return results.DoesNotHold
	}
	f := measured / published
	if f < 0 { // opposite signs
		return results.DoesNotHold
	}
	if math.Max(f, 1/f) <= 1+tolerance+1e-9 {
		return results.Holds
	}
	return results.DoesNotHold
}

// per is what a figure is divided by to be scale-free.
func (s Setup) per(per string) float64 {
	switch per {
	case "target":
		return s.Targets
	case "activeSeries":
		return s.ActiveSeries
	case "sample":
		return s.Samples
	case "millionSamplesPerSecond":
		return s.SamplesPerSecond / 1e6
	case "samplesPerSecond":
		return s.SamplesPerSecond
	}
	return 1
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
