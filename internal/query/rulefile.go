package query

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// ruleFile is a rule file in Prometheus' format or in vmalert's, which adds keys to groups and
// rules (docs.victoriametrics.com/vmalert, "Groups" and "Rules"). It is decoded strictly: a
// key that neither format has is an error.
type ruleFile struct {
	Groups []ruleGroup `yaml:"groups"`
}

// ruleGroup is one group. Interval and Concurrency shape the query load; the other keys are
// accepted so that a file of either ruler loads as it is, and each one set is named in a
// warning.
type ruleGroup struct {
	Name string `yaml:"name"`
	// Interval is the group's query interval; 0 takes queryInterval.
	Interval model.Duration `yaml:"interval"`
	// Concurrency caps the group's queries in flight per storage (vmalert's key, default 1
	// there); 0 leaves only queryConcurrency.
	Concurrency int        `yaml:"concurrency"`
	Rules       []fileRule `yaml:"rules"`

	groupNotApplied `yaml:",inline"`
}

// groupNotApplied holds the group keys that a ruler applies to alert state, notifications or
// request details, and tsbench does not: it sends each rule's expr as a plain instant query.
// The yaml tags are the one list of these keys.
type groupNotApplied struct {
	Limit             *int                `yaml:"limit"`        // Prometheus and vmalert
	Labels            map[string]string   `yaml:"labels"`       // Prometheus and vmalert
	QueryOffset       *model.Duration     `yaml:"query_offset"` // Prometheus
	Type              *string             `yaml:"type"`         // vmalert from here on
	EvalOffset        *model.Duration     `yaml:"eval_offset"`
	EvalDelay         *model.Duration     `yaml:"eval_delay"`
	EvalAlignment     *bool               `yaml:"eval_alignment"`
	Params            map[string][]string `yaml:"params"`
	Headers           []string            `yaml:"headers"`
	NotifierHeaders   []string            `yaml:"notifier_headers"`
	Debug             *bool               `yaml:"debug"`
	ExtraFilterLabels map[string]string   `yaml:"extra_filter_labels"` // deprecated in vmalert for params
	Tenant            *string             `yaml:"tenant"`              // vmalert enterprise
}

// fileRule is one rule: Prometheus' keys and vmalert's two more. Only expr makes the load;
// the other keys shape a ruler's alert state, and tsbench evaluates no alert state.
type fileRule struct {
	rulefmt.Rule       `yaml:",inline"`
	Debug              *bool `yaml:"debug"`
	UpdateEntriesLimit *int  `yaml:"update_entries_limit"`
}

// setYAMLKeys names the fields of a struct that the file set (non-nil), by their yaml names.
func setYAMLKeys(v any) []string {
	rv := reflect.ValueOf(v)
	var keys []string
	for i := range rv.NumField() {
		if !rv.Field(i).IsNil() {
			name, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("yaml"), ",")
			keys = append(keys, name)
		}
	}
	return keys
}

// parseRules reads a rule file in Prometheus' or vmalert's format into instant queries: each
// rule is evaluated at its group's interval (queryInterval when the group has none), under its
// group's concurrency. A structural problem is an error naming the group and rule; an
// expression that does not parse is only a warning naming them, as is every group key that
// tsbench does not apply.
func parseRules(b []byte, queryInterval time.Duration) ([]Query, []string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, nil, err // a syntax error, whose message has its line
	}
	var f ruleFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, locate(&doc, err)
	}
	// vmalert reads every YAML document of a file; Prometheus and tsbench read one, and a
	// second one must not be dropped unsaid.
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || len(next.Content) > 0 && next.Content[0].Tag != "!!null" {
			return nil, nil, errors.New("more than one YAML document (---): put every group under the first document's groups")
		}
	}
	var fatal []error
	var warnings []string
	badExpr := map[[2]string]string{} // group, rule name → parse error
	for _, err := range validateRules(&f, &doc) {
		var re *rulefmt.Error
		var pe parser.ParseErrors
		if errors.As(err, &re) && errors.As(err, &pe) {
			badExpr[[2]string{re.Group, re.RuleName}] = pe.Error()
			warnings = append(warnings, fmt.Sprintf("group %q, rule %d, %q: expression does not parse, sent anyway: %v", re.Group, re.Rule, re.RuleName, pe))
			continue
		}
		fatal = append(fatal, err)
	}
	if len(fatal) > 0 {
		return nil, nil, errors.Join(fatal...)
	}
	var qs []Query
	for _, g := range f.Groups {
		interval := time.Duration(g.Interval)
		if interval == 0 {
			interval = queryInterval
		}
		for _, r := range g.Rules {
			name := r.Alert
			if name == "" {
				name = r.Record
			}
			qs = append(qs, Query{
				Name: name, Kind: KindInstant, Expr: r.Expr, Interval: interval,
				ParseError: badExpr[[2]string{g.Name, name}], Group: g.Name, GroupConcurrency: g.Concurrency,
			})
		}
	}
	if len(qs) == 0 {
		return nil, nil, errors.New("no rules")
	}
	return qs, append(warnings, notApplied(f.Groups)...), nil
}

