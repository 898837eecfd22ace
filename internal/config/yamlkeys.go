package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

var (
	lineRef = regexp.MustCompile(`line (\d+): `)
	// quotedValue is the value yaml v3 quotes in a type error ("cannot unmarshal !!str
	// `hunter2` into …"); it is matched within one error, so (?s) and greed are safe.
	quotedValue = regexp.MustCompile("(?s)(cannot unmarshal \\S+) `.*` into ")
)

// sanitize rewrites a YAML decoding error for the user: each "line N:" gets its key path
// ("line 3 (remoteStorages.vm.writeURL): cannot unmarshal ...") and no value is quoted, for
// the value may be a password, a token or a header. A type error gives one error per line.
func sanitize(doc []byte, err error) error {
	keys := lineKeys(doc)
	fix := func(msg string) error {
		msg = quotedValue.ReplaceAllString(msg, "$1 into ")
		return errors.New(lineRef.ReplaceAllStringFunc(msg, func(m string) string {
			n, _ := strconv.Atoi(lineRef.FindStringSubmatch(m)[1])
			if k, ok := keys[n]; ok {
				return fmt.Sprintf("line %d (%s): ", n, k)
			}
			return m
		}))
	}
	te, ok := errors.AsType[*yaml.TypeError](err)
	if !ok {
		return fix(err.Error())
	}
	errs := make([]error, len(te.Errors))
	for i, e := range te.Errors {
		errs[i] = fix(e)
	}
	return errors.Join(errs...)
}

// underAny reports whether a problem ("key.path: message") is about one of the keys or
// a key under one of them.
func underAny(problem string, keys []string) bool {
	for _, k := range keys {
		if strings.HasPrefix(problem, k+": ") || strings.HasPrefix(problem, k+".") {
			return true
		}
	}
	return false
}

// lineKeys maps the line of every mapping key (and of its scalar value) to its key path;
// nil if the document does not parse.
func lineKeys(doc []byte) map[int]string {
	var root yaml.Node
	if yaml.Unmarshal(doc, &root) != nil {
		return nil
	}
	keys := map[int]string{}
	collectKeys(&root, "", keys)
	return keys
}

// collectKeys maps the line of every mapping key (and of its scalar value) to its key path.
func collectKeys(n *yaml.Node, path string, keys map[int]string) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			collectKeys(c, path, keys)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if _, seen := keys[k.Line]; !seen {
				keys[k.Line] = p
			}
			// A block mapping or sequence starts on the line of its first key or item: that
			// line belongs to the child, not to p.
			if _, seen := keys[v.Line]; !seen && v.Kind == yaml.ScalarNode {
				keys[v.Line] = p
			}
			collectKeys(v, p, keys)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if _, seen := keys[c.Line]; !seen && c.Kind != yaml.MappingNode {
				keys[c.Line] = p
			}
			collectKeys(c, p, keys)
		}
	}
}
