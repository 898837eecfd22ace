package config

import (
	"bytes"
	"cmp"
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

// zeroDurations rewrites a plain 0 given to a duration key, at the top level or nested
// (`freshness: {interval: 0}`, `rangeQueries: [{interval: 0}]`), as 0s: yaml v3 decodes a
// time.Duration only from a string, and `duration: 0` (endless, as the prometheus-benchmark
// chart runs) must load, and so must every other duration the same way (issue 31). The
// rewrite is in place, at the value's line and column (from the last so that two on one line
// keep their columns), so every other error still names its line.
func zeroDurations(b []byte) []byte {
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
		return b
	}
	var at []yaml.Node // the plain zeros' positions
	zeroDurationsIn(doc.Content[0], reflect.TypeFor[Config](), &at)
	slices.SortFunc(at, func(a, b yaml.Node) int { // last first
		return cmp.Or(cmp.Compare(b.Line, a.Line), cmp.Compare(b.Column, a.Column))
	})
	lines := bytes.SplitAfter(b, []byte("\n"))
	for _, v := range at {
		if v.Line > len(lines) {
			continue
		}
		l, col := lines[v.Line-1], v.Column-1
		if col < len(l) && l[col] == '0' {
			lines[v.Line-1] = slices.Concat(l[:col+1], []byte("s"), l[col+1:])
		}
	}
	return bytes.Join(lines, nil)
}

// zeroDurationsIn adds to at every plain 0 under n that decodes into a time.Duration of t:
// n's keys are matched with t's yaml tags, into structs (inline ones included), maps and
// slices.
func zeroDurationsIn(n *yaml.Node, t reflect.Type, at *[]yaml.Node) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[time.Duration]():
		if n.Kind == yaml.ScalarNode && n.Tag == "!!int" && n.Value == "0" {
			*at = append(*at, yaml.Node{Line: n.Line, Column: n.Column})
		}
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if ft, ok := fields[n.Content[i].Value]; ok {
				zeroDurationsIn(n.Content[i+1], ft, at)
			}
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			zeroDurationsIn(n.Content[i], t.Elem(), at)
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for _, c := range n.Content {
			zeroDurationsIn(c, t.Elem(), at)
		}
	}
}

// yamlFields are the types of t's fields by YAML key, inline structs' included.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case f.Anonymous && f.Type.Kind() == reflect.Struct && strings.Contains(opts, "inline"):
			maps.Copy(fields, yamlFields(f.Type))
		case name != "" && name != "-" && f.IsExported():
			fields[name] = f.Type
		}
	}
	return fields
}
