package docs_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/threshold"
	"github.com/tsbench/tsbench/internal/verify"
)

// oneLine is a page's text with every run of blanks, line breaks included, as one space: a
// claim is found however it is wrapped.
func oneLine(t *testing.T, page string) string {
	t.Helper()
	return strings.Join(strings.Fields(readPage(t, page)), " ")
}

// TestThresholdFiguresDocumented: the figures docs/results.md lists after "Figures:" (its
// thresholds and compare rules) are those internal/threshold knows, no fewer and no more
// (the list lacked the HA pairs' and the held samples' figures).
func TestThresholdFiguresDocumented(t *testing.T) {
	_, list, ok := strings.Cut(oneLine(t, "results.md"), " none was checked. Figures: ")
	list, _, _ = strings.Cut(list, " `tsbench report compare` flags")
	if !ok {
		t.Fatal(`docs/results.md: no "none was checked. Figures:" list`)
	}
	got := figureList(list)
	slices.Sort(got)
	if diff := cmp.Diff(threshold.FigureNames(), got); diff != "" {
		t.Errorf("docs/results.md's figures (after \"Figures:\") differ from threshold.FigureNames() (-code +doc):\n%s", diff)
	}
}

// figureList reads a list of figures as docs/results.md writes it: `write.ackedSamples`, a
// brace group `query.{p50,p99}` or `write.{acked,dropped}Samples`, and a bare `retries`
// under the section of the last figure named with one.
func figureList(list string) []string {
	var out []string
	section := ""
	for _, m := range regexp.MustCompile("`([A-Za-z0-9.{},]+)`").FindAllStringSubmatch(list, -1) {
		f := m[1]
		if s, _, ok := strings.Cut(f, "."); ok {
			section = s
		} else {
			f = section + "." + f
		}
		head, rest, ok := strings.Cut(f, "{")
		if !ok {
			out = append(out, f)
			continue
		}
		alts, tail, _ := strings.Cut(rest, "}")
		for a := range strings.SplitSeq(alts, ",") {
			out = append(out, head+a+tail)
		}
	}
	return out
}

// TestFigureList: the list reader expands groups and bare names as the page means them.
func TestFigureList(t *testing.T) {
	got := figureList("`write.{acked,dropped}Samples`, `retries`; `verify.ha.{gaps,oneCopy}`, `lostAfterAck` ([x](y.md))")
	want := []string{"write.ackedSamples", "write.droppedSamples", "write.retries", "verify.ha.gaps", "verify.ha.oneCopy", "verify.lostAfterAck"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestEveryPageInReadme: the README's table of pages links every page of docs/, so a new page
// is found from the front page.
func TestEveryPageInReadme(t *testing.T) {
	readme := oneLine(t, "../README.md")
	for _, p := range pages(t)[1:] {
		if !strings.Contains(readme, "](docs/"+p+")") {
			t.Errorf("README.md's Documentation table does not link docs/%s", p)
		}
	}
}

// TestMakeTargetsExist: every `make TARGET` the README and docs/ name, in prose or a shell
// fence, is a target of the Makefile, and every `NAME ?= value` they quote is the Makefile's.
func TestMakeTargetsExist(t *testing.T) {
	b, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	makefile := string(b)
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z0-9 -]*):`).FindAllStringSubmatch(makefile, -1) {
		for name := range strings.FieldsSeq(m[1]) {
			targets[name] = true
		}
	}
	named := regexp.MustCompile("(?:`|^\\s*)make ([a-z][a-z0-9-]*)")
	assigned := regexp.MustCompile("`([A-Z_]+ \\?= [^`]+)`")
	for _, p := range pages(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(b), "\n") {
			for _, m := range named.FindAllStringSubmatch(line, -1) {
				if !targets[m[1]] {
					t.Errorf("%s:%d names `make %s`, which the Makefile has no target for", name(p), n+1, m[1])
				}
			}
			for _, m := range assigned.FindAllStringSubmatch(line, -1) {
				if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m[1]) + `\s*$`).MatchString(makefile) {
					t.Errorf("%s:%d quotes `%s`, which is not a line of the Makefile", name(p), n+1, m[1])
				}
			}
		}
	}
}

