package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkSchema checks a real run's results.json against docs/results.schema.json, the schema
// generated from internal/results' types: a field the schema does not have, one it requires
// that is missing, or a value of another type fails the test.
func checkSchema(t *testing.T, path string) {
	t.Helper()
	var schema, doc map[string]any
	for p, v := range map[string]*map[string]any{"../docs/results.schema.json": &schema, path: &doc} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	for _, p := range validate(schema, schema, doc, "") {
		t.Errorf("%s against docs/results.schema.json: %s", path, p)
	}
}

// TestSchemaCheckFails: the check finds an unknown field, a missing one and a wrong type, so
// a results.json out of step with the schema cannot pass.
func TestSchemaCheckFails(t *testing.T) {
	parallel(t)
	b, err := os.ReadFile("../docs/results.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{
		"schemaVersion": 1, "startTime": "2026-11-25T04:39:18Z", "endTime": "not a time",
		"workload": map[string]any{}, "storages": []any{map[string]any{"name": 7, "extra": true}},
	}
	if err := json.Unmarshal(mustJSON(t, doc), &doc); err != nil {
		t.Fatal(err)
	}
	got := validate(schema, schema, doc, "")
	for _, want := range []string{
		`config: required, missing`,
		`endTime: "not a time" is not an RFC 3339 date-time`,
		`workload.targets: required, missing`,
		`storages[0].name: integer, want string`,
		`storages[0].extra: not in the schema`,
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no problem %q among %q", want, got)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// validate checks v against s, the part of the JSON Schema the generator writes: $ref, anyOf,
// type (one or a list), properties, required, additionalProperties, items, format date-time.
func validate(root, s map[string]any, v any, at string) []string {
	if ref, ok := s["$ref"].(string); ok {
		def, _ := root["$defs"].(map[string]any)[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		return validate(root, def, v, at)
	}
	if alts, ok := s["anyOf"].([]any); ok {
		var first []string
		for _, alt := range alts {
			p := validate(root, alt.(map[string]any), v, at)
			if len(p) == 0 {
				return nil
			}
			if first == nil {
				first = p
			}
		}
		return first
	}
	if typ, ok := s["type"]; ok && !typeIs(typ, v) {
		return []string{fmt.Sprintf("%s: %s, want %v", at, jsonType(v), typ)}
	}
	switch v := v.(type) {
	case string:
		if s["format"] == "date-time" {
			if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
				return []string{fmt.Sprintf("%s: %q is not an RFC 3339 date-time", at, v)}
			}
		}
	case []any:
		items, _ := s["items"].(map[string]any)
		var ps []string
		for i, e := range v {
			ps = append(ps, validate(root, items, e, fmt.Sprintf("%s[%d]", at, i))...)
		}
		return ps
	case map[string]any:
		return validateObject(root, s, v, at)
	}
	return nil
}

func validateObject(root, s map[string]any, v map[string]any, at string) []string {
	var ps []string
	dot := func(k string) string { return strings.TrimPrefix(at+"."+k, ".") }
	for _, r := range asSlice(s["required"]) {
		if _, ok := v[r.(string)]; !ok {
			ps = append(ps, dot(r.(string))+": required, missing")
		}
	}
	props, _ := s["properties"].(map[string]any)
	for k, e := range v {
		if p, ok := props[k].(map[string]any); ok {
			ps = append(ps, validate(root, p, e, dot(k))...)
			continue
		}
		switch extra := s["additionalProperties"].(type) {
		case map[string]any:
			ps = append(ps, validate(root, extra, e, dot(k))...)
		case bool:
			if !extra {
				ps = append(ps, dot(k)+": not in the schema")
			}
		}
	}
	return ps
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// typeIs reports whether v is of the schema type typ (a name or a list of names).
func typeIs(typ, v any) bool {
	if name, ok := typ.(string); ok {
		typ = []any{name}
	}
	for _, name := range asSlice(typ) {
		t := jsonType(v)
		if name == t || name == "number" && t == "integer" {
			return true
		}
	}
	return false
}

// jsonType is the JSON Schema type of a decoded JSON value.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if v == float64(int64(v)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
