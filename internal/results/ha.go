package results

import "fmt"

// HA pair verdicts (VerifyHA.Stored).
const (
	HAStoredBoth  = "both"  // every replica's copy of each checked scrape is stored
	HAStoredOne   = "one"   // one copy of each checked scrape: the storage deduplicated
	HAStoredMixed = "mixed" // some scrapes with every copy, some with fewer
	HAStoredNone  = "none"  // no copy of any checked scrape
)

// VerifyHA is the read-back of an HA pair (series.haReplicas): for a few series of a few
// targets, which replicas' copies of each scrape the storage returns. A copy is told apart
// by its timestamp (replica r scrapes r × haOffset after replica 0), so the verdict holds
// whether the storage kept the replica label, dropped it, or deduplicated.
type VerifyHA struct {
	Replicas int `json:"replicas"`
	// Stored is both, one, mixed or none (see the HAStored constants).
	Stored string `json:"stored"`
	// Winner is the replica (its replica label value, else its index) whose copy was stored
	// most often where one copy was; "" when none was.
	Winner string `json:"winner,omitempty"`
	// Switchovers is how often the copy stored changed replica from one scrape of a series
	// to its next, where one copy was.
	Switchovers int64 `json:"switchovers"`
	// CheckedScrapes is how many (series, scrape) pairs were looked at; AllCopies, OneCopy,
	// Gaps (no copy) and Partial (more than one copy, fewer than all) add up to it.
	CheckedScrapes int64 `json:"checkedScrapes"`
	AllCopies      int64 `json:"allCopies"`
	OneCopy        int64 `json:"oneCopy"`
	Partial        int64 `json:"partial"`
	Gaps           int64 `json:"gaps"`
	// StoredByReplica is how many checked scrapes each replica's copy was returned for.
	StoredByReplica map[string]int64 `json:"storedByReplica"`
	// Error is why the read failed; the counts then hold what was read before.
	Error string `json:"error,omitempty"`
}

// Verdict sets Stored from the counts.
func (h *VerifyHA) Verdict() {
	switch {
	case h.AllCopies+h.OneCopy+h.Partial == 0:
		h.Stored = HAStoredNone
	case h.OneCopy+h.Partial+h.Gaps == 0:
		h.Stored = HAStoredBoth
	case h.AllCopies+h.Partial == 0 && h.Replicas > 1:
		h.Stored = HAStoredOne
	default:
		h.Stored = HAStoredMixed
	}
}

// Line is the verdict in one line for the summary.
func (h *VerifyHA) Line() string {
	s := fmt.Sprintf("HA pair (%d replicas): stored %s; %d scrapes checked, %d with every copy, %d with one, %d gaps",
		h.Replicas, h.Stored, h.CheckedScrapes, h.AllCopies, h.OneCopy, h.Gaps)
	if h.Winner != "" {
		s += fmt.Sprintf("; replica %s won, %d switch-overs", h.Winner, h.Switchovers)
	}
	if h.Error != "" {
		s += "; read failed: " + h.Error
	}
	return s
}
