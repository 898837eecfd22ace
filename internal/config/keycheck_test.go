package config

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestNearestKey: a key differing in case, or by up to two edits (one for short keys), is
// taken for the valid key it is closest to; anything further is no suggestion.
func TestNearestKey(t *testing.T) {
	valid := []string{"interval", "readURL", "targetsCount", "timeout", "tls", "writeURL", "writeURLReplicas"}
	for key, want := range map[string]string{
		"targetCount":      "targetsCount", // a character dropped
		"writeUrl":         "writeURL",     // case only
		"WriteURLReplicas": "writeURLReplicas",
		"intervall":        "interval",
		"tsl":              "tls", // two neighbours swapped: one edit
		"readURLs":         "readURL",
		"url":              "", // three edits from tls
		"foo":              "",
		"tl":               "tls",
		"timeoutt":         "timeout",
		"interva1s":        "interval", // two edits
		"writeURLReplica":  "writeURLReplicas",
		"tpsl":             "", // a key of 4 characters allows one edit: tls is two away
	} {
		if got := nearestKey(key, valid); got != want {
			t.Errorf("nearestKey(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestCheckKeysAgreesWithDecoder: checkKeys finds a problem in a document exactly when
// yaml's strict decoder refuses it, so the problems it names are the decoder's, in the
// file's words, and it refuses nothing the decoder takes.
func TestCheckKeysAgreesWithDecoder(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata configs: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			checked, ok, decodeErr := checkAndDecode(b)
			if !ok {
				t.Skip("not YAML")
			}
			if (len(checked) > 0) != (decodeErr != nil) {
				t.Errorf("checkKeys: %v\ndecoder: %v", errors.Join(checked...), decodeErr)
			}
		})
	}
}

// checkAndDecode returns checkKeys' problems in b and the strict decoder's error; ok is
// false when b is not YAML.
func checkAndDecode(b []byte) (checked []error, ok bool, decodeErr error) {
	b = zeroDurations(b)
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil {
		return nil, false, nil
	}
	checked, _ = checkKeys(&doc)
	c := Default()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	decodeErr = dec.Decode(&c)
	if errors.Is(decodeErr, io.EOF) {
		decodeErr = nil
	}
	return checked, true, decodeErr
}
