package query

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A query answer's native histograms come with its series: a vector's "histogram", a
// matrix's "histograms" beside its float "values".
func TestDecodeQueryHistograms(t *testing.T) {
	body := `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"m"},
		"values":[[1700000000,"1"]],
		"histograms":[[1700000060,{"count":"3","sum":"4.5","buckets":[[0,"1","2","1"],[3,"-0.001","0.001","2"]]}]]}]}}`
	res, err := decodeQuery(200, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []Series{{
		Metric: map[string]string{"__name__": "m"},
		Points: []Point{{T: 1_700_000_000_000, V: 1}},
		Histograms: []HistogramPoint{{T: 1_700_000_060_000, Count: 3, Sum: 4.5, Buckets: []Bucket{
			{Boundaries: 0, Lower: 1, Upper: 2, Count: 1}, {Boundaries: 3, Lower: -0.001, Upper: 0.001, Count: 2},
		}}},
	}}
	if diff := cmp.Diff(want, res.Series); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
	vector := `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"histogram":[1700000000,{"count":"x","sum":"0"}]}]}}`
	if _, err := decodeQuery(200, []byte(vector)); err == nil {
		t.Error("a histogram with count \"x\": no error")
	}
}