// TestSampleTypesProfileFigures: what docs/sample-types.md says the default profile carries
// (its families, series, and the series with a unit) is what profiles/node_exporter.json has.
func TestSampleTypesProfileFigures(t *testing.T) {
	b, err := os.ReadFile("../profiles/node_exporter.json")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Series []struct {
			Name string `json:"name"`
			Type string `json:"type"`
			Unit string `json:"unit"`
		} `json:"series"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	families, unit := map[string]bool{}, 0
	for _, s := range p.Series {
		name := s.Name
		if s.Type == "histogram" || s.Type == "summary" { // x_bucket, x_count, x_sum are family x
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				name = strings.TrimSuffix(name, suffix)
			}
		}
		families[name] = true
		if s.Unit != "" {
			unit++
		}
	}
	doc := oneLine(t, "sample-types.md")
	for _, want := range []string{
		"`# HELP` text and unit (" + strconv.Itoa(len(families)) + " families, " + strconv.Itoa(len(p.Series)) + " series)",
		"as OpenMetrics requires a name to; " + strconv.Itoa(unit) + " series have one",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/sample-types.md: want %q, from profiles/node_exporter.json", want)
		}
	}
}

// TestSecretParamsDocumented: each URL query parameter docs/configuration.md says is kept
// secret is one config.RedactURL hides, and a user-info password reads as it says.
func TestSecretParamsDocumented(t *testing.T) {
	_, list, ok := strings.Cut(oneLine(t, "configuration.md"), "the URL query parameters ")
	list, _, _ = strings.Cut(list, " are replaced by")
	if !ok {
		t.Fatal(`docs/configuration.md: no "the URL query parameters" list`)
	}
	params := regexp.MustCompile("`([A-Za-z_]+)`").FindAllStringSubmatch(list, -1) // not the example URL after them
	if len(params) == 0 {
		t.Fatal("docs/configuration.md: no parameter in the list of secret query parameters")
	}
	for _, m := range params {
		raw := "http://h/api?" + url.QueryEscape(m[1]) + "=hunter2&db=x"
		if got := config.RedactURL(raw); strings.Contains(got, "hunter2") {
			t.Errorf("docs/configuration.md says query parameter %s is replaced by <secret>; config.RedactURL(%q) = %q", m[1], raw, got)
		}
	}
	if got := config.RedactURL("http://u:hunter2@h/"); !strings.Contains(oneLine(t, "configuration.md"), "a URL's user-info password by `xxxxx`") || got != "http://u:xxxxx@h/" {
		t.Errorf("docs/configuration.md: a user-info password is said to read as `xxxxx`; config.RedactURL gives %q", got)
	}
}

// TestDefaultsOnEveryPage: a config default a page states, in a key table ("| key | default
// |", as freshness.md and sample-types.md have, and configuration.md's nested keys such as
// `series.haReplicas`) or in prose ("`verifyInterval` (default `10m`"), is the value
// config.Default() sets.
func TestDefaultsOnEveryPage(t *testing.T) {
	def := reflect.ValueOf(config.Default())
	prose := regexp.MustCompile("`([a-zA-Z][a-zA-Z.]*)` \\(default `?([0-9a-zA-Z.]+)`?[),;]")
	checked := 0
	for _, p := range pages(t) {
		claims := map[string]defaultRow{}
		for n, row := range defaultRows(t, p) {
			if p == "configuration.md" && !strings.Contains(row.key, ".") {
				continue // TestConfigDefaultsDocumented checks the top-level rows
			}
			claims[fmt.Sprintf("%s:%d", name(p), n)] = row
		}
		for _, m := range prose.FindAllStringSubmatch(oneLine(t, p), -1) {
			claims[fmt.Sprintf("%s (%q)", name(p), m[0])] = defaultRow{m[1], m[2]}
		}
		for _, where := range slices.Sorted(maps.Keys(claims)) {
			c := claims[where]
			v, ok := fieldByPath(def, c.key)
			if !ok {
				continue // not a config key: a value's default, as `otlpLabels`' `prometheus`
			}
			checked++
			if !matchesDefault(v, c.value) && !parsesAsDefault(t, v, c) {
				t.Errorf("%s: the default of %s is %s there and %v in config.Default()", where, c.key, c.value, v.Interface())
			}
		}
	}
	t.Logf("%d defaults checked", checked)
	if checked == 0 {
		t.Error("no default found on any page: the patterns no longer match how pages state them")
	}
}

