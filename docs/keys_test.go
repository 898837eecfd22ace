// Package docs_test keeps the documentation in step with the code: every config key of
// internal/config in configuration.md, every results.json field of internal/results in
// results.md and in results.schema.json, every relative link resolving, every tsbench command
// in a fence parsing, every example config valid, every import of a tsbench package as the
// level table of development.md allows. A failure says what to add where.
package docs_test

import (
	"cmp"
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/results"
)

// How a key table reads: a heading naming a key path in backticks (### `remoteStorages.<name>`)
// sets the prefix of the keys in the first column of the tables below it, until the next
// heading; a heading without one sets none. A first cell documents the keys it lists in
// backticks, separated by commas: `writeBearerToken`, `writeBearerTokenFile`. A key may be a
// path itself (`basicAuth.username`). Maps of objects read as `<name>`, lists of objects as
// `[]`: `remoteStorages.<name>.writeURL`, `storages[].write.ackedSamples`.
const tableRule = "a heading naming the prefix in backticks sets the prefix of the keys in the first column of the tables below it"

// TestConfigKeysDocumented: docs/configuration.md documents exactly the keys of
// internal/config (yaml tags of config.Config), no fewer and no more.
func TestConfigKeysDocumented(t *testing.T) {
	for _, p := range documentedProblems(t, "configuration.md", "internal/config (a yaml tag of config.Config)",
		keyPaths(reflect.TypeFor[config.Config](), "yaml"), "| `%s` | default | effect |") {
		t.Error(p)
	}
}

// TestResultsFieldsDocumented: docs/results.md documents exactly the fields of results.json
// (json tags of results.Run).
func TestResultsFieldsDocumented(t *testing.T) {
	for _, p := range documentedProblems(t, "results.md", "internal/results (a json tag of results.Run)",
		keyPaths(reflect.TypeFor[results.Run](), "json"), "| `%s` | meaning |") {
		t.Error(p)
	}
}

// documentedProblems compares the keys the code has with those page documents, and says for
// each difference what to add or remove, where.
func documentedProblems(t *testing.T, page, source string, code []string, row string) []string {
	t.Helper()
	documented, problems := docKeys(t, page)
	for _, k := range code {
		if _, ok := documented[k]; ok {
			continue
		}
		prefix, key := split(k)
		where := "the table under a heading with no key path in backticks (## Top-level ...)"
		if prefix != "" {
			where = "the table under a heading naming `" + prefix + "` in backticks (add the heading and a table if there is none)"
		}
		problems = append(problems, fmt.Sprintf("docs/%s: %s is not documented (it is in %s): add the row  "+row+"  to %s",
			page, k, source, key, where))
	}
	var stale []string
	for k := range documented {
		if !slices.Contains(code, k) {
			stale = append(stale, k)
		}
	}
	slices.SortFunc(stale, func(a, b string) int { return cmp.Or(documented[a]-documented[b], strings.Compare(a, b)) })
	for _, k := range stale {
		problems = append(problems, fmt.Sprintf("docs/%s:%d documents %s, which %s does not have: remove the row or correct the name (%s)",
			page, documented[k], k, source, tableRule))
	}
	return problems
}

// split cuts a key path into the prefix its heading names and the key in the row: the
// deepest map or list of objects it is under, else the top.
func split(k string) (prefix, key string) {
	i := max(strings.LastIndex(k, ">."), strings.LastIndex(k, "[]."))
	if i < 0 {
		return "", k
	}
	cut := i + 2
	if k[i] == '[' {
		cut = i + 3
	}
	return k[:cut-1], k[cut:]
}

// keyPaths lists the key paths of t under tag (yaml or json), fields in declaration order. A
// struct type met again (a latency, resources under history) is listed once, at its first
// path; elsewhere only the key that holds it.
func keyPaths(t reflect.Type, tag string) []string {
	var paths []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		seen[t] = true
		for f := range t.Fields() {
			name, inline, skip := tagName(f, tag)
			if skip {
				continue
			}
			ft := f.Type
			if inline {
				walk(ft, prefix)
				continue
			}
			path := prefix + name
			paths = append(paths, path)
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			suffix := "."
			switch ft.Kind() {
			case reflect.Map:
				ft, suffix = ft.Elem(), ".<name>."
			case reflect.Slice:
				ft, suffix = ft.Elem(), "[]."
			}
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && !leaf(ft) && !seen[ft] {
				walk(ft, path+suffix)
			}
		}
	}
	walk(t, "")
	return paths
}

// tagName is a field's key under tag; inline for a yaml ",inline" or an untagged embedded
// struct, skip for "-" and unexported fields.
func tagName(f reflect.StructField, tag string) (name string, inline, skip bool) {
	if !f.IsExported() && !f.Anonymous {
		return "", false, true
	}
	v, ok := f.Tag.Lookup(tag)
	name, opts, _ := strings.Cut(v, ",")
	switch {
	case v == "-":
		return "", false, true
	case strings.Contains(opts, "inline"), !ok && f.Anonymous:
		return "", true, false
	case name == "":
		return f.Name, false, false
	}
	return name, false, false
}

// leaf reports whether a struct is written as one value (time.Time, a type that decodes its
// own text), not as keys.
func leaf(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) ||
		p.Implements(reflect.TypeFor[json.Unmarshaler]()) ||
		p.Implements(reflect.TypeFor[yaml.Unmarshaler]())
}

