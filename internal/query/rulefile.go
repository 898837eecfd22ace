package query

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
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

// ruleGroup is one group. The keys above groupNotApplied change what tsbench sends: how often
// (interval), how many at once (concurrency), with what (params, headers) and for which time
// (query_offset, eval_delay). The other keys are accepted so that a file of either ruler loads
// as it is, and each one set is named in a warning.
type ruleGroup struct {
	Name string `yaml:"name"`
	// Interval is the group's query interval; 0 takes queryInterval.
	Interval model.Duration `yaml:"interval"`
	// Concurrency caps the group's queries in flight per storage (vmalert's key, default 1
	// there); 0 leaves only queryConcurrency.
	Concurrency int `yaml:"concurrency"`
	// Params are URL query parameters sent with each of the group's queries (vmalert's key,
	// e.g. nocache: ["1"] or extra_label: ["env=dev"]).
	Params map[string][]string `yaml:"params"`
	// Headers are HTTP headers sent with each of the group's queries, "Name: value" each
	// (vmalert's key, e.g. a tenant header). Their values may be secrets.
	Headers []string `yaml:"headers"`
	// QueryOffset (Prometheus) and EvalDelay (vmalert) set the query's time that far before
	// its scheduled time; a group sets at most one of them.
	QueryOffset *model.Duration `yaml:"query_offset"`
	EvalDelay   *model.Duration `yaml:"eval_delay"`
	Rules       []fileRule      `yaml:"rules"`

	groupNotApplied `yaml:",inline"`
}

// groupNotApplied holds the group keys that a ruler applies to alert state, notifications or
// its evaluation schedule, and tsbench does not: it sends each rule's expr as an instant query
// on its own schedule. The yaml tags are the one list of these keys.
//
// eval_offset is one of them: it pins a vmalert group's evaluations to a phase of the wall
// clock (the 5th minute of every hour), all of the group's rules at once, with the query
// time set to that phase. tsbench spreads each rule over its interval from the run's start
// (offset), so that a storage sees a steady load rather than bursts; pinning a group would
// trade that for a burst per group and interval, and a benchmark of minutes would see
// eval_offset's phase once or never.
type groupNotApplied struct {
	Limit             *int              `yaml:"limit"`  // Prometheus and vmalert
	Labels            map[string]string `yaml:"labels"` // Prometheus and vmalert
	Type              *string           `yaml:"type"`   // vmalert from here on
	EvalOffset        *model.Duration   `yaml:"eval_offset"`
	EvalAlignment     *bool             `yaml:"eval_alignment"`
	NotifierHeaders   []string          `yaml:"notifier_headers"`
	Debug             *bool             `yaml:"debug"`
	ExtraFilterLabels map[string]string `yaml:"extra_filter_labels"` // deprecated in vmalert for params
	Tenant            *string           `yaml:"tenant"`              // vmalert enterprise
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
// group's concurrency, with its group's params and headers, at its scheduled time less the
// group's query_offset or eval_delay. A structural problem is an error naming the group and
// rule (and a group's params or headers that would replace tsbench's own are one); an
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
	if err := shape(&doc); err != nil {
		return nil, nil, err
	}
	var fatal []error
	var warnings []string
	badExpr := map[[2]string]string{} // group, rule name → parse error
	reqs, errs := validateRules(&f, &doc)
	for _, err := range errs {
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
	for j, g := range f.Groups {
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
				Params: reqs[j].params, Header: reqs[j].header, TimeOffset: reqs[j].timeOffset,
			})
		}
	}
	if len(qs) == 0 {
		return nil, nil, errors.New("no rules")
	}
	return qs, append(warnings, notApplied(f.Groups)...), nil
}

// shape refuses a group or rule that is not a mapping (an empty "-" item): the decoder drops
// such an item, so the decoded groups and rules would no longer line up with the nodes that
// give their lines.
func shape(doc *yaml.Node) error {
	var errs []error
	for j, g := range seqOf(doc, "groups") {
		if g.Kind != yaml.MappingNode {
			errs = append(errs, fmt.Errorf("line %d: group %d: empty or not a mapping (name, rules, ...)", g.Line, j+1))
			continue
		}
		for i, r := range seqOf(g, "rules") {
			if r.Kind != yaml.MappingNode {
				errs = append(errs, fmt.Errorf("line %d: group %q, rule %d: empty or not a mapping (alert or record, expr, ...)", r.Line, scalarOf(g, "name"), i+1))
			}
		}
	}
	return errors.Join(errs...)
}

