package config

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// FuzzParse: any document either parses to a config that validates again, or fails with an
// error; it never panics, and checkKeys refuses nothing the decoder takes. Seeds are every testdata config.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		f.Fatalf("no testdata configs: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("remoteStorages: {vm: {writeURL: 'http://127.0.0.1:8428/api/v1/write', headers: 'a:b^^c:d'}}"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if checked, _, decodeErr := checkAndDecode(doc); len(checked) > 0 && decodeErr == nil {
			t.Fatalf("checkKeys refuses what the decoder takes: %v", errors.Join(checked...))
		}
		c, err := Parse(doc)
		if err != nil {
			if c != nil {
				t.Fatalf("error %v with a config", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("parsed, but does not validate again: %v", err)
		}
		_ = c.Warnings()
		_ = c.Redacted()
	})
}

// FuzzSecretsNeverEchoed puts one secret into every place a config holds one (tokens, a
// password, header values in both forms): whatever else the document gets wrong, no error
// quotes it.
func FuzzSecretsNeverEchoed(f *testing.F) {
	const doc = `targetsCount: %s
remoteStorages:
  vm:
    writeURL: http://127.0.0.1:8428/api/v1/write
    readURL: http://127.0.0.1:8428/
    writeBearerToken: "%[2]s"
    readBearerToken: '%[2]s'
    headers: {X-Key: %[2]s}
  prom:
    writeURL: http://127.0.0.1:9090/api/v1/write
    basicAuth: {username: u, password: %[2]s}
    headers: 'X-Scope-OrgID:%[2]s^^X-Other:x'
`
	f.Add("1", "hunter2-secret")
	f.Add("[", "hunter2\r\nsecret")
	f.Add("1", "\"a:b\"")
	f.Add("x", "}{::^^")
	f.Fuzz(func(t *testing.T, targets, secret string) {
		if len(strings.TrimSpace(secret)) < 6 || strings.ContainsAny(secret, "\n\r\"'") {
			return // too short to tell from the document's own words; a quote ends the value
		}
		text := strings.ReplaceAll(strings.ReplaceAll(doc, "%s", targets), "%[2]s", secret)
		if strings.Count(text, strings.TrimSpace(secret)) != 6 {
			return // the secret is also part of the rest of the document
		}
		_, err := Parse([]byte(text))
		if err != nil && strings.Contains(err.Error(), strings.TrimSpace(secret)) {
			t.Fatalf("error quotes the secret %q:\n%v", secret, err)
		}
	})
}

var headerListErr = regexp.MustCompile(`^header \d+ of the '\^\^' list is not name:value$`)

// FuzzParseHeaderList: the chart's 'name:value^^name:value' form gives trimmed, non-empty names
// without a colon, or an error that quotes nothing of the list (it may hold secrets); the
// checks of the result never quote a value either.
func FuzzParseHeaderList(f *testing.F) {
	for _, s := range []string{
		"X-Scope-OrgID:tenant1^^X-Team:bench", "", "  ", "a:b^^", "^^a:b^^^^c:d", "novalue", ":x",
		"Authorization: Bearer abc:def ", "Content-Type:text/plain", "X-A:line\r\nbreak", "bad name:v",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := parseHeaderList(s)
		if err != nil {
			if !headerListErr.MatchString(err.Error()) || h != nil {
				t.Fatalf("parseHeaderList(%q): %v, %v: want only the pair's number in the error", s, h, err)
			}
			return
		}
		for name, value := range h {
			if name == "" || name != strings.TrimSpace(name) || strings.Contains(name, ":") || value != strings.TrimSpace(value) {
				t.Fatalf("parseHeaderList(%q) gave %q: %q", s, name, value)
			}
		}
		for _, e := range h.validate("remoteStorages.x.headers", true) {
			for name, value := range h {
				if len(value) >= 6 && !strings.Contains("remoteStorages.x.headers "+name, value) && strings.Contains(e.Error(), value) {
					t.Fatalf("validate quotes the value of %s: %v", name, e)
				}
			}
		}
	})
}