// fieldByPath finds a key path's field (freshness.interval) in v, through structs and
// pointers; a nil pointer's field is its zero value.
func fieldByPath(v reflect.Value, path string) (reflect.Value, bool) {
	for key := range strings.SplitSeq(path, ".") {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v = reflect.Zero(v.Type().Elem())
			} else {
				v = v.Elem()
			}
		}
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		f, ok := fieldByTag(v, key)
		if !ok {
			return reflect.Value{}, false
		}
		v = f
	}
	return v, true
}

// parsesAsDefault reports whether the value a page gives, written in a config as it is
// (`nativeHistograms: false`, a short form of a mapping), loads as def, the default's field.
func parsesAsDefault(t *testing.T, def reflect.Value, c defaultRow) bool {
	t.Helper()
	keys := strings.Split(c.key, ".")
	doc := c.value
	for _, k := range slices.Backward(keys) {
		doc = "{" + k + ": " + doc + "}"
	}
	got, err := config.Parse([]byte(doc))
	if err != nil {
		t.Logf("%s: %v", doc, err)
		return false
	}
	v, ok := fieldByPath(reflect.ValueOf(*got), c.key)
	return ok && reflect.DeepEqual(v.Interface(), def.Interface())
}

// TestBoundsDocumented: the bounds a long run's files keep that pages quote (a timeline's
// "at most 540 points", the checks list's "at most 144 entries") are internal/results'.
func TestBoundsDocumented(t *testing.T) {
	bounds := []struct {
		claim *regexp.Regexp
		want  int
		code  string
	}{
		{regexp.MustCompile(`at most (\d+) points`), results.TimelinePoints, "results.TimelinePoints"},
		{regexp.MustCompile(`the (\d+) points a timeline holds`), results.TimelinePoints, "results.TimelinePoints"},
		{regexp.MustCompile(`at most (\d+) entries`), results.MaxChecks, "results.MaxChecks"},
	}
	found := 0
	for _, p := range pages(t) {
		doc := oneLine(t, p)
		for _, b := range bounds {
			for _, m := range b.claim.FindAllStringSubmatch(doc, -1) {
				found++
				if m[1] != strconv.Itoa(b.want) {
					t.Errorf("%s says %q; %s is %d", name(p), m[0], b.code, b.want)
				}
			}
		}
	}
	if found == 0 {
		t.Error("no bound quoted on any page: the patterns no longer match how pages state them")
	}
}

