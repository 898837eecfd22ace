package query

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/model/rulefmt"
	"go.yaml.in/yaml/v3"
)

// place is a group, or a rule in it, of a rule file, with the lines it spans.
type place struct {
	node        *yaml.Node
	group       string
	rule        int    // 1-based within the group; 0 for the group itself
	name        string // the rule's alert or record name
	first, last int    // lines
}

func (p place) String() string {
	if p.rule == 0 {
		return fmt.Sprintf("group %q", p.group)
	}
	return fmt.Sprintf("group %q, rule %d, %q", p.group, p.rule, p.name)
}

// uniqueErrors drops repeated messages: rulefmt decodes the file twice (strictly into rules, and
// into nodes for positions), and a value both reject comes back twice.
func uniqueErrors(errs []error) []error {
	seen := map[string]bool{}
	var out []error
	for _, err := range errs {
		if !seen[err.Error()] {
			seen[err.Error()] = true
			out = append(out, err)
		}
	}
	return out
}

// locate names the group and rule of a YAML decoding error, which rulefmt passes on as the
// decoder gave it: an unknown key or a wrong type comes with a line only, a bad duration
// (`for: banana`) with neither line nor rule. Any other error is returned as it is.
func locate(b []byte, err error) error {
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil {
		return err // a syntax error, whose message has its line
	}
	places := rulePlaces(&doc)
	if te, ok := errors.AsType[*yaml.TypeError](err); ok {
		errs := make([]error, len(te.Errors))
		for i, msg := range te.Errors {
			errs[i] = errors.New(placeLine(places, msg))
		}
		return errors.Join(errs...)
	}
	// No line: decode each rule, then each group, on its own, and name the first that fails
	// alike. Rules come before their groups in places, and a group fails with its rules.
	for _, p := range places {
		var derr error
		if p.rule == 0 {
			derr = p.node.Decode(&rulefmt.RuleGroup{})
		} else {
			derr = p.node.Decode(&rulefmt.Rule{})
		}
		if derr != nil && derr.Error() == err.Error() {
			return fmt.Errorf("line %d: %s: %w", p.first, p, err)
		}
	}
	return err
}

// placeLine puts the group and rule holding its line into a decoder message "line N: text".
func placeLine(places []place, msg string) string {
	rest, ok := strings.CutPrefix(msg, "line ")
	num, text, ok2 := strings.Cut(rest, ": ")
	line, err := strconv.Atoi(num)
	if !ok || !ok2 || err != nil {
		return msg
	}
	for _, p := range places { // rules first: the innermost place that holds the line
		if p.first <= line && line <= p.last {
			return fmt.Sprintf("line %d: %s: %s", line, p, text)
		}
	}
	return msg
}

// rulePlaces lists the rules of every group, then the groups, of a decoded rule file.
func rulePlaces(doc *yaml.Node) []place {
	var rules, groups []place
	for _, g := range seqOf(doc, "groups") {
		gname := scalarOf(g, "name")
		groups = append(groups, place{node: g, group: gname, first: g.Line, last: lastLine(g)})
		for i, r := range seqOf(g, "rules") {
			name := scalarOf(r, "alert")
			if name == "" {
				name = scalarOf(r, "record")
			}
			rules = append(rules, place{node: r, group: gname, rule: i + 1, name: name, first: r.Line, last: lastLine(r)})
		}
	}
	return append(rules, groups...)
}

// valueOf returns the value of key in mapping n (n may be a document), or nil.
func valueOf(n *yaml.Node, key string) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func seqOf(n *yaml.Node, key string) []*yaml.Node {
	if v := valueOf(n, key); v != nil && v.Kind == yaml.SequenceNode {
		return v.Content
	}
	return nil
}

func scalarOf(n *yaml.Node, key string) string {
	if v := valueOf(n, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// lastLine is the last line of n and everything in it.
func lastLine(n *yaml.Node) int {
	last := n.Line
	for _, c := range n.Content {
		last = max(last, lastLine(c))
	}
	return last
}
