package results

// WriteHeld is the account of the samples sent later than their scrape (issue 22), of one
// kind: late or out of order. They are in Write's account too; here they are counted apart,
// where Sent == Acked + sum(Refused) + Pending.
type WriteHeld struct {
	Sent    int64            `json:"sent"` // generated, × copies
	Acked   int64            `json:"acked"`
	Refused map[string]int64 `json:"refused"` // by reason: http_400, retry_timeout, ...
	Pending int64            `json:"pending"`
}

// RefusedTotal is the sum of Refused over every reason.
func (h *WriteHeld) RefusedTotal() int64 {
	var n int64
	for _, v := range h.Refused {
		n += v
	}
	return n
}

// VerifyHeld is the read-back of one held kind (late or out of order): of the held samples
// checked (sent before the checked window's end), how many the storage stored. Those not
// stored are not counted as missing in Verify: compare with the write account's refused.
type VerifyHeld struct {
	Checked int64 `json:"checked"`
	Stored  int64 `json:"stored"`
}

// Verdict says in a word what the storage did with them: stored, refused (none stored), or
// partly stored.
func (h *VerifyHeld) Verdict() string {
	switch h.Stored {
	case h.Checked:
		return "stored"
	case 0:
		return "refused"
	}
	return "partly stored"
}