// TestScaleOutSizing: each row of docs/scale-out.md's Sizing table is what the chart's
// formula (quoted above the table, computed in templates/_helpers.tpl) gives for the example
// values file it names over the chart's values.yaml: targets, shards, samples/s per shard,
// cores used and requested, and the memory request.
func TestScaleOutSizing(t *testing.T) {
	chart := helmValues(t, "../deploy/helm/tsbench/values.yaml")
	perTarget, _, _ := defaultProfile(t)
	rows := 0
	for n, line := range prose(t, "scale-out.md") {
		_, file, ok := strings.Cut(line, "](../examples/helm-")
		if !ok || !strings.HasPrefix(line, "|") {
			continue
		}
		rows++
		file, _, _ = strings.Cut(file, ")")
		v := maps.Clone(chart)
		maps.Copy(v, helmValues(t, "../examples/helm-"+file))
		interval, err := time.ParseDuration(v["scrapeInterval"].(string))
		if err != nil {
			t.Fatal(err)
		}
		targets, shards := number(v["targetsCount"]), number(v["shards"])
		rate := targets * max(1, number(v["writeReplicas"])) * float64(perTarget) / interval.Seconds() / shards
		cpu := max(100, math.Ceil(1000*rate*number(v["cpuHeadroom"])/number(v["samplesPerCore"])))
		pending := number(v["maxPendingSamples"])
		if pending == 0 {
			pending = 10_000_000
		}
		storages := 0.0
		for _, st := range v["remoteStorages"].(map[string]any) {
			if st, ok := st.(map[string]any); !ok || st["disableWrite"] != true {
				storages++
			}
		}
		mem := 64 + math.Ceil(pending*17*storages/(1<<20))
		cells := strings.Split(line, "|")
		for i, want := range []string{
			3: commas(int(targets)),
			4: strconv.Itoa(int(shards)),
			5: fmt.Sprintf("%.1f M", rate/1e6),
			6: fmt.Sprintf("%.2f (%.0fm)", rate/number(v["samplesPerCore"]), cpu),
			7: fmt.Sprintf("%.0f MiB with a %g M-sample queue", mem, pending/1e6),
		} {
			if want != "" && (len(cells) <= i || !strings.Contains(cells[i], want)) {
				t.Errorf("docs/scale-out.md:%d (examples/helm-%s): column %d should say %q, from the values and the chart's formula", n, file, i, want)
			}
		}
	}
	if rows == 0 {
		t.Error("docs/scale-out.md: no Sizing row naming an examples/helm-*.yaml")
	}
	doc := oneLine(t, "scale-out.md")
	for _, want := range []string{
		fmt.Sprintf("`samplesPerCore` is %g M", number(chart["samplesPerCore"])/1e6),
		fmt.Sprintf("so `cpuHeadroom: %g` doubles the request", number(chart["cpuHeadroom"])),
		fmt.Sprintf("rendered at install as now + `startDelay` (%s)", chart["startDelay"]),
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/scale-out.md: want %q, from deploy/helm/tsbench/values.yaml", want)
		}
	}
}

// helmValues reads a values file as Helm does: YAML into maps.
func helmValues(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// number is a YAML number as a float64; absent, 0.
func number(v any) float64 {
	switch n := v.(type) {
	case int:
		return float64(n)
	case float64:
		return n
	}
	return 0
}

// TestWriteHeadersRefusedDocumented: each header configuration.md says `writeHeaders` cannot
// set is one the config refuses there.
func TestWriteHeadersRefusedDocumented(t *testing.T) {
	_, list, ok := strings.Cut(oneLine(t, "configuration.md"), "`writeHeaders` cannot set ")
	list, _, _ = strings.Cut(list, " |")
	names := regexp.MustCompile("`([A-Za-z-]+)`").FindAllStringSubmatch(list, -1)
	if !ok || len(names) == 0 {
		t.Fatal("docs/configuration.md: no list of the headers `writeHeaders` cannot set")
	}
	for _, m := range names {
		doc := "remoteStorages: {s: {writeURL: 'http://127.0.0.1:1/', writeHeaders: {" + m[1] + ": x}}}"
		if _, err := config.Parse([]byte(doc)); err == nil || !strings.Contains(err.Error(), "writeHeaders: "+m[1]) {
			t.Errorf("docs/configuration.md says writeHeaders cannot set %s; config.Parse(%q) = %v", m[1], doc, err)
		}
	}
}

// TestReadmeGoVersion: the Go the README says tsbench needs is go.mod's `go` line, and the
// oldest go it says install-go.sh takes is the script's.
func TestReadmeGoVersion(t *testing.T) {
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	need := regexp.MustCompile(`(?m)^go (\d+\.\d+)(\.\d+)?$`).FindStringSubmatch(string(mod))
	script, err := os.ReadFile("../scripts/install-go.sh")
	if err != nil {
		t.Fatal(err)
	}
	switching := regexp.MustCompile(`(?m)^switching=(\S+)$`).FindSubmatch(script)
	if need == nil || switching == nil {
		t.Fatal("no go line in go.mod or no switching= in scripts/install-go.sh")
	}
	readme := oneLine(t, "../README.md")
	for _, want := range []string{
		"tsbench needs the Go `go.mod` names (" + need[0][len("go "):] + ":",
		"uses the `go` on PATH when it is " + need[1] + " or at least " + string(switching[1]),
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md: want %q, from go.mod and scripts/install-go.sh", want)
		}
	}
}

