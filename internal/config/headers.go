package config

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Headers are extra HTTP headers sent with every request to a storage. In YAML they are a map
// (`{X-Scope-OrgID: tenant1}`) or, as in the prometheus-benchmark chart, one string of
// `name:value` pairs joined by `^^` (`'X-Scope-OrgID:tenant1^^X-Team:bench'`); "" is none.
//
// Only this leaf type decodes itself: a custom unmarshaler on Config or Storage would decode
// their fields with a decoder that no longer refuses unknown keys (yaml v3 drops KnownFields).
type Headers map[string]string

// UnmarshalYAML takes the map form or the chart's string form. Its errors never quote a
// header value: values carry API keys and tenant secrets.
func (h *Headers) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		m, err := parseHeaderList(n.Value)
		if err != nil {
			return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
		}
		*h = m
		return nil
	case yaml.MappingNode:
		var m map[string]string
		if err := n.Decode(&m); err != nil {
			return err // a *yaml.TypeError with lines: decoding of the rest goes on
		}
		*h = m
		return nil
	default:
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: want a map of name: value or a string 'name1:value1^^name2:value2'", n.Line)}}
	}
}

// parseHeaderList parses the chart's 'name1:value1^^name2:value2' (as vmagent's
// -remoteWrite.headers): each pair splits at its first colon, spaces around both are trimmed.
func parseHeaderList(s string) (Headers, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	h := Headers{}
	for i, pair := range strings.Split(s, "^^") {
		if strings.TrimSpace(pair) == "" {
			continue // a trailing or doubled ^^
		}
		name, value, ok := strings.Cut(pair, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			// The pair is not quoted: without its colon it may be a bare token.
			return nil, fmt.Errorf("header %d of the '^^' list is not name:value", i+1)
		}
		h[name] = strings.TrimSpace(value)
	}
	return h, nil
}

// protocolHeaders are set by the remote-write client for the protocol (spec 1.0, "Protocol"):
// a user's value would replace them and break the request.
var protocolHeaders = []string{"Content-Encoding", "Content-Type", "User-Agent", "X-Prometheus-Remote-Write-Version"}

// validate checks names and values as net/http would at request time, without quoting values.
func (h Headers) validate(key string, write bool) []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(h)) {
		switch {
		case !validHeaderName(name):
			// Not quoted: a malformed name may be a pasted secret.
			errs = append(errs, fmt.Errorf("%s: a header name is not a token (letters, digits and !#$%%&'*+-.^_`|~ only)", key))
		case write && isProtocolHeader(name):
			errs = append(errs, fmt.Errorf("%s: %s is set by the remote_write protocol and cannot be overridden", key, http.CanonicalHeaderKey(name)))
		case strings.ContainsAny(h[name], "\r\n\x00"):
			errs = append(errs, fmt.Errorf("%s: the value of %s has a line break or NUL", key, name))
		}
	}
	return errs
}

func isProtocolHeader(name string) bool {
	return slices.ContainsFunc(protocolHeaders, func(p string) bool { return strings.EqualFold(name, p) })
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)
		if !ok {
			return false
		}
	}
	return true
}
