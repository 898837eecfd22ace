package config

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"time"
)

// MarshalJSON writes the config as encoding/json does, in field order, but every duration as
// the config file writes it ("5m0s", not 300000000000 nanoseconds): results.json carries the
// config, and a reader should not have to know Go's duration unit (issue 35).
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config // without this method
	var b bytes.Buffer
	err := encodeJSON(&b, reflect.ValueOf(plain(c)))
	return b.Bytes(), err
}

var (
	durationType  = reflect.TypeFor[time.Duration]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textType      = reflect.TypeFor[encoding.TextMarshaler]()
)

// encodeJSON writes v to b: durations as strings, everything else as encoding/json would.
func encodeJSON(b *bytes.Buffer, v reflect.Value) error {
	t := v.Type()
	switch {
	case t == durationType:
		return writeJSON(b, time.Duration(v.Int()).String())
	case (t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface) && !t.Implements(marshalerType) && !t.Implements(textType):
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		return encodeJSON(b, v.Elem())
	case t.Kind() != reflect.Struct && t.Kind() != reflect.Map && t.Kind() != reflect.Slice || t.Implements(marshalerType) || t.Implements(textType):
		return writeJSON(b, v.Interface())
	case t.Kind() == reflect.Map:
		return encodeMap(b, v)
	case t.Kind() == reflect.Slice:
		return encodeSlice(b, v)
	}
	return encodeStruct(b, v)
}

func writeJSON(b *bytes.Buffer, v any) error {
	out, err := json.Marshal(v)
	b.Write(out)
	return err
}

func encodeStruct(b *bytes.Buffer, v reflect.Value) error {
	b.WriteByte('{')
	first := true
	err := encodeFields(b, v, &first)
	b.WriteByte('}')
	return err
}

// encodeFields writes v's fields, those of an untagged embedded struct in its place (as
// encoding/json inlines them); first is false once a field was written.
func encodeFields(b *bytes.Buffer, v reflect.Value, first *bool) error {
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || omitted(fv, strings.Split(opts, ",")) {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			if err := encodeFields(b, fv, first); err != nil {
				return err
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		if !*first {
			b.WriteByte(',')
		}
		*first = false
		if err := writeJSON(b, name); err != nil {
			return err
		}
		b.WriteByte(':')
		if err := encodeJSON(b, fv); err != nil {
			return err
		}
	}
	return nil
}

// omitted reports whether a field with these json options is left out, as encoding/json
// leaves it.
func omitted(v reflect.Value, opts []string) bool {
	switch {
	case slices.Contains(opts, "omitzero") && v.IsZero():
		return true
	case !slices.Contains(opts, "omitempty"):
		return false
	}
	switch v.Kind() {
	case reflect.Map, reflect.Slice, reflect.String, reflect.Array:
		return v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return v.IsZero()
	}
	return false
}

func encodeMap(b *bytes.Buffer, v reflect.Value) error {
	if v.IsNil() {
		b.WriteString("null")
		return nil
	}
	keys := v.MapKeys()
	slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(x.String(), y.String()) })
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeJSON(b, k.String()); err != nil {
			return err
		}
		b.WriteByte(':')
		if err := encodeJSON(b, v.MapIndex(k)); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

func encodeSlice(b *bytes.Buffer, v reflect.Value) error {
	if v.IsNil() {
		b.WriteString("null")
		return nil
	}
	b.WriteByte('[')
	for i := range v.Len() {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := encodeJSON(b, v.Index(i)); err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}
