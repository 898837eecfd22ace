package results

import "fmt"

// HA pair verdicts (VerifyHA.Stored).
const (
	HAStoredBoth  = "both"  // every replica's copy of each checked scrape is stored
	HAStoredOne   = "one"   // one copy of each checked scrape: the storage deduplicated
	HAStoredMixed = "mixed" // some scrapes with every copy, some with fewer
	HAStoredNone  = "none"  // no copy of any checked scrape
	// HAStoredUnknown: no scrape was checked (VerifyHA.Reason says why); the counts are null.
	HAStoredUnknown = "unknown"
)

// VerifyHA is the read-back of an HA pair (series.haReplicas): for a few series of a few
// targets, which replicas' copies of each scrape the storage returns. A copy is told apart
// by its timestamp (replica r scrapes r × haOffset after replica 0), so the verdict holds
// whether the storage kept the replica label, dropped it, or deduplicated.
type VerifyHA struct {
	Replicas int `json:"replicas"`
	// Stored is both, one, mixed, none or unknown (see the HAStored constants).
	Stored string `json:"stored"`
	// Winner is the replica (its replica label value, else its index) whose copy was stored
	// most often where one copy was; "" when none was.
	Winner string `json:"winner,omitempty"`
	// Switchovers is how often the copy stored changed replica from one scrape of a series
	// to its next, where one copy was; null when no scrape was checked.
	Switchovers *int64 `json:"switchovers"`
	// CheckedScrapes is how many (series, scrape) pairs were looked at; AllCopies, OneCopy,
	// Gaps (no copy) and Partial (more than one copy, fewer than all) add up to it. They are
	// null when no scrape was checked (issue 29): 0 gaps of nothing checked is no finding.
	CheckedScrapes int64  `json:"checkedScrapes"`
	AllCopies      *int64 `json:"allCopies"`
	OneCopy        *int64 `json:"oneCopy"`
	Partial        *int64 `json:"partial"`
	Gaps           *int64 `json:"gaps"`
	// StoredByReplica is how many checked scrapes each replica's copy was returned for.
	StoredByReplica map[string]int64 `json:"storedByReplica"`
	// Error is why the read failed; the counts then hold what was read before.
	Error string `json:"error,omitempty"`
	// Reason says why no scrape was checked, when none was (Stored unknown).
	Reason string `json:"reason,omitempty"`
}

// HACounts is an HA read-back's tally of the scrapes checked (VerifyHA's counts).
type HACounts struct {
	AllCopies, OneCopy, Partial, Gaps, Switchovers int64
}

// SetCounts sets h's counts from c and its verdict; with no scrape checked, the counts stay
// null, Stored is unknown and Reason says why (the read's Error, else why).
func (h *VerifyHA) SetCounts(c HACounts, why string) {
	if h.CheckedScrapes == 0 {
		h.AllCopies, h.OneCopy, h.Partial, h.Gaps, h.Switchovers = nil, nil, nil, nil, nil
		h.Stored, h.Reason = HAStoredUnknown, why
		if h.Error != "" {
			h.Reason = "the read failed: " + h.Error
		}
		return
	}
	h.AllCopies, h.OneCopy, h.Partial, h.Gaps, h.Switchovers = &c.AllCopies, &c.OneCopy, &c.Partial, &c.Gaps, &c.Switchovers
	h.Verdict()
}

// Verdict sets Stored from the counts.
func (h *VerifyHA) Verdict() {
	all, one, partial, gaps := orZero(h.AllCopies), orZero(h.OneCopy), orZero(h.Partial), orZero(h.Gaps)
	switch {
	case h.CheckedScrapes == 0:
		h.Stored = HAStoredUnknown
	case all+one+partial == 0:
		h.Stored = HAStoredNone
	case one+partial+gaps == 0:
		h.Stored = HAStoredBoth
	case all+partial == 0 && h.Replicas > 1:
		h.Stored = HAStoredOne
	default:
		h.Stored = HAStoredMixed
	}
}

// Line is the verdict in one line for the summary.
func (h *VerifyHA) Line() string {
	if h.Stored == HAStoredUnknown {
		return fmt.Sprintf("HA pair (%d replicas): unknown, no scrape checked: %s", h.Replicas, h.Reason)
	}
	s := fmt.Sprintf("HA pair (%d replicas): stored %s; %d scrapes checked, %d with every copy, %d with one, %d gaps",
		h.Replicas, h.Stored, h.CheckedScrapes, orZero(h.AllCopies), orZero(h.OneCopy), orZero(h.Gaps))
	if h.Winner != "" {
		s += fmt.Sprintf("; replica %s won, %d switch-overs", h.Winner, orZero(h.Switchovers))
	}
	if h.Error != "" {
		s += "; read failed: " + h.Error
	}
	return s
}

// orZero is *n, 0 for nil: the counts of a read-back that checked scrapes are never nil.
func orZero(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}
