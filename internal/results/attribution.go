package results

import (
	"fmt"
	"strings"
)

// LabelChange is one difference between the labels a series was written with and those it
// is stored under, found by the read-back (issue 21): a label renamed (From and To), dropped
// (To empty) or added (From empty). Series is how many series were found under the change.
type LabelChange struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Series int64  `json:"series"`
}

func (c LabelChange) String() string {
	switch {
	case c.From == "":
		return "added " + c.To
	case c.To == "":
		return "dropped " + c.From
	}
	return c.From + " → " + c.To
}

// StoredNothing says a storage acknowledged writes and stored none of them: every read-back
// read answered, none with a sample of the workload under any labels.
type StoredNothing struct {
	// Protocol is what the storage was written in; Hint says what to check.
	Protocol string `json:"protocol"`
	Hint     string `json:"hint"`
	// Acked is how many samples it answered 2xx to (the write account's ackedSamples).
	Acked int64 `json:"acked"`
}

// labelChangesText is the label changes in one phrase: "job → service_name, added otel_scope_name".
func labelChangesText(cs []LabelChange) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, ", ")
}

// attributionVerdict is the verdict of a read-back that found the storage stored nothing, or
// every sample under other labels and nothing else wrong; "" otherwise.
func (v *Verify) attributionVerdict() string {
	if s := v.StoredNothing; s != nil {
		acked := "answered 2xx"
		if s.Acked > 0 {
			acked = fmt.Sprintf("answered 2xx to %d samples", s.Acked)
		}
		return fmt.Sprintf("stored nothing: it %s over %s, and no read found any of them under any labels; %s", acked, s.Protocol, s.Hint)
	}
	if len(v.LabelChanges) == 0 {
		return ""
	}
	renamed := fmt.Sprintf("stored under other labels (%s): %d of %d samples found there", labelChangesText(v.LabelChanges), v.RenamedSamples, v.CheckedSamples)
	if !v.exactValues() {
		return ""
	}
	for _, c := range v.LabelChanges {
		if c.From != "" { // a label written is not there: the user's queries miss the data
			return renamed + ", every value and timestamp exact; set otlpLabels, or query under these labels"
		}
	}
	return renamed + ", every value and timestamp exact; the added labels are the storage's own"
}
