package local

import "github.com/tsbench/tsbench/internal/storage"

// SampleTypeFlags are the flags a local storage of kind needs to store native histograms and
// exemplars (storage.Local's SampleTypes); nil: none.
func SampleTypeFlags(kind storage.Kind, native, exemplars bool) []string {
	if l := kind.Family().Local; l != nil && l.SampleTypes != nil {
		return l.SampleTypes(native, exemplars)
	}
	return nil
}
