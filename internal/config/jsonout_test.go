package config

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// The config in results.json is encoding/json's, but with every duration as the config file
// writes it (issue 35: duration read 300000000000): the same keys in the same places, and a
// value differs only where it is a duration, as its String.
func TestMarshalJSONWritesDurationsAsText(t *testing.T) {
	c := Default()
	c.Duration = 5 * time.Minute
	c.RemoteStorages = map[string]Storage{"vm": {WriteURL: "http://127.0.0.1:8428/api/v1/write"}}
	type plain Config
	std, err := json.Marshal(plain(c))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var a, b map[string]any
	if err := json.Unmarshal(std, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ours, &b); err != nil {
		t.Fatalf("%v:\n%s", err, ours)
	}
	if b["duration"] != "5m0s" || b["scrapeInterval"] != "10s" {
		t.Errorf("duration %v, scrapeInterval %v: want 5m0s and 10s", b["duration"], b["scrapeInterval"])
	}
	durations := 0
	var walk func(path string, x, y any)
	walk = func(path string, x, y any) {
		switch xv := x.(type) {
		case map[string]any:
			yv, _ := y.(map[string]any)
			if len(xv) != len(yv) {
				t.Errorf("%s: keys %v, want %v", path, reflect.ValueOf(yv).MapKeys(), reflect.ValueOf(xv).MapKeys())
			}
			for k := range xv {
				walk(path+"."+k, xv[k], yv[k])
			}
		case float64:
			if s, ok := y.(string); ok {
				d, err := time.ParseDuration(s)
				if err != nil || float64(d) != xv {
					t.Errorf("%s = %q, want the duration %v", path, s, time.Duration(xv))
				}
				durations++
				return
			}
			if y != x {
				t.Errorf("%s = %v, want %v", path, y, x)
			}
		default:
			if !reflect.DeepEqual(x, y) {
				t.Errorf("%s = %v, want %v", path, y, x)
			}
		}
	}
	walk("config", a, b)
	if durations < 5 {
		t.Errorf("%d durations written as text, want every one (more than 5)", durations)
	}
}
