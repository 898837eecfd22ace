package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/threshold"
)

// writeMetadata tells, per storage, the metadata-only requests remote write 1.0 sent
// (sendMetadata), what /api/v1/metadata returned of the families sent, and how many series
// have the zero sample of their created timestamp (examples in results.json only).
func writeMetadata(b *strings.Builder, r *results.Run) {
	sep := "\n"
	for _, s := range r.Storages {
		if s.Write != nil && s.Write.Metadata != nil {
			m := s.Write.Metadata
			fmt.Fprintf(b, "%smetadata sent %s: %d families, requests %s%s, %s (not samples)\n",
				sep, s.Name, m.Families, counts(m.RequestsByStatus), metadataRetries(m), threshold.FormatBytes(float64(m.BytesSent)))
			sep = ""
		}
		if s.Verify != nil && s.Verify.Created != nil {
			c := s.Verify.Created
			fmt.Fprintf(b, "%screated timestamps %s: %s\n", sep, s.Name, createdText(c))
			sep = ""
			for _, e := range c.Errors {
				fmt.Fprintf(b, "  error: %s\n", e)
			}
		}
		if s.Verify == nil || s.Verify.Metadata == nil {
			continue
		}
		m := s.Verify.Metadata
		fmt.Fprintf(b, "%smetadata %s: %s\n", sep, s.Name, metadataText(m))
		sep = ""
		for _, e := range m.Examples {
			fmt.Fprintf(b, "  %s\n", e)
		}
		for _, e := range m.Errors {
			fmt.Fprintf(b, "  error: %s\n", e)
		}
	}
}

// metadataVerdicts are report.html's read-back lines of the metadata and created timestamps.
func metadataVerdicts(r *results.Run) []htmlVerdict {
	var out []htmlVerdict
	for _, s := range r.Storages {
		if s.Verify == nil {
			continue
		}
		if m := s.Verify.Metadata; m != nil {
			out = append(out, htmlVerdict{Storage: s.Name + " metadata", Class: okOrFail(m.Verdict == "kept"), Text: metadataText(m)})
		}
		if c := s.Verify.Created; c != nil {
			out = append(out, htmlVerdict{Storage: s.Name + " created timestamps", Class: okOrFail(c.Verdict == "kept"), Text: createdText(c)})
		}
	}
	return out
}

// counts lists a map of counts as key=n, in key order.
func counts(m map[string]int64) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(out, " ")
}

// metadataRetries tells the metadata requests' retries and the sends dropped or pending,
// "" when there were none.
func metadataRetries(m *results.WriteMetadata) string {
	var s string
	switch {
	case m.Retries == 1:
		s += ", 1 retry"
	case m.Retries > 1:
		s += fmt.Sprintf(", %d retries", m.Retries)
	}
	if len(m.Dropped) > 0 {
		s += ", sends dropped " + counts(m.Dropped)
	}
	if m.Pending > 0 {
		s += fmt.Sprintf(", %d pending", m.Pending)
	}
	return s
}

// metadataText is the metadata read-back's verdict and counts; no counts when none was
// looked for (issue 29: not "0 of 0").
func metadataText(m *results.Metadata) string {
	if m.Verdict == results.VerdictUnknown {
		return "unknown: no family looked for"
	}
	return fmt.Sprintf("%s: %d of %d families kept, %d changed, %d missing", m.Verdict, m.Kept, m.Families, m.Changed, m.Missing)
}

// createdText is the created timestamps' read-back verdict and counts, as metadataText.
func createdText(c *results.Created) string {
	if c.Verdict == results.VerdictUnknown {
		return "unknown: no series looked for"
	}
	return fmt.Sprintf("%s: %d of %d series with a 0 at the start time", c.Verdict, c.Kept, c.Checked)
}
