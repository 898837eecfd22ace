package query

import (
	"math"
	"testing"
)

// FuzzDecodeQuery feeds the query decoder any status and body: it must not panic, must
// classify every failure, and must give a known result type on success.
func FuzzDecodeQuery(f *testing.F) {
	for _, seed := range []struct {
		status int
		body   string
	}{
		{200, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"1"},"value":[1700000000.5,"NaN"]}]}}`},
		{200, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1.5,"1"],[-2,"-Inf"]]}]},"warnings":["w"]}`},
		{200, `{"status":"success","data":{"resultType":"scalar","result":[1e3,"2"]}}`},
		{200, `{"status":"success","data":{"resultType":"string","result":[1,"s"]}}`},
		{400, `{"status":"error","errorType":"bad_data","error":"parse error"}`},
		{422, `{"status":"error","errorType":"422","error":"x"}`},
		{404, "404 page not found"},
		{200, "<html>"},
		{200, `{"status":"success","data":{"resultType":"vector","result":[{"value":[1.99999,"1"]}]}}`},
	} {
		f.Add(seed.status, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		res, err := decodeQuery(status, body)
		if err != nil {
			if k := ErrorKind(err); k == "" || k == ErrNetwork || k == ErrTimeout || k == ErrCanceled {
				t.Fatalf("decode error %v classified %q", err, k)
			}
			return
		}
		if status < 200 || status > 299 {
			t.Fatalf("status %d decoded as success", status)
		}
		switch res.Type {
		case "vector", "matrix", "scalar", "string":
		default:
			t.Fatalf("result type %q", res.Type)
		}
		for _, s := range res.Series {
			for _, p := range s.Points {
				if p.T == math.MinInt64 {
					t.Fatalf("timestamp %d", p.T)
				}
			}
		}
	})
}

// FuzzParseMillis: what FormatMillis writes parses back to the same milliseconds.
func FuzzParseMillis(f *testing.F) {
	for _, s := range []string{"1700000000.123", "-1.5", "0", "1.7e9", "12.34567"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := ParseMillis(s)
		if err != nil {
			return
		}
		if back, err := ParseMillis(FormatMillis(ms)); err != nil || back != ms {
			t.Fatalf("%q → %d → %q → %d, %v", s, ms, FormatMillis(ms), back, err)
		}
	})
}

// FuzzDecodeExport feeds VictoriaMetrics' export decoder any body: no panic, every failure a
// bad_body, and as many points as timestamps.
func FuzzDecodeExport(f *testing.F) {
	f.Add([]byte(`{"metric":{"__name__":"up"},"values":[1,NaN,null,+Inf],"timestamps":[1,2,3,4]}` + "\n"))
	f.Add([]byte(`{"metric":{},"values":[],"timestamps":[]}{"metric":{},"values":[-Inf],"timestamps":[5]}`))
	f.Add([]byte(`{"values":[1],"timestamps":[]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		res, err := decodeExport(200, body)
		if err != nil {
			if k := ErrorKind(err); k != ErrBadBody {
				t.Fatalf("error %v classified %q", err, k)
			}
			return
		}
		if res.Type != "matrix" {
			t.Fatalf("type %q", res.Type)
		}
	})
}
