package config

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// LongRun holds the keys of runs of hours and days (issue 19).
type LongRun struct {
	// CheckpointInterval is how often results.json is rewritten, marked partial, while the
	// run goes on; a run started again with the same config, startTime and -out resumes
	// from it. 0 writes results only at the end.
	CheckpointInterval time.Duration `yaml:"checkpointInterval" json:"checkpointInterval"`
}

func (l LongRun) problems() []error {
	if l.CheckpointInterval < 0 {
		return []error{fmt.Errorf("checkpointInterval: must be >= 0 (0 writes results.json only at the end)")}
	}
	if l.CheckpointInterval > 0 && l.CheckpointInterval < time.Second {
		return []error{fmt.Errorf("checkpointInterval: %s is too often to rewrite results.json: use at least 1s (default 5m), or 0 for none", l.CheckpointInterval)}
	}
	return nil
}

// zeroDurations rewrites a plain 0 given to a top-level duration key as 0s: yaml v3 decodes a
// time.Duration only from a string, and `duration: 0` (endless, as the prometheus-benchmark
// chart runs) must load. The rewrite is in place, at the value's line and column, so every
// other error still names its line.
func zeroDurations(b []byte) []byte {
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return b
	}
	keys := durationKeys(reflect.TypeFor[Config]())
	lines := bytes.SplitAfter(b, []byte("\n"))
	m := doc.Content[0].Content
	for i := 0; i+1 < len(m); i += 2 {
		k, v := m[i], m[i+1]
		if !keys[k.Value] || v.Kind != yaml.ScalarNode || v.Tag != "!!int" || v.Value != "0" || v.Line > len(lines) {
			continue
		}
		l, col := lines[v.Line-1], v.Column-1
		if col < len(l) && l[col] == '0' {
			lines[v.Line-1] = slices.Concat(l[:col+1], []byte("s"), l[col+1:])
		}
	}
	return bytes.Join(lines, nil)
}

// durationKeys are the YAML keys of t's time.Duration fields, inline structs' included.
func durationKeys(t reflect.Type) map[string]bool {
	keys := map[string]bool{}
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case f.Type == reflect.TypeFor[time.Duration]() && name != "":
			keys[name] = true
		case f.Anonymous && f.Type.Kind() == reflect.Struct && strings.Contains(opts, "inline"):
			maps.Copy(keys, durationKeys(f.Type))
		}
	}
	return keys
}