// validateRules checks what Prometheus' rulefmt checks (group names set and unique, label
// names, each rule's record/alert, expr and templates, as rulefmt.Rule.Validate) and vmalert's
// concurrency. Errors about a rule are *rulefmt.Error, naming its group and rule.
func validateRules(f *ruleFile, doc *yaml.Node) []error {
	var errs []error
	groupNodes := seqOf(doc, "groups")
	seen := map[string]bool{}
	for j, g := range f.Groups {
		line := groupNodes[j].Line
		switch {
		case g.Name == "":
			errs = append(errs, fmt.Errorf("line %d: group %d: name must be set", line, j+1))
		case seen[g.Name]:
			errs = append(errs, fmt.Errorf("line %d: group %q: the name is repeated in the file", line, g.Name))
		}
		seen[g.Name] = true
		if g.Concurrency < 0 {
			errs = append(errs, fmt.Errorf("line %d: group %q: concurrency: must be >= 0 (0 or unset: only queryConcurrency caps its queries)", line, g.Name))
		}
		for k, v := range g.Labels {
			if !model.UTF8Validation.IsValidLabelName(k) || k == model.MetricNameLabel {
				errs = append(errs, fmt.Errorf("line %d: group %q: invalid label name: %s", line, g.Name, k))
			}
			if !model.LabelValue(v).IsValid() {
				errs = append(errs, fmt.Errorf("line %d: group %q: invalid label value: %s", line, g.Name, v))
			}
		}
		ruleNodes := seqOf(groupNodes[j], "rules")
		for i, r := range g.Rules {
			var node rulefmt.RuleNode
			if err := ruleNodes[i].Decode(&node); err != nil { // decoded strictly above already
				errs = append(errs, fmt.Errorf("line %d: group %q, rule %d: %w", ruleNodes[i].Line, g.Name, i+1, err))
				continue
			}
			name := r.Alert
			if name == "" {
				name = r.Record
			}
			for _, we := range r.Validate(node, model.UTF8Validation) {
				errs = append(errs, &rulefmt.Error{Group: g.Name, Rule: i + 1, RuleName: name, Err: we})
			}
		}
	}
	return errs
}

// notApplied names, once per key, the group keys set in the file that tsbench does not apply,
// with the groups that set them.
func notApplied(groups []ruleGroup) []string {
	where := map[string][]string{}
	for _, g := range groups {
		for _, key := range setYAMLKeys(g.groupNotApplied) {
			where[key] = append(where[key], strconv.Quote(g.Name))
		}
	}
	keys := make([]string, 0, len(where))
	for k := range where {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var w []string
	for _, k := range keys {
		gs, label := where[k], "group"
		if len(gs) > 1 {
			label = "groups"
		}
		if len(gs) > 3 {
			gs = append(gs[:3:3], fmt.Sprintf("%d more", len(where[k])-3))
		}
		w = append(w, fmt.Sprintf("group key %s (%s %s) not applied: tsbench sends each rule's expr as a plain instant query; only a group's interval and concurrency shape the load",
			k, label, strings.Join(gs, ", ")))
	}
	return w
}

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

// typeNames are the decoder's names of the rule file's types, as a reader knows them.
var typeNames = strings.NewReplacer(
	"in type query.ruleFile", "at the top of a rule file (only groups)",
	"in type query.ruleGroup", "in a rule group",
	"in type query.fileRule", "in a rule",
	"into query.ruleFile", "into a rule file",
	"into query.ruleGroup", "into a rule group",
	"into query.fileRule", "into a rule",
)

// quotedValue is the value yaml v3 quotes in a type error; a rule file's values are no
// secret, but the message reads better without a whole expression in it.
var quotedValue = regexp.MustCompile("(?s)(cannot unmarshal \\S+) `.*` into ")

// locate names the group and rule of a YAML decoding error, which comes with a line only (an
// unknown key, a wrong type) or, for a bad duration (`for: banana`), with neither line nor
// rule. Any other error is returned as it is.
func locate(doc *yaml.Node, err error) error {
	places := rulePlaces(doc)
	if te, ok := errors.AsType[*yaml.TypeError](err); ok {
		errs := make([]error, len(te.Errors))
		for i, msg := range te.Errors {
			errs[i] = errors.New(typeNames.Replace(placeLine(places, quotedValue.ReplaceAllString(msg, "$1 into "))))
		}
		return errors.Join(errs...)
	}
	// No line: decode each rule, then each group, on its own, and name the first that fails
	// alike. Rules come before their groups in places, and a group fails with its rules.
	for _, p := range places {
		var derr error
		if p.rule == 0 {
			derr = p.node.Decode(&ruleGroup{})
		} else {
			derr = p.node.Decode(&fileRule{})
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
