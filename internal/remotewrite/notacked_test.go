package remotewrite

import (
	"slices"
	"testing"
)

// TestNotAckedSpans: spans merge where they overlap or touch, stay sorted, answer has at
// their edges, and past maxNotAckedSpans the closest two become one.
func TestNotAckedSpans(t *testing.T) {
	var n notAcked
	n.add(10, 20)
	n.add(40, 50)
	n.add(25, 30)
	n.add(18, 26) // joins the first and the third
	if want := [][2]int64{{10, 30}, {40, 50}}; !slices.Equal(n.spans, want) {
		t.Fatalf("spans %v, want %v", n.spans, want)
	}
	for tm, want := range map[int64]bool{9: false, 10: true, 30: true, 31: false, 40: true, 50: true, 51: false} {
		if n.has(tm) != want {
			t.Errorf("has(%d) = %v, want %v", tm, !want, want)
		}
	}
	var many notAcked
	for i := range int64(maxNotAckedSpans + 1) {
		gap := int64(10)
		if i == 7 {
			gap = 1 // the closest pair: spans 6 and 7
		}
		start := i * 100
		if i >= 7 {
			start -= 10 - gap
		}
		many.add(start, start+80)
	}
	if len(many.spans) != maxNotAckedSpans || !many.has(695) || many.has(690+800) {
		t.Errorf("%d spans (want %d), has(695) %v, want the closest two merged", len(many.spans), maxNotAckedSpans, many.has(695))
	}
}
