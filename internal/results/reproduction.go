package results

// Reproduction is a published comparison set beside what this run measured (tsbench
// reproduce NAME): one row per published figure, each with its verdict.
type Reproduction struct {
	Name    string `json:"name"`    // the scenario, e.g. node-exporter-24h
	Article string `json:"article"` // the source: its file under the seeds and its title
	// Scale multiplies the scenario's targets; the article's own scale is ArticleScale.
	Scale        float64 `json:"scale"`
	ArticleScale float64 `json:"articleScale"`
	Date         string  `json:"date"`     // when the article's figures were measured
	Versions     string  `json:"versions"` // what the article measured
	Hardware     string  `json:"hardware"` // what the article measured it on
	// StandIns say which storage of this run stands in for the article's, and how they differ.
	StandIns []string          `json:"standIns,omitempty"`
	Rows     []ReproductionRow `json:"rows"`
	// Notes are what the scenario derives from its rows: 100m-samples' sizing of the
	// generator for the article's load.
	Notes []string `json:"notes,omitempty"`
}

// The verdicts of a reproduction row.
const (
	Holds         = "holds"
	DoesNotHold   = "does not hold"
	NotComparable = "not comparable here"
)

// ReproductionRow is one published figure and what this run measured of it.
type ReproductionRow struct {
	Figure string `json:"figure"` // what it is, e.g. "disk per sample, Prometheus over VictoriaMetrics"
	// Published is the article's figure as it gives it, with its unit ("52.3 GB").
	Published string `json:"published"`
	// Measured is this run's figure in the same words, "" when not measured.
	Measured string `json:"measured"`
	// Compared names the scale-free form both are compared in ("bytes per sample",
	// "ratio prometheus/victoriametrics", "RSS bytes per active series", "cores per million
	// samples/s"), PublishedValue and MeasuredValue are both in it; MeasuredValue is nil
	// when not measured, with the reason in Reason.
	Compared       string   `json:"compared"`
	PublishedValue float64  `json:"publishedValue"`
	MeasuredValue  *float64 `json:"measuredValue"`
	// Tolerance is how far MeasuredValue may be from PublishedValue for the figure to hold,
	// as a factor: 0.5 holds from PublishedValue/1.5 to PublishedValue×1.5.
	Tolerance float64 `json:"tolerance"`
	// Verdict is holds, does not hold or not comparable here.
	Verdict string `json:"verdict"`
	// Ratio is MeasuredValue over PublishedValue, set when both are known.
	Ratio *float64 `json:"ratio,omitempty"`
	// Reason says why a row is not comparable here and what would make it so, or qualifies
	// a measured one (a storage standing in for the article's, the span it covers).
	Reason string `json:"reason,omitempty"`
}