// TestDefaultPlanFigures: what pages say of the default read load (queries.md's count of
// rules, freshness.md's of the plan's queries, scale-out.md's queries per second) is the plan
// query.LoadPlan makes of the default config (scale-out.md said ~7.8 rules/s, counting the
// 78 queries every 10 s where panels and lookups go every 30 s or 1 m).
func TestDefaultPlanFigures(t *testing.T) {
	cfg := config.Default()
	plan, err := query.LoadPlan(os.DirFS(".."), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	perSecond := 0.0
	for _, q := range plan.Queries {
		perSecond += 1 / q.Interval.Seconds()
	}
	rules := len(plan.RuleExprs())
	for page, want := range map[string]string{
		"queries.md":   fmt.Sprintf("(%d alerting and recording rules:", rules),
		"freshness.md": fmt.Sprintf("of the default plan's %d queries", len(plan.Queries)),
		"scale-out.md": fmt.Sprintf("(%d rules every `queryInterval`, %d dashboard panels and %d index lookups every 30 s or 1 m: ~%.1f queries/s at `queryInterval: %s`)",
			rules, kindCount(plan, query.KindRange), len(plan.Queries)-rules-kindCount(plan, query.KindRange), perSecond, cfg.QueryInterval),
	} {
		if !strings.Contains(oneLine(t, page), want) {
			t.Errorf("docs/%s: want %q, from the default config's query plan", page, want)
		}
	}
}

// kindCount counts a plan's queries of one kind.
func kindCount(p *query.Plan, kind string) int {
	n := 0
	for _, q := range p.Queries {
		if q.Kind == kind {
			n++
		}
	}
	return n
}

// TestRulesComparedFigures: how many default rules a run of a given length compares, as
// verification.md and history.md state it, follows from the rules' lookbacks: a rule is
// compared once the run holds its lookback (internal/verify's ruleSpans), so a 3-minute run
// compares those under 3 minutes, 5 minutes of history and 3 live those up to 8.
func TestRulesComparedFigures(t *testing.T) {
	cfg := config.Default()
	plan, err := query.LoadPlan(os.DirFS(".."), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	var needs []time.Duration
	for _, r := range plan.RuleExprs() {
		needs = append(needs, verify.Lookback(r.Expr))
	}
	compared := func(run time.Duration) int {
		return len(slices.DeleteFunc(slices.Clone(needs), func(d time.Duration) bool { return d > run }))
	}
	live := cfg.Duration
	longest := slices.Max(needs)
	left := len(needs) - compared(15*time.Minute+live)
	shortestLeft := slices.Min(slices.DeleteFunc(slices.Clone(needs), func(d time.Duration) bool { return d <= 15*time.Minute+live }))
	for page, wants := range map[string][]string{
		"verification.md": {
			fmt.Sprintf("in a 3-minute run, the %d default rules with windows of 5 minutes and more", len(needs)-compared(live)),
			fmt.Sprintf("The %d default rules a 3-minute run can compare", compared(live)),
			fmt.Sprintf("An 8-minute run compares %d", compared(5*time.Minute+live)),
		},
		"history.md": {
			fmt.Sprintf("| none | | | | not measured here | %d of %d |", compared(live), len(needs)),
			fmt.Sprintf("| 5 min 42 s | %d |", compared(5*time.Minute+live)),
			fmt.Sprintf("| 4 min 52 s | %d |", compared(15*time.Minute+live)),
			fmt.Sprintf("The %d rules left need %s to %s of data", left, words(shortestLeft), words(longest)),
			fmt.Sprintf("(the longest needs %s of data)", words(longest)),
		},
	} {
		doc := oneLine(t, page)
		for _, want := range wants {
			if !strings.Contains(doc, want) {
				t.Errorf("docs/%s: want %q, from the default rules' windows", page, want)
			}
		}
	}
}

// words writes a duration as the pages do: "30 minutes", "6 h 5 m".
func words(d time.Duration) string {
	h, m := int(d.Hours()), int(d.Minutes())%60
	switch {
	case h == 0:
		return fmt.Sprintf("%d minutes", m)
	case m == 0:
		return fmt.Sprintf("%d h", h)
	}
	return fmt.Sprintf("%d h %d m", h, m)
}

// TestResultsMeaningsReadAsProse: the meanings docs/results.md gives its fields are prose, not
// Go doc comments carried over, which name fields by their Go names and lose the subject
// ("And Reads: how many series...", "Are the pages tsbench served...; FailedScrapes were...").
// A Go field name of internal/results outside backticks, or a meaning that opens with a
// comment's leftover verb, fails.
func TestResultsMeaningsReadAsProse(t *testing.T) {
	goNames, seen := map[string]bool{}, map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(ty reflect.Type) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Map {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || ty.PkgPath() != reflect.TypeFor[results.Run]().PkgPath() || seen[ty] {
			return
		}
		seen[ty] = true
		for f := range ty.Fields() {
			if f.IsExported() && regexp.MustCompile(`^[A-Z][a-z0-9]+[A-Z]`).MatchString(f.Name) {
				goNames[f.Name] = true // two words or more: not a word of prose
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[results.Run]())
	word := regexp.MustCompile(`[A-Za-z][A-Za-z0-9]*`)
	leftover := regexp.MustCompile(`^(And|Are|Is|Bound|Bounds) `)
	for n, line := range prose(t, "results.md") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		meaning := strings.TrimSpace(strings.Join(cells[2:len(cells)-1], "|"))
		if leftover.MatchString(meaning) {
			t.Errorf("docs/results.md:%d: the meaning opens with %q, a Go comment's leftover: say what the field is", n, leftover.FindString(meaning))
		}
		for _, w := range word.FindAllString(inlineCode.ReplaceAllString(meaning, ""), -1) {
			if goNames[w] {
				t.Errorf("docs/results.md:%d: %s is a Go name; name the field as results.json does, in backticks", n, w)
			}
		}
	}
}

// TestRuleFileKeysDocumented: the rule file keys queries.md says tsbench accepts without
// applying them are accepted: each group key it lists is named once in a warning, and each
// rule key it lists loads without one. A key listed there that a ruler's file cannot carry
// (or tsbench refuses) fails.
func TestRuleFileKeysDocumented(t *testing.T) {
	doc := oneLine(t, "queries.md")
	keysIn := func(from, to string) []string {
		_, list, ok := strings.Cut(doc, from)
		list, _, _ = strings.Cut(list, to)
		keys := regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(list, -1)
		if !ok || len(keys) == 0 {
			t.Fatalf("docs/queries.md: no list of keys after %q", from)
		}
		var out []string
		for _, k := range keys {
			out = append(out, k[1])
		}
		return out
	}
	groupKeys := keysIn("The other group keys of either ruler (", ")")
	ruleKeys := keysIn("Rule keys besides `expr` (", ")")
	// A value of each key's type, as a rule file writes it.
	values := map[string]string{
		"limit": "10", "labels": "{team: a}", "type": "prometheus", "eval_offset": "1m",
		"eval_alignment": "true", "notifier_headers": `["X-A: b"]`, "debug": "true",
		"extra_filter_labels": "{env: dev}", "tenant": `"1"`, "for": "5m", "keep_firing_for": "1m",
		"annotations": "{summary: x}", "update_entries_limit": "5",
	}
	file := "groups:\n  - name: g\n"
	for _, k := range groupKeys {
		file += "    " + k + ": " + values[k] + "\n"
	}
	file += "    rules:\n      - alert: A\n        expr: up == 0\n"
	for _, k := range ruleKeys {
		file += "        " + k + ": " + values[k] + "\n"
	}
	for _, k := range append(groupKeys, ruleKeys...) {
		if values[k] == "" {
			t.Fatalf("docs/queries.md lists %s: give this test a value of its type", k)
		}
	}
	path := t.TempDir() + "/rules.yml"
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.QueryRules = path
	plan, err := query.LoadPlan(os.DirFS(".."), &cfg)
	if err != nil {
		t.Fatalf("docs/queries.md says these keys are accepted; loading them: %v\n%s", err, file)
	}
	warnings := strings.Join(plan.Warnings(), "\n")
	for _, k := range groupKeys {
		if n := strings.Count(warnings, "group key "+k+" ("); n != 1 {
			t.Errorf("docs/queries.md: group key %s is named in %d warnings, want 1:\n%s", k, n, warnings)
		}
	}
	// The warning names the group keys tsbench applies: those of queries.md's table.
	_, applied, _ := strings.Cut(warnings, "of a group's keys tsbench applies ")
	applied, _, _ = strings.Cut(applied, "\n")
	var tabled []string
	for _, line := range prose(t, "queries.md") {
		if cells := strings.Split(line, "|"); len(cells) > 2 && strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			for _, k := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(cells[1], -1) {
				tabled = append(tabled, k[1])
			}
		}
	}
	code := strings.Fields(strings.NewReplacer(",", " ", " and ", " ").Replace(applied))
	slices.Sort(code)
	slices.Sort(tabled)
	if diff := cmp.Diff(code, tabled); diff != "" {
		t.Errorf("docs/queries.md's table of group keys differs from those the rule loader applies (-code +doc):\n%s", diff)
	}
	for _, k := range ruleKeys {
		if strings.Contains(warnings, k) && !slices.Contains(groupKeys, k) {
			t.Errorf("docs/queries.md: rule key %s is accepted as it is, but a warning names it:\n%s", k, warnings)
		}
	}
}

// TestMetricNamesExist: every tsbench_ metric a page names (or a family of them,
// `tsbench_query_*`) is a name tsbench's code gives a metric or series. Metric names are
// literals in internal/ (no Namespace or Subsystem is used), so a rename leaves the page's
// name unmatched.
func TestMetricNamesExist(t *testing.T) {
	code := map[string]bool{}
	literal := regexp.MustCompile(`"(tsbench_[a-z0-9_]+)"`)
	err := filepath.WalkDir("../internal", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		for _, m := range literal.FindAllSubmatch(b, -1) {
			code[string(m[1])] = true
		}
		return err
	})
	if err != nil || len(code) == 0 {
		t.Fatalf("no tsbench_ metric name in internal/: %v", err)
	}
	named := regexp.MustCompile(`tsbench_[a-z0-9_]+\*?`)
	for _, p := range pages(t) {
		for n, line := range strings.Split(readPage(t, p), "\n") {
			for _, m := range named.FindAllString(line, -1) {
				prefix, family := strings.CutSuffix(m, "*")
				ok := code[m]
				for name := range code {
					ok = ok || family && strings.HasPrefix(name, prefix)
				}
				if !ok {
					t.Errorf("%s:%d names %s, which no code of internal/ names a metric", name(p), n+1, m)
				}
			}
		}
	}
}

// readPage is a page's text.
func readPage(t *testing.T, page string) string {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeExampleFigures: the load the README's example states, in its header and beside
// Mimir's limits, is its config's: targets × the default profile's series, over scrapeInterval.
func TestReadmeExampleFigures(t *testing.T) {
	readme := readPage(t, "../README.md")
	_, block, ok := strings.Cut(readme, "```yaml\n# bench.yaml")
	block, _, _ = strings.Cut(block, "```")
	if !ok {
		t.Fatal("README.md: no ```yaml block opening with # bench.yaml")
	}
	c, err := config.Parse([]byte("#" + block))
	if err != nil {
		t.Fatal(err)
	}
	perTarget, _, _ := defaultProfile(t)
	series := c.TargetsCount * perTarget
	rate := float64(series) / c.ScrapeInterval.Seconds()
	for _, want := range []string{
		fmt.Sprintf("# bench.yaml: %d targets × %d series / %g s ≈ %.0fk samples/s to each storage, for %g minutes",
			c.TargetsCount, perTarget, c.ScrapeInterval.Seconds(), rate/1000, c.Duration.Minutes()),
		fmt.Sprintf("this is %s samples/s and %s series", commas(int(rate)), commas(series)),
	} {
		if !strings.Contains(oneLine(t, "../README.md"), want) {
			t.Errorf("README.md: want %q, from its example's config", want)
		}
	}
}
