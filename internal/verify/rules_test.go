package verify

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/storage"
)

// TestRulesAskedUnderTheStoragesNames: an OTLP storage that keeps job and instance as
// service_name and service_instance_id is asked each rule under those names, and its answer
// comes back under the workload's names, so that it compares with the other storages'.
func TestRulesAskedUnderTheStoragesNames(t *testing.T) {
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.FormValue("query")
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"matrix","result":[`+
			`{"metric":{"service_name":"node","service_instance_id":"h:9100","device":"sda"},"values":[[10,"1"]]}]}}`)
	}))
	defer srv.Close()
	client, err := storage.NewClient("otlp", config.Storage{}, storage.Read, 1)
	if err != nil {
		t.Fatal(err)
	}
	tgt := Target{Name: "otlp", Protocol: config.ProtocolOTLP, OTLPLabels: config.OTLPLabelsUnderscore}
	names := otlpRenames(tgt)
	rules := []query.NamedExpr{{Name: "r", Expr: `sum by (job, instance, device) (x{job="node"})`}}
	answers := runRulesAs(t.Context(), &reader{api: query.NewAPI(client, srv.URL+"/")}, rules, []ruleSpan{{from: 0, end: 10_000, step: 1000}}, names)
	if want := `sum by (service_name, service_instance_id, device) (x{service_name="node"})`; asked != want {
		t.Errorf("asked %s, want %s", asked, want)
	}
	if len(answers) != 1 || answers[0].err != nil {
		t.Fatalf("answers %+v", answers)
	}
	want := []label{{Name: "device", Value: "sda"}, {Name: "instance", Value: "h:9100"}, {Name: "job", Value: "node"}}
	if diff := cmp.Diff(want, answers[0].res.Series[0].Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if otlpRenames(Target{Protocol: config.ProtocolOTLP, OTLPLabels: config.OTLPLabelsPrometheus}) != nil ||
		otlpRenames(Target{Protocol: config.ProtocolRW1, OTLPLabels: config.OTLPLabelsUnderscore}) != nil {
		t.Error("a storage that keeps job and instance, or is not written in OTLP: want no renames")
	}
}
