package targets

import (
	"strconv"
	"strings"
	"sync"

	"github.com/tsbench/tsbench/internal/workload"
)

// pages renders the generator's targets in the Prometheus text format or OpenMetrics. Each
// series' name and profile labels are rendered once; a page adds values (and timestamps).
type pages struct {
	gen      *workload.Generator
	prefixes []string // per profile series: name{labels} without the target's labels
	bufs     sync.Pool
}

func newPages(gen *workload.Generator) *pages {
	p := &pages{gen: gen}
	for s := range gen.SeriesPerTarget() {
		series := gen.Series(s)
		var b strings.Builder
		b.WriteString(series.Name)
		first := true
		for _, l := range series.Labels {
			if isTargetLabel(l.Name) {
				continue // the generator replaces these with the target's: so does the agent
			}
			if first {
				b.WriteByte('{')
				first = false
			} else {
				b.WriteByte(',')
			}
			b.WriteString(l.Name)
			b.WriteString(`="`)
			b.WriteString(escapeLabelValue(l.Value))
			b.WriteByte('"')
		}
		if !first {
			b.WriteByte('}')
		}
		p.prefixes = append(p.prefixes, b.String())
	}
	p.bufs.New = func() any { b := make([]byte, 0, 64*len(p.prefixes)); return &b }
	return p
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func escapeLabelValue(v string) string { return labelEscaper.Replace(v) }

// render writes target's page at t (ms) and returns it with its number of samples. The page
// is valid until the next render: it is copied out of a pooled buffer.
func (p *pages) render(target int, t int64, timestamps, openMetrics bool) ([]byte, int) {
	bp := p.bufs.Get().(*[]byte)
	b := (*bp)[:0]
	for s, prefix := range p.prefixes {
		b = append(b, prefix...)
		b = append(b, ' ')
		b = strconv.AppendFloat(b, p.gen.Value(target, s, t), 'g', -1, 64)
		if timestamps {
			b = append(b, ' ')
			if openMetrics { // seconds, exactly the millisecond
				b = strconv.AppendInt(b, t/1000, 10)
				b = append(b, '.')
				ms := t % 1000
				b = append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
			} else {
				b = strconv.AppendInt(b, t, 10)
			}
		}
		b = append(b, '\n')
	}
	if openMetrics {
		b = append(b, "# EOF\n"...)
	}
	out := append([]byte(nil), b...)
	*bp = b
	p.bufs.Put(bp)
	return out, len(p.prefixes)
}
