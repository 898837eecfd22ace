package config

import (
	"encoding"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// keyCheck walks a YAML document beside the type it decodes into and says, in the words of
// the file, what the decoder refuses: a key the type has no place for (with the nearest valid
// key), a key set twice, and a value that does not decode (with the type wanted in plain
// words). Each problem names its line and key path. It never quotes a value: a value that
// does not decode may be a secret written in the wrong place.
type keyCheck struct {
	errs []error
	// undecoded are the key paths whose values did not decode: they keep their defaults, so
	// validating them would only repeat the problem.
	undecoded []string
	seen      map[*yaml.Node]bool // anchored nodes already checked: each one once, however often aliased
}

// checkKeys checks a parsed document against Config.
func checkKeys(doc *yaml.Node) (errs []error, undecoded []string) {
	k := &keyCheck{seen: map[*yaml.Node]bool{}}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		k.value(doc.Content[0], reflect.TypeFor[Config](), "")
	}
	return k.errs, k.undecoded
}

// value checks n as a value of type t at path.
func (k *keyCheck) value(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Anchor != "" {
		if k.seen[n] {
			return
		}
		k.seen[n] = true
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	text := reflect.PointerTo(t).Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
	switch {
	case t.Kind() == reflect.Interface:
		// A key of the chart that tsbench ignores: any value goes.
	case n.Kind == yaml.MappingNode && (t.Kind() == reflect.Struct && !text || t.Kind() == reflect.Map):
		k.mapping(n, t, path)
	case n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice:
		for i, c := range n.Content {
			k.value(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	default:
		k.leaf(n, t, path, text)
	}
}

// mapping checks the keys of n, a struct's (only its fields' keys are valid) or a map's.
func (k *keyCheck) mapping(n *yaml.Node, t reflect.Type, path string) {
	var fields map[string]reflect.Type
	if t.Kind() == reflect.Struct {
		fields = yamlFields(t)
	}
	first := map[string]int{} // line of each key's first setting
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, v := n.Content[i], n.Content[i+1]
		if key.Kind == yaml.ScalarNode && key.Value == "<<" && (key.Tag == "!!merge" || key.Tag == "") {
			k.merge(v, t, path)
			continue
		}
		p := key.Value
		if path != "" {
			p = path + "." + key.Value
		}
		if line, ok := first[key.Value]; ok {
			k.errs = append(k.errs, fmt.Errorf("line %d: %s: set twice (first on line %d)", key.Line, p, line))
			continue
		}
		first[key.Value] = key.Line
		if key.Tag == "!!null" {
			continue // the decoder skips a key left empty
		}
		if fields == nil {
			k.value(v, t.Elem(), p)
		} else if ft, ok := fields[key.Value]; ok {
			k.value(v, ft, p)
		} else {
			k.errs = append(k.errs, unknownKey(key.Line, p, key.Value, slices.Sorted(maps.Keys(fields))))
		}
	}
}

// merge checks the mappings a merge key (<<: *defaults) brings in, as keys of path.
func (k *keyCheck) merge(v *yaml.Node, t reflect.Type, path string) {
	if v.Kind == yaml.SequenceNode {
		for _, c := range v.Content {
			k.value(c, t, path)
		}
		return
	}
	k.value(v, t, path)
}

// unknownKey says that key (at path) has no place there, and which valid key it is likely
// meant to be.
func unknownKey(line int, path, key string, valid []string) error {
	if near := nearestKey(key, valid); near != "" {
		return fmt.Errorf("line %d: unknown key %s: did you mean %s?", line, path, near)
	}
	if len(valid) <= 8 {
		return fmt.Errorf("line %d: unknown key %s (the keys here: %s)", line, path, strings.Join(valid, ", "))
	}
	return fmt.Errorf("line %d: unknown key %s", line, path)
}

// leaf decodes n into a new value of t, as the decoder would, and says why it does not.
// text says t decodes itself from a scalar (encoding.TextUnmarshaler).
func (k *keyCheck) leaf(n *yaml.Node, t reflect.Type, path string, text bool) {
	err := n.Decode(reflect.New(t).Interface())
	if err == nil && (!text || n.Kind == yaml.ScalarNode) {
		return
	}
	var msg string
	own := text && n.Kind == yaml.ScalarNode || reflect.PointerTo(t).Implements(reflect.TypeFor[yaml.Unmarshaler]())
	if err != nil && own {
		msg = ownWords(err) // the type's own decoder says what is wrong with the value
	} else {
		msg = "want " + describe(t) + notThis(n, t)
	}
	if path == "" {
		path = "the config"
	}
	k.errs = append(k.errs, fmt.Errorf("line %d: %s: %s", n.Line, path, msg))
	k.undecoded = append(k.undecoded, path)
}

// ownWords is the message of a type's own decoder (Headers, Shard, ...), without the lines
// yaml adds: the caller names the line and key.
func ownWords(err error) string {
	te, ok := errors.AsType[*yaml.TypeError](err)
	if !ok {
		return err.Error()
	}
	msgs := make([]string, len(te.Errors))
	for i, e := range te.Errors {
		msgs[i] = lineRef.ReplaceAllString(e, "")
	}
	return strings.Join(msgs, "; ")
}

// describe says in plain words what a value of t is written as.
func describe(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[time.Duration]():
		return "a duration such as 30s or 5m"
	case reflect.TypeFor[Shard]():
		return "a shard i/n such as 0/3"
	case reflect.TypeFor[StartTime]():
		return "an RFC 3339 time such as 2026-11-23T12:00:00Z"
	case reflect.TypeFor[[]string]():
		return "a list of strings"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list"
	case reflect.Map:
		return "a mapping of names to values"
	case reflect.Struct:
		if keys := slices.Sorted(maps.Keys(yamlFields(t))); len(keys) <= 8 {
			return "a mapping of " + strings.Join(keys, ", ")
		}
		return "a mapping of keys"
	}
	return t.String()
}

// notThis says what n is instead, where that is not plain from the file: a list or mapping
// where one value goes or the reverse, a number without its unit, a number out of range.
func notThis(n *yaml.Node, t reflect.Type) string {
	switch {
	case n.Kind == yaml.SequenceNode:
		return ", not a list"
	case n.Kind == yaml.MappingNode:
		return ", not a mapping"
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Struct:
		return ", not a single value"
	case n.Tag != "!!int" && n.Tag != "!!float":
		return ""
	case t == reflect.TypeFor[time.Duration]():
		return ", not a number without a unit"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64 && n.Tag == "!!float":
		return ", not a fraction"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Float64:
		return " (this one is out of range)"
	}
	return ""
}

// nearestKey is the valid key that key most likely means: the same but for case, or within
// two edits (a character added, dropped, changed, or two swapped; case ignored), one edit for
// a key of up to 5 characters; "" when none is that close. valid is sorted: ties go to the first.
func nearestKey(key string, valid []string) string {
	limit := 2
	if len(key) <= 5 {
		limit = 1
	}
	best, bestDist := "", limit+1
	for _, v := range valid {
		if d := editDistance(strings.ToLower(key), strings.ToLower(v)); d < bestDist {
			best, bestDist = v, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b: the fewest characters
// added, dropped, changed or swapped with a neighbour that make one the other.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
