package results

import "strings"

// ThresholdResult is one threshold's outcome for one storage.
type ThresholdResult struct {
	Expr    string   `json:"expr"`
	Storage string   `json:"storage"`
	Figure  string   `json:"figure,omitempty"`
	Value   *float64 `json:"value"` // nil when the figure is unknown for that storage
	OK      bool     `json:"ok"`
	// Reason says why a threshold failed without a comparison (an unknown figure).
	Reason string `json:"reason,omitempty"`
}

// Check is the threshold as it applies to its storage: the expression without a storage prefix.
func (t ThresholdResult) Check() string {
	return strings.TrimSpace(strings.TrimPrefix(t.Expr, t.Storage+":"))
}
