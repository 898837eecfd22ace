package report

import (
	"bytes"
	"strings"
	"testing"
)

// The summary names each storage's protocol and prints the write notes (issue 16).
func TestSummaryProtocolAndNotes(t *testing.T) {
	r := writeOnly()
	r.Storages[0].Write.Protocol = "prometheus-rw2"
	r.Storages[0].Write.Notes = []string{"receiver did not confirm RW 2.0 writes: 5 samples acked by a 2xx without X-Prometheus-Remote-Write-Samples-Written"}
	r.Storages[1].Write.Protocol = "otlp-http"
	var b bytes.Buffer
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"protocol             prometheus-rw2          otlp-http",
		"\nnote " + r.Storages[0].Name + ": receiver did not confirm RW 2.0 writes: 5 samples",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	var h bytes.Buffer
	if err := WriteHTML(&h, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), "Note on "+r.Storages[0].Name+": receiver did not confirm RW 2.0 writes") {
		t.Error("report.html lacks the note")
	}
}