// validateRules checks what Prometheus' rulefmt checks (group names set and unique, label
// names, each rule's record/alert, expr and templates, as rulefmt.Rule.Validate) and vmalert's
// concurrency, params, headers and eval_delay, and returns what each group adds to its
// queries. Errors about a rule are *rulefmt.Error, naming its group and rule.
func validateRules(f *ruleFile, doc *yaml.Node) ([]request, []error) {
	var errs []error
	groupNodes := seqOf(doc, "groups")
	seen := map[string]bool{}
	reqs := make([]request, len(f.Groups))
	for j, g := range f.Groups {
		line := groupNodes[j].Line
		var rerrs []error
		reqs[j], rerrs = groupRequest(&g, groupNodes[j])
		errs = append(errs, rerrs...)
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
	return reqs, errs
}

// request is what a group adds to each of its queries.
type request struct {
	params     url.Values
	header     http.Header
	timeOffset time.Duration
}

// ownParams are the parameters tsbench sends with each instant query, with what they carry:
// a group's params must not replace them (a second value would be read first by some
// storages and second by others).
var ownParams = map[string]string{
	"query": "the rule's expr",
	"time":  "the evaluation time (the scheduled time, less query_offset or eval_delay)",
}

// ownHeaders are the headers that the storage's auth or tsbench's HTTP client set on each
// query, with who sets them.
var ownHeaders = map[string]string{
	"Authorization":  "the storage's auth (readBearerToken, basicAuth or readHeaders of the storage in remoteStorages)",
	"Content-Type":   "tsbench's HTTP client, for the form it posts",
	"Content-Length": "tsbench's HTTP client",
	"Host":           "tsbench's HTTP client, from readURL",
}

// tokenChars are the characters of an HTTP header name (RFC 9110 token), as net/http checks.
const tokenChars = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// groupRequest reads a group's params, headers, query_offset and eval_delay. Its errors
// name the group and key and never quote a header's value: values carry tenant tokens.
func groupRequest(g *ruleGroup, node *yaml.Node) (request, []error) {
	var req request
	var errs []error
	at := func(key string) string { // the line of the key
		line := node.Line
		for i := 0; node.Kind == yaml.MappingNode && i+1 < len(node.Content); i += 2 {
			if node.Content[i].Value == key {
				line = node.Content[i].Line
			}
		}
		return fmt.Sprintf("line %d: group %q: %s", line, g.Name, key)
	}
	for _, name := range slices.Sorted(maps.Keys(g.Params)) {
		switch what, own := ownParams[name]; {
		case own:
			errs = append(errs, fmt.Errorf("%s: %s is tsbench's own parameter, %s; a group cannot set it", at("params"), name, what))
		case name == "":
			errs = append(errs, fmt.Errorf("%s: a parameter has an empty name", at("params")))
		}
	}
	if len(g.Params) > 0 {
		req.params = url.Values(maps.Clone(g.Params))
	}
	items := seqOf(node, "headers")
	for i, h := range g.Headers {
		line := node.Line
		if i < len(items) {
			line = items[i].Line
		}
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("line %d: group %q: headers: item %d: %s", line, g.Name, i+1, fmt.Sprintf(format, args...)))
		}
		if strings.TrimSpace(h) == "" {
			continue // vmalert skips an empty item too
		}
		name, value, ok := strings.Cut(h, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch canon := http.CanonicalHeaderKey(name); {
		case !ok:
			bad("not \"Name: value\"") // not quoted: without its colon it may be a bare token
		case name == "" || strings.Trim(name, tokenChars) != "":
			bad("the name is not a token (letters, digits and !#$%%&'*+-.^_`|~ only)")
		case strings.ContainsAny(value, "\r\n\x00"):
			bad("the value of %s has a line break or NUL", canon)
		case ownHeaders[canon] != "":
			bad("%s is set by %s; a group cannot set it", canon, ownHeaders[canon])
		case len(req.header.Values(canon)) > 0:
			bad("%s is set twice", canon)
		default:
			if req.header == nil {
				req.header = http.Header{}
			}
			req.header.Set(canon, value)
		}
	}
	switch {
	case g.QueryOffset != nil && g.EvalDelay != nil:
		errs = append(errs, fmt.Errorf("%s: set with query_offset, which means the same (Prometheus' name for it): keep one", at("eval_delay")))
	case g.EvalOffset != nil && g.EvalDelay != nil:
		errs = append(errs, fmt.Errorf("%s: set with eval_offset, which vmalert refuses (eval_offset sets the evaluation time itself): keep one", at("eval_delay")))
	case g.QueryOffset != nil:
		req.timeOffset = time.Duration(*g.QueryOffset)
	case g.EvalDelay != nil:
		req.timeOffset = time.Duration(*g.EvalDelay)
	}
	return req, errs
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
		w = append(w, fmt.Sprintf("group key %s (%s %s) not applied: of a group's keys tsbench applies interval, concurrency, params, headers, query_offset and eval_delay",
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

// valueOf returns the value of key in mapping n (n may be a document), or nil. Aliases
// (*name) are followed, as the decoder follows them.
func valueOf(n *yaml.Node, key string) *yaml.Node {
	n = resolved(n)
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = resolved(n.Content[0])
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return resolved(n.Content[i+1])
		}
	}
	return nil
}

// seqOf returns the items of the sequence at key in mapping n, aliases followed.
func seqOf(n *yaml.Node, key string) []*yaml.Node {
	v := valueOf(n, key)
	if v == nil || v.Kind != yaml.SequenceNode {
		return nil
	}
	items := make([]*yaml.Node, len(v.Content))
	for i, c := range v.Content {
		items[i] = resolved(c)
	}
	return items
}

// resolved follows an alias to the node it names.
func resolved(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
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
