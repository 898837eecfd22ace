package storage

import (
	"regexp"
	"strings"
)

// LimitMet is a limit a refusal named: writeLimits[] of results.json but for the counts.
type LimitMet struct {
	Name, Family, Value, Raise string
}

// Limits recognise limits in the bodies of refusals.
type Limits struct {
	rules []compiledLimit
}

type compiledLimit struct {
	Limit
	match, raiseFrom *regexp.Regexp
}

// AllLimits are every family's limits, in Order.
func AllLimits() []Limit {
	var ls []Limit
	for _, f := range Families() {
		ls = append(ls, f.Limits...)
	}
	return ls
}

// NewLimits compiles ls, which are tried in their order: the first match wins.
func NewLimits(ls []Limit) *Limits {
	out := &Limits{}
	for _, l := range ls {
		c := compiledLimit{Limit: l, match: regexp.MustCompile(l.Match)}
		if l.RaiseFrom != "" {
			c.raiseFrom = regexp.MustCompile(l.RaiseFrom)
		}
		out.rules = append(out.rules, c)
	}
	return out
}

// Recognize returns the limit body names, or ok=false.
func (ls *Limits) Recognize(body string) (l LimitMet, ok bool) {
	for _, r := range ls.rules {
		m := r.match.FindStringSubmatch(body)
		if m == nil {
			continue
		}
		l = LimitMet{Name: r.Name, Family: r.Family, Raise: r.Raise}
		if len(m) > 1 {
			l.Value = m[1]
			if strings.Contains(l.Name, "$1") { // the group names the limit: no value
				l.Name, l.Value = strings.ReplaceAll(l.Name, "$1", m[1]), ""
			}
			l.Raise = strings.ReplaceAll(l.Raise, "$1", m[1])
		}
		if r.raiseFrom != nil {
			if f := r.raiseFrom.FindStringSubmatch(body); f != nil {
				l.Raise = strings.TrimSuffix(strings.Join(f[1:], " and "), " and ")
			}
		}
		return l, true
	}
	return LimitMet{}, false
}
