package report

import (
	"fmt"

	"github.com/tsbench/tsbench/internal/results"
)

// severity is the colour of a line of report.html, by what it says of the data (issue 35):
// red for data lost or wrong, amber for a difference that is neither, green for data as
// written, grey for what the live page still waits for.
type severity string

const (
	sevOK   severity = "ok"   // as written
	sevNote severity = "note" // float rounding of a few ulp, or storages' answers that differ
	sevFail severity = "fail" // lost or wrong data, or a read that failed
	// sevWaiting is grey: not measured yet, on the live page.
	sevWaiting severity = "waiting"
)

// okOrFail is sevOK when ok, else sevFail.
func okOrFail(ok bool) severity {
	if ok {
		return sevOK
	}
	return sevFail
}

// floatNoise is the largest relative error that the read-back's changed values may have
// and still be float rounding rather than wrong data: 4 × 2⁻⁵² ≈ 8.9e-16, a few ulp (one
// ulp of a float64 is 2⁻⁵³ to 2⁻⁵² of its value). A storage that keeps values as decimals
// (VictoriaMetrics) returns some of them 1 or 2 ulp away from what it was given.
const floatNoise = 4 * 0x1p-52

// readBackVerdict is a storage's read-back verdict line: green when it returned exactly what
// it was given, amber when the only difference is values changed by float rounding (each
// with a relative error, the largest within floatNoise), red otherwise.
func readBackVerdict(s *results.Storage) htmlVerdict {
	v := s.Verify
	out := htmlVerdict{Storage: readBackName(s), Text: v.Verdict(), Class: okOrFail(v.Exact())}
	if floatRoundingOnly(v) {
		out.Class = sevNote
		out.Text += fmt.Sprintf(": float rounding of a few ulp (relative error at most %.2g), no value lost or wrong", floatNoise)
	}
	return out
}

// floatRoundingOnly reports whether the read-back found values changed by float rounding
// and nothing else: the checks during the run count changed values without their error, so
// a run whose checks found any is not read as rounding.
func floatRoundingOnly(v *results.Verify) bool {
	if v.ChangedValues == 0 || v.ChangedWithoutRelativeError > 0 || v.MaxRelativeError > floatNoise {
		return false
	}
	rest := *v
	rest.ChangedValues, rest.MaxRelativeError = 0, 0
	return rest.Exact()
}
