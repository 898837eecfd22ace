package docs_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/results"
)

const schemaFile = "results.schema.json"

// TestResultsSchemaInStep: results.schema.json is the JSON Schema of results.Run as the code
// has it; UPDATE=1 rewrites it. e2e checks every run's results.json against it.
func TestResultsSchemaInStep(t *testing.T) {
	b, err := json.MarshalIndent(schemaOf(reflect.TypeFor[results.Run]()), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if os.Getenv("UPDATE") != "" {
		if err := os.WriteFile(schemaFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(b)); diff != "" {
		t.Errorf("docs/%s is not the schema of internal/results' types: run `UPDATE=1 go test ./docs/` and commit it (-committed +types):\n%s", schemaFile, diff)
	}
}

// schemaOf is the JSON Schema (draft 2020-12) of what encoding/json writes for t: each struct
// type of internal/results once under $defs, every field it writes listed (no others
// allowed), those without omitempty or omitzero required; a pointer, a slice or a map may
// be null.
func schemaOf(t reflect.Type) map[string]any {
	defs := map[string]any{}
	root := typeSchema(t, defs)
	return map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         "https://github.com/tsbench/tsbench/docs/results.schema.json",
		"title":       "tsbench results.json, schemaVersion " + strconv.Itoa(results.SchemaVersion),
		"description": "Generated from internal/results by docs/schema_test.go (UPDATE=1 go test ./docs/); every field is described in docs/results.md.",
		"$ref":        root["$ref"],
		"$defs":       defs,
	}
}

func typeSchema(t reflect.Type, defs map[string]any) map[string]any {
	switch {
	case t == reflect.TypeFor[time.Time]():
		return map[string]any{"type": "string", "format": "date-time"}
	case t.Kind() == reflect.Pointer:
		return nullable(typeSchema(t.Elem(), defs))
	case t.Kind() == reflect.Interface:
		return map[string]any{}
	case t.Kind() == reflect.Slice:
		return nullable(map[string]any{"type": "array", "items": typeSchema(t.Elem(), defs)})
	case t.Kind() == reflect.Map:
		return nullable(map[string]any{"type": "object", "additionalProperties": typeSchema(t.Elem(), defs)})
	case t.Kind() == reflect.Struct:
		ref := map[string]any{"$ref": "#/$defs/" + t.Name()}
		if _, ok := defs[t.Name()]; ok {
			return ref
		}
		def := map[string]any{"type": "object", "additionalProperties": false}
		defs[t.Name()] = def // before the fields: a type may hold itself
		props := map[string]any{}
		var required []string
		for _, f := range jsonFields(t) {
			name, _, _ := tagName(f, "json")
			props[name] = typeSchema(f.Type, defs)
			if _, opts, _ := strings.Cut(f.Tag.Get("json"), ","); !strings.Contains(opts, "omit") {
				required = append(required, name)
			}
		}
		if t == reflect.TypeFor[results.Verify]() { // counts over nothing checked are null
			for _, name := range results.UncheckedFields() {
				props[name] = nullable(props[name].(map[string]any))
			}
		}
		if t == reflect.TypeFor[results.Conformance]() { // unknown when the read-back failed
			props["droppedSamples"] = nullable(props["droppedSamples"].(map[string]any))
		}
		def["properties"] = props
		if required != nil {
			def["required"] = required
		}
		return ref
	case t.Kind() == reflect.String:
		return map[string]any{"type": "string"}
	case t.Kind() == reflect.Bool:
		return map[string]any{"type": "boolean"}
	case t.Kind() == reflect.Float64 || t.Kind() == reflect.Float32:
		return map[string]any{"type": "number"}
	default: // the integer kinds
		return map[string]any{"type": "integer"}
	}
}

// jsonFields are the fields encoding/json writes of t, those of embedded structs in their place.
func jsonFields(t reflect.Type) []reflect.StructField {
	var fs []reflect.StructField
	for f := range t.Fields() {
		_, inline, skip := tagName(f, "json")
		switch {
		case skip:
		case inline:
			fs = append(fs, jsonFields(f.Type)...)
		default:
			fs = append(fs, f)
		}
	}
	return fs
}

// nullable lets s also be null: a nil pointer, slice or map without omitempty is written so.
func nullable(s map[string]any) map[string]any {
	if ref, ok := s["$ref"]; ok {
		return map[string]any{"anyOf": []any{map[string]any{"$ref": ref}, map[string]any{"type": "null"}}}
	}
	if typ, ok := s["type"].(string); ok {
		s["type"] = []string{typ, "null"}
	}
	return s
}
