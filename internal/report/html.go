package report

import (
	"html/template"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

const htmlPage = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
{{with .Live}}{{if .Refresh}}<meta http-equiv="refresh" content="{{.Refresh}}">
{{end}}{{end}}<title>tsbench report {{.Start}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;width:100%}
.sections{display:grid;grid-template-columns:repeat(auto-fill,minmax(500px,1fr));gap:12px 32px;align-items:start}
td,th{padding:3px 10px;border-bottom:1px solid #e4e4e4;text-align:right;vertical-align:top}
td:first-child,th:first-child,td.text,th.text{text-align:left}
tr.sec th{background:#f4f4f4}
td.best{font-weight:700;color:#0a6b2d}
.scroll{overflow-x:auto}.probes td.text{overflow-wrap:break-word;font-size:13px}.probes td:first-child{min-width:10em}
.charts{display:flex;flex-wrap:wrap;gap:12px}
svg.chart{border:1px solid #ddd;background:#fff}
.title{font-size:13px;font-weight:600}.tick,.legend{font-size:11px;fill:#333}.clock{font-size:10px;fill:#777}.marker{fill:none;stroke-width:1.5px;pointer-events:all}.nodata{font-size:13px;fill:#666}
.axis{stroke:#777}.grid{stroke:#d3dae4;stroke-width:1}.ok{color:#0a6b2d}.fail{color:#b00020}.note{color:#8a5300}.waiting{color:#666}
</style></head><body>
{{with .Live}}<p class="live" style="padding:8px 12px;background:#fff4d6;border:1px solid #e0b84c">{{.Banner}}</p>
{{end}}{{if .ConformanceOnly}}<h1>tsbench conformance: {{len .R.Storages}} storages</h1>
<p>{{.Start}} → {{.End}}</p>
{{range .R.Storages}}{{$name := .Name}}{{range .Problems}}<p class="fail">Problem with {{$name}}: {{.}}</p>
{{end}}{{end}}{{else}}<h1>tsbench: {{len .R.Storages}} storages, {{.R.Workload.Targets}} targets × {{.R.Workload.SeriesPerTarget}} series</h1>
<p>{{.Start}} → {{.End}}{{if .R.Workload.HistorySeconds}} · history {{.History}}: each storage caught up with the workload's clock, {{.History}} behind at the start, then ran live ("history (catch-up)" rows){{end}} · seed {{.R.Workload.Seed}} · {{.R.Workload.SeriesCreated}} series created by churn · {{.R.Workload.StaleMarkers}} stale markers</p>
{{with .Interrupted}}<p class="fail">{{.}}</p>
{{end}}{{range .Status}}<p class="fail">{{.}}</p>
{{end}}{{with .Says}}<h2>What this run says</h2><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{with .Reproduction}}{{.}}
{{end}}{{range $i, $l := .LongRun}}<p class="{{if and (eq $i 0) $.R.Partial}}note{{else}}fail{{end}}">{{$l}}</p>
{{end}}{{range .R.Storages}}{{$name := .Name}}{{range .Problems}}<p class="fail">Problem with {{$name}}: {{.}}</p>
{{end}}{{with .Version}}<p>Version of {{$name}}: {{.}}</p>
{{end}}{{with .Settings}}<p>Settings of {{$name}} that change what tsbench measures: <code>{{join . " "}}</code></p>
{{end}}{{range .SettingsWarnings}}<p class="fail">Setting of {{$name}} hides data from the checks: {{.}}</p>
{{end}}{{with .Write}}{{range .Notes}}<p>Note on {{$name}}: {{.}}</p>
{{end}}{{range .Limits}}<p class="fail">Limit of {{$name}}: {{.Family}} refused {{.Requests}} requests (HTTP {{.Status}}) at its {{.Limit}} limit{{with .Value}} ({{.}}){{end}}; raise {{.Raise}}</p>
{{end}}{{end}}{{end}}{{range .R.AccountingErrors}}<p class="fail">Accounting error: {{.}}</p>
{{end}}<div class="sections">{{range .Sections}}<table><tr class="sec"><th>{{.Title}}</th>{{range $.R.Storages}}<th>{{.Name}}</th>{{end}}</tr>
{{range .Rows}}<tr><td>{{.Label}}</td>{{range .Cells}}<td{{if .Best}} class="best"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table>
{{end}}</div>
{{with .WaitingNote}}<p class="waiting">{{.}}</p>
{{end}}<p>Bold green, and * in the summary: {{.Legend}}. {{.BytesSpan}}. Below, red is data lost or wrong; amber a difference that is neither (float rounding of a few ulp, storages whose answers differ).{{with .R.Generator}}{{if and $.Waiting (not .CPUCoresMean)}} tsbench's own use: waiting for its first observations.{{else}} tsbench itself used {{fmtPtr "%.3f" .CPUCoresMean 1}} cores on average, {{fmtPtr "%.3f" .CPUCoresMax 1}} at most, and {{fmtPtr "%.1f" .RSSBytesMax 1048576}} MiB of memory at most.{{end}}{{end}}</p>
{{with .Freshness}}<h2>Freshness</h2><p>{{$.FreshnessTitle}}</p><table>{{range $i, $row := .}}<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>{{end}}</table>
{{end}}{{end}}{{.Conformance}}{{with .Sender}}<h2>Sender</h2><ul>{{range .}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{if .Verdicts}}<h2>Read-back</h2><ul>{{range .Verdicts}}<li class="{{.Class}}">{{.Storage}}: {{.Text}}</li>{{end}}</ul>
{{end}}{{if .Probes}}<h2>PromQL probes</h2><div class="scroll"><table class="probes"><tr><th>probe</th><th class="text">expected</th>{{range .R.Storages}}<th class="text">{{.Name}}</th>{{end}}</tr>
{{range .Probes}}<tr><td>{{.Name}}</td><td class="text">{{breakable .Expected}}</td>{{$p := .}}{{range $i, $got := .Got}}<td class="text{{if index $p.Differs $i}} fail{{end}}">{{if index $p.Differs $i}}✗ {{end}}{{if and $.Waiting (eq $got "?")}}waiting{{else}}{{breakable $got}}{{end}}</td>{{end}}</tr>
{{end}}</table></div>
{{end}}{{with .RuleDiffs}}<h2>Rules whose range-query results differ across storages</h2><ul>{{range .}}<li class="{{if .Count}}note{{else}}ok{{end}}">{{.Storage}}: {{if .Count}}{{.Count}}<ul>{{range .Diffs}}<li>{{.Rule}}: {{.Detail}}</li>{{end}}{{if .More}}<li>… and {{.More}} more</li>{{end}}</ul>{{else}}none of {{.Compared}} compared{{end}}</li>{{end}}</ul>
{{end}}{{with .NotCompared}}<details><summary>{{len .}} {{$.NotComparedText}}</summary><p>{{join . ", "}}</p></details>
{{end}}{{if .Slowest}}<h2>Slowest queries</h2><p>Each storage's {{.SlowestN}} slowest queries by p99 latency, measured from the scheduled time.</p>
<table><tr><th>storage</th><th class="text">kind</th><th class="text">query</th><th>p99 (s)</th><th>errors</th></tr>
{{range .Slowest}}<tr><td>{{.Storage}}</td><td class="text">{{.Kind}}</td><td class="text">{{.Name}}</td><td>{{if .P99}}{{fmtPtr "%.3f" .P99 1.0}}{{else if .Errors}}none answered{{else}}?{{end}}</td><td>{{.Errors}}</td></tr>
{{end}}</table>
{{else if .SlowestWaiting}}<h2>Slowest queries</h2><p class="waiting">Waiting for the first query answered.</p>
{{end}}{{if .R.Thresholds}}<h2>Thresholds</h2><ul>{{range .R.Thresholds}}{{if and $.Waiting (not .OK) (not .Value)}}<li class="waiting">… {{.Storage}}: {{.Check}} (waiting for its first value)</li>{{else}}<li class="{{if .OK}}ok{{else}}fail{{end}}">{{if .OK}}✓{{else}}✗{{end}} {{.Storage}}: {{.Check}} {{if .Value}}(is {{valueText .}}){{else if .Reason}}({{.Reason}}){{end}}</li>{{end}}{{end}}</ul>
{{end}}{{if .Events}}<h2>Cardinality events</h2><p>Each storage's mean in the calm before the event → during it (shaded on the charts).</p><ul>{{range .Events}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{with .RoundCharts}}<h2>Rounds</h2><p>Each round a point, each storage's interval a band, its median a line; hover for the values.</p><div class="charts">{{range .}}{{.}}{{end}}</div>
{{end}}{{if not .ConformanceOnly}}<h2>Over time</h2><div class="charts">{{range .Charts}}{{.}}{{end}}</div>{{end}}
</body></html>
`

type htmlCell struct {
	Text string
	Best bool
}

type htmlRow struct {
	Label string
	Cells []htmlCell
}

type htmlSection struct {
	Title string
	Rows  []htmlRow
}

// htmlVerdict is one storage's read-back verdict line, coloured by its severity.
type htmlVerdict struct {
	Storage, Text string
	Class         severity
}

// slowQuery is one line of the slowest queries table.
type slowQuery struct {
	Storage, Kind, Name string
	P99                 *float64 // nil: it never completed
	Errors              int64
}

// WriteHTML writes report.html: one self-contained page, no script, no external resource.
func WriteHTML(w io.Writer, r *results.Run) error { return writeHTML(w, r, nil) }

func writeHTML(w io.Writer, r *results.Run, live *liveBanner) error {
	tmpl, err := template.New("report").Funcs(template.FuncMap{"fmtPtr": fmtPtr, "valueText": ValueText, "join": strings.Join, "breakable": breakable}).Parse(htmlPage)
	if err != nil {
		return err
	}
	conf, err := conformanceHTML(r)
	if err != nil {
		return err
	}
	repro, err := reproductionSection(r)
	if err != nil {
		return err
	}
	waiting := live != nil && r.Partial != nil // a run still going: what is not measured yet is waited for
	secs, slow := htmlSections(r), slowest(r)
	var waits []string
	if waiting {
		waits, slow = markWaiting(secs, r), answered(slow)
	}
	var svgs []template.HTML
	for _, c := range charts(r) {
		if waiting {
			c.Empty = "waiting for the first point"
		}
		svgs = append(svgs, c.svg())
	}
	return tmpl.Execute(w, map[string]any{
		"R": r, "Conformance": conf, "Reproduction": repro, "ConformanceOnly": conformanceOnly(r), "Sections": secs, "Charts": svgs, "Events": EventLines(r),
		"Verdicts": verdicts(r, waiting), "Sender": SenderLines(r), "RuleDiffs": ruleDiffLists(r), "NotCompared": rulesNotCompared(r), "NotComparedText": notComparedText,
		"Freshness": FreshnessRows(r), "FreshnessTitle": FreshnessTitle(r), "Probes": ProbeRows(r), "Slowest": slow, "SlowestN": slowestPerStorage,
		"Start": r.StartTime.UTC().Format("2006-01-02 15:04:05Z"), "End": r.EndTime.UTC().Format("2006-01-02 15:04:05Z"),
		"History": time.Duration(r.Workload.HistorySeconds * float64(time.Second)).String(), "LongRun": LongRunLines(r),
		"Live": live, "Status": StatusLines(r), "Interrupted": InterruptedLine(r), "Says": saysLines(r),
		"Legend": Legend(r), "BytesSpan": BytesPerSampleSpan(r), "RoundCharts": roundCharts(r), "Waiting": waiting, "WaitingNote": waitingNote(waits),
		"SlowestWaiting": waiting && len(slow) == 0 && slices.ContainsFunc(r.Storages, func(s results.Storage) bool { return s.Query != nil }),
	})
}

// htmlSections is the side-by-side table with the best cell of each row marked.
func htmlSections(r *results.Run) []htmlSection {
	var secs []htmlSection
	for _, sec := range table(r) {
		hs := htmlSection{Title: sec.title}
		for _, rw := range sec.rows {
			best := rw.bestIndex()
			hr := htmlRow{Label: rw.label}
			for i, c := range rw.cells {
				hr.Cells = append(hr.Cells, htmlCell{Text: c, Best: i == best})
			}
			hs.Rows = append(hs.Rows, hr)
		}
		secs = append(secs, hs)
	}
	return secs
}

// verdicts are the read-back's verdict lines; on the live page (waiting), a storage whose
// read-back at the end has not run says it waits for it, not that it checked nothing (red).
func verdicts(r *results.Run, waiting bool) []htmlVerdict {
	var out []htmlVerdict
	for _, s := range r.Storages {
		if noQueryAPI(&s) {
			out = append(out, htmlVerdict{Storage: s.Name, Text: noQueryAPIText(&s), Class: sevFail})
		}
		switch {
		case s.Verify == nil:
		case waiting && s.Verify.CheckedSamples == 0:
			out = append(out, htmlVerdict{Storage: readBackName(&s), Text: "waiting for the read-back at the end", Class: sevWaiting})
		default:
			out = append(out, readBackVerdict(&s))
		}
	}
	for _, v := range checkVerdicts(r) {
		v.Storage += " during the run"
		out = append(out, v)
	}
	return append(out, metadataVerdicts(r)...)
}

// slowest lists each storage's slowestQueries, storage by storage.
func slowest(r *results.Run) []slowQuery {
	var out []slowQuery
	for i := range r.Storages {
		for _, q := range slowestQueries(&r.Storages[i]) {
			out = append(out, slowQuery{Storage: r.Storages[i].Name, Kind: q.Kind, Name: q.Name, P99: q.LatencySeconds.P99, Errors: sumCounts(q.Errors)})
		}
	}
	return out
}

// breakable is s, escaped, with a line break allowed after each "{" and ",": a probe's
// answer (a label set) wraps between labels, never inside one ("revisi on", issue 39); the
// page's CSS breaks a word only when it is wider than the page.
func breakable(s string) template.HTML {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(template.HTMLEscapeString(string(r)))
		if r == '{' || r == ',' {
			b.WriteString("<wbr>")
		}
	}
	return template.HTML(b.String())
}
