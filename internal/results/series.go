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
