package results

import (
	"encoding/json"
	"reflect"
	"strings"
)

// CheckedNothing reports whether the read-back looked for no sample, at the end or in a
// check during the run: then none of its counts is known, and "0 missing" would read as
// "nothing lost".
func (v *Verify) CheckedNothing() bool {
	return v.CheckedSamples == 0 && (v.Continuous == nil || v.Continuous.Total.Checked == 0)
}

// verifyFields is Verify without its methods, so that MarshalJSON can encode it.
type verifyFields Verify

// uncheckedVerify is a Verify that checked nothing as results.json writes it: its counts
// null (these fields hide the embedded ones of the same JSON name) and NotChecked saying
// why.
type uncheckedVerify struct {
	*verifyFields
	MissingSamples              *int64   `json:"missingSamples"`
	DuplicateSamples            *int64   `json:"duplicateSamples"`
	UnexpectedSamples           *int64   `json:"unexpectedSamples"`
	ChangedValues               *int64   `json:"changedValues"`
	MaxRelativeError            *float64 `json:"maxRelativeError"`
	ChangedWithoutRelativeError *int64   `json:"changedWithoutRelativeError"`
	NaNAltered                  *int64   `json:"nanAltered"`
	StalenessIgnored            *int64   `json:"stalenessIgnored"`
	MissingStaleMarkers         *int64   `json:"missingStaleMarkers"`
	ShiftedTimestamps           *int64   `json:"shiftedTimestamps"`
	LostAfterAck                *int64   `json:"lostAfterAck"`
}

// UncheckedFields are the fields of Verify that results.json writes null when the read-back
// checked nothing: its JSON Schema lets them be null.
func UncheckedFields() []string {
	t := reflect.TypeFor[uncheckedVerify]()
	var names []string
	for i := 1; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}

// MarshalJSON writes a read-back that checked something as it is, and one that checked
// nothing with its counts null and the reason in notChecked (issue 35). Reading such a file
// back gives zero counts, which CheckedNothing still tells apart.
func (v *Verify) MarshalJSON() ([]byte, error) {
	if !v.CheckedNothing() {
		return json.Marshal((*verifyFields)(v))
	}
	c := *v
	c.NotChecked = v.NotCheckedReason()
	return json.Marshal(uncheckedVerify{verifyFields: (*verifyFields)(&c)})
}
