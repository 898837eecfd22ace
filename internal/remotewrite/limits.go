package remotewrite

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

// limitLog keeps the limits one storage's refusals named: every family's (storage.Limit),
// in their Order. The zero value is ready; its rules are compiled at the first refusal,
// which most runs never see.
type limitLog struct {
	mu     sync.Mutex // guards limits, seen
	limits *storage.Limits
	seen   []results.WriteLimit
}

// recognizeLocked returns the limit body names, or ok=false.
func (ll *limitLog) recognizeLocked(status int, body string) (l results.WriteLimit, ok bool) {
	if ll.limits == nil {
		ll.limits = storage.NewLimits(storage.AllLimits())
	}
	m, ok := ll.limits.Recognize(body)
	if !ok {
		return results.WriteLimit{}, false
	}
	return results.WriteLimit{Limit: m.Name, Family: m.Family, Value: m.Value, Raise: m.Raise, Status: status, Message: strings.TrimSpace(body)}, true
}

// note records a refusal's body: the first time a limit is named, it is logged with what
// raises it; every time, it is counted. Answers that are not refusals name nothing.
func (ll *limitLog) note(status int, body string, log *slog.Logger) {
	if status < 400 || body == "" {
		return
	}
	ll.mu.Lock()
	l, ok := ll.recognizeLocked(status, body)
	if !ok {
		ll.mu.Unlock()
		return
	}
	for i := range ll.seen {
		if ll.seen[i].Limit == l.Limit && ll.seen[i].Family == l.Family {
			ll.seen[i].Requests++
			ll.mu.Unlock()
			return
		}
	}
	l.Requests = 1
	ll.seen = append(ll.seen, l)
	ll.mu.Unlock()
	log.Warn("storage refused writes at one of its limits; raise it on the storage to benchmark this load",
		"limit", l.Limit, "value", l.Value, "family", l.Family, "raise", l.Raise, "status", status)
}

// results returns a copy of the limits met, nil when none.
func (ll *limitLog) results() []results.WriteLimit {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	if len(ll.seen) == 0 {
		return nil
	}
	return append([]results.WriteLimit(nil), ll.seen...)
}