var (
	keyPathRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.<>\[\]]*$`)
	ticked    = regexp.MustCompile("`([^`]*)`")
)

// docKeys reads the key tables of a page: each documented key path and its line, and the
// keys documented twice.
func docKeys(t *testing.T, page string) (map[string]int, []string) {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]int{}
	var problems []string
	prefix, fenced := "", false
	for i, line := range strings.Split(string(b), "\n") {
		n := i + 1
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		switch {
		case fenced:
		case strings.HasPrefix(line, "#"):
			prefix = ""
			if m := ticked.FindStringSubmatch(line); m != nil && keyPathRe.MatchString(m[1]) {
				prefix = m[1] + "."
			}
		case strings.HasPrefix(line, "|"):
			for _, k := range rowKeys(line) {
				if prev, dup := keys[prefix+k]; dup {
					problems = append(problems, fmt.Sprintf("docs/%s:%d documents %s%s again (first on line %d): keep one row", page, n, prefix, k, prev))
				}
				keys[prefix+k] = n
			}
		}
	}
	return keys, problems
}

// rowKeys are the keys a table row's first cell lists: only backticked key paths separated
// by commas; any other cell (a header, a separator, prose) lists none.
func rowKeys(line string) []string {
	cells := strings.Split(line, "|")
	if len(cells) < 3 {
		return nil
	}
	var keys []string
	for part := range strings.SplitSeq(strings.TrimSpace(cells[1]), ",") {
		m := ticked.FindStringSubmatch(strings.TrimSpace(part))
		if m == nil || "`"+m[1]+"`" != strings.TrimSpace(part) || !keyPathRe.MatchString(m[1]) {
			return nil
		}
		keys = append(keys, m[1])
	}
	return keys
}

// TestConfigDefaultsDocumented: where the default column of configuration.md gives a value in
// backticks (`3m`, `fast`, `0/1`), it is the value config.Default() sets. Defaults written in
// words (now, none, embedded node_exporter) are not checked.
func TestConfigDefaultsDocumented(t *testing.T) {
	def := reflect.ValueOf(config.Default())
	rows := defaultRows(t, "configuration.md")
	for _, n := range slices.Sorted(maps.Keys(rows)) {
		row := rows[n]
		v, ok := fieldByTag(def, row.key)
		if !ok {
			continue // TestConfigKeysDocumented names it
		}
		if !matchesDefault(v, row.value) {
			t.Errorf("docs/configuration.md:%d: the default of %s is `%s` there and %v in config.Default(): correct the row (or Default())",
				n, row.key, row.value, v.Interface())
		}
	}
}

// TestMatchesDefault: the comparison reads durations, sizes and numbers as values, so `3m`
// matches 3m0s and `10000000` 1e7, and a different value fails.
func TestMatchesDefault(t *testing.T) {
	for _, tc := range []struct {
		v    any
		doc  string
		want bool
	}{
		{3 * time.Minute, "3m", true},
		{3 * time.Minute, "5m", false},
		{time.Duration(0), "0", true},
		{int64(10_000_000), "10000000", true},
		{4, "5", false},
		{1.0, "1", true},
		{"fast", "fast", true},
		{"fast", "better", false},
		{false, "false", true},
		{config.Shard{Index: 0, Count: 1}, "0/1", true},
		{config.Shard{Index: 0, Count: 1}, "1/2", false},
	} {
		if got := matchesDefault(reflect.ValueOf(tc.v), tc.doc); got != tc.want {
			t.Errorf("matchesDefault(%v, %q) = %v, want %v", tc.v, tc.doc, got, tc.want)
		}
	}
}

type defaultRow struct{ key, value string }

// defaultRows are the rows of tables headed "| key | default | ... |" whose default is one
// value in backticks, by line.
func defaultRows(t *testing.T, page string) map[int]defaultRow {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[int]defaultRow{}
	inTable := false
	for i, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(line, "|")
		switch {
		case len(cells) < 4:
			inTable = false
		case strings.TrimSpace(cells[1]) == "key":
			inTable = strings.TrimSpace(cells[2]) == "default"
		case inTable:
			keys := rowKeys(line)
			m := ticked.FindStringSubmatch(strings.TrimSpace(cells[2]))
			if len(keys) == 1 && m != nil && "`"+m[1]+"`" == strings.TrimSpace(cells[2]) {
				rows[i+1] = defaultRow{keys[0], m[1]}
			}
		}
	}
	return rows
}

// fieldByTag finds a top-level key's field in v, through inline structs.
func fieldByTag(v reflect.Value, key string) (reflect.Value, bool) {
	for i := range v.NumField() {
		name, inline, skip := tagName(v.Type().Field(i), "yaml")
		switch {
		case skip:
		case inline:
			if f, ok := fieldByTag(v.Field(i), key); ok {
				return f, true
			}
		case name == key:
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// matchesDefault reports whether doc, as a user writes it in the config, is the value v.
func matchesDefault(v reflect.Value, doc string) bool {
	if m, ok := reflect.TypeAssert[encoding.TextMarshaler](v); ok {
		b, err := m.MarshalText()
		return err == nil && string(b) == doc
	}
	if d, ok := reflect.TypeAssert[time.Duration](v); ok {
		got, err := time.ParseDuration(doc)
		return err == nil && got == d
	}
	switch v.Kind() {
	case reflect.String:
		return v.String() == doc
	case reflect.Bool:
		b, err := strconv.ParseBool(doc)
		return err == nil && b == v.Bool()
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32, reflect.Float64:
		f, err := strconv.ParseFloat(doc, 64)
		return err == nil && f == v.Convert(reflect.TypeFor[float64]()).Float()
	}
	return false
}
