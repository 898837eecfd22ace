package report

// ThresholdResult is one threshold's outcome for one storage.
type ThresholdResult struct {
	Expr    string   `json:"expr"`
	Storage string   `json:"storage"`
	Value   *float64 `json:"value"` // nil when the figure is unknown for that storage
	OK      bool     `json:"ok"`
}
