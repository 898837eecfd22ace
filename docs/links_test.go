package docs_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tsbench/tsbench/internal/cli"
)

// pages are the README and every page of docs/, as paths from this directory.
func pages(t *testing.T) []string {
	t.Helper()
	ps, err := filepath.Glob("*.md")
	if err != nil || len(ps) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	return append([]string{"../README.md"}, ps...)
}

// name is how a page is named in a failure: from the repository's root.
func name(page string) string {
	if p, ok := strings.CutPrefix(page, "../"); ok {
		return p
	}
	return "docs/" + page
}

var (
	link       = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
	slugDrop   = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// TestLinksResolve: every relative link of README.md and docs/ names a file or directory
// that exists, and a #fragment of a Markdown page one of its headings (GitHub's anchors).
func TestLinksResolve(t *testing.T) {
	for _, p := range linkProblems(t, pages(t)) {
		t.Error(p)
	}
}

// linkProblems are the links of pages that do not resolve, one sentence each.
func linkProblems(t *testing.T, pages []string) []string {
	t.Helper()
	var problems []string
	for _, page := range pages {
		for n, line := range prose(t, page) {
			for _, m := range link.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(target, "#")
				resolved := page
				if file != "" {
					resolved = path.Join(path.Dir(page), file)
					if _, err := os.Stat(resolved); err != nil {
						problems = append(problems, fmt.Sprintf("%s:%d links to %s, which does not exist (links are relative to the page: from docs/, the repository root is ../)", name(page), n, target))
						continue
					}
				}
				if frag == "" || !strings.HasSuffix(resolved, ".md") {
					continue
				}
				if anchors := headingAnchors(t, resolved); !slices.Contains(anchors, frag) {
					problems = append(problems, fmt.Sprintf("%s:%d links to %s: %s has no heading with the anchor #%s (its anchors: %s)",
						name(page), n, target, name(resolved), frag, strings.Join(anchors, ", ")))
				}
			}
		}
	}
	return problems
}

// prose maps each line number of page outside code fences to its text.
func prose(t *testing.T, page string) map[int]string {
	t.Helper()
	lines := map[int]string{}
	for n, line := range fenced(t, page, false) {
		lines[n] = line.text
	}
	return lines
}

type fenceLine struct {
	lang, text string
}

// fenced maps line numbers of page to their text: inside code fences (with the fence's
// language) when in is true, outside them when false.
func fenced(t *testing.T, page string, in bool) map[int]fenceLine {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]fenceLine{}
	lang, inside := "", false
	for i, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			inside, lang = !inside, rest
			continue
		}
		if inside == in {
			out[i+1] = fenceLine{lang, line}
		}
	}
	return out
}

// headingAnchors are the anchors GitHub gives a page's headings: lower case, punctuation
// dropped, spaces as hyphens, a repeated one suffixed -1, -2, ...
func headingAnchors(t *testing.T, page string) []string {
	t.Helper()
	var anchors []string
	seen := map[string]int{}
	lines := prose(t, page)
	for _, n := range slices.Sorted(maps.Keys(lines)) {
		text, ok := strings.CutPrefix(lines[n], "#")
		if !ok {
			continue
		}
		text = strings.TrimSpace(strings.TrimLeft(text, "#"))
		a := strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(text), ""), " ", "-")
		if k := seen[a]; k > 0 {
			anchors = append(anchors, a+"-"+strconv.Itoa(k))
		} else {
			anchors = append(anchors, a)
		}
		seen[a]++
	}
	return anchors
}

// TestFencedCommandsParse: every tsbench command in a shell fence (sh, bash, console) of
// README.md and docs/ parses: its subcommand exists and takes every flag given, with a value
// of the flag's type. Each is run as `tsbench ARGS -h`, which parses and stops. Every
// `tsbench <command>` line of a text fence (a synopsis) names only flags the command has.
func TestFencedCommandsParse(t *testing.T) {
	for _, p := range commandProblems(t, pages(t)) {
		t.Error(p)
	}
}

// commandProblems are the tsbench commands of pages' fences that do not parse.
func commandProblems(t *testing.T, pages []string) []string {
	t.Helper()
	ctx := context.Background()
	var problems []string
	for _, page := range pages {
		code := fenced(t, page, true)
		for _, n := range slices.Sorted(maps.Keys(code)) {
			l := code[n]
			switch l.lang {
			case "sh", "bash", "console":
				for _, args := range shellCommands(l.text) {
					var stderr bytes.Buffer
					if c := cli.Main(ctx, append(args, "-h"), io.Discard, &stderr); c != cli.ExitOK {
						problems = append(problems, fmt.Sprintf("%s:%d: `tsbench %s` does not parse (exit %d): %s; fix the command on the page, or the flag in internal/cli",
							name(page), n, strings.Join(args, " "), c, firstLine(stderr.String())))
					}
				}
			case "text", "":
				problems = append(problems, synopsisProblems(ctx, name(page), n, l.text)...)
			}
		}
	}
	return problems
}

var (
	synopsisWord = regexp.MustCompile(`^[a-z]+$`)
	synopsisFlag = regexp.MustCompile(`(?:^|[\s\[|])-([A-Za-z][A-Za-z0-9]*)`)
	helpFlag     = regexp.MustCompile(`(?m)^  -([A-Za-z0-9]+)`)
)

// synopsisProblems checks a synopsis line (`tsbench report compare OLD NEW [-out DIR]`): the
// flags it names are among those `tsbench <command> -h` lists.
func synopsisProblems(ctx context.Context, page string, n int, line string) []string {
	fields := strings.Fields(line)
	if len(fields) < 2 || fields[0] != "tsbench" || !synopsisWord.MatchString(fields[1]) {
		return nil
	}
	cmd := []string{fields[1]}
	for _, f := range fields[2:] {
		if !synopsisWord.MatchString(f) {
			break
		}
		cmd = append(cmd, f)
	}
	var help, stderr bytes.Buffer
	if c := cli.Main(ctx, append(slices.Clone(cmd), "-h"), &help, &stderr); c != cli.ExitOK {
		return []string{fmt.Sprintf("%s:%d: `tsbench %s` is no command (exit %d): %s", page, n, strings.Join(cmd, " "), c, firstLine(stderr.String()))}
	}
	var has []string
	for _, m := range helpFlag.FindAllStringSubmatch(help.String(), -1) {
		has = append(has, m[1])
	}
	var problems []string
	for _, m := range synopsisFlag.FindAllStringSubmatch(line, -1) {
		if !slices.Contains(has, m[1]) {
			problems = append(problems, fmt.Sprintf("%s:%d: `tsbench %s` has no flag -%s (its flags: -%s): fix the synopsis or internal/cli",
				page, n, strings.Join(cmd, " "), m[1], strings.Join(has, ", -")))
		}
	}
	return problems
}

// shellCommands are the tsbench invocations of a shell line: each command of a list or
// pipeline (&&, ||, ;, |) whose program is tsbench (bin/tsbench, or after a --), with its
// arguments up to a redirection or a comment, quotes removed.
func shellCommands(line string) [][]string {
	var cmds [][]string
	for _, part := range regexp.MustCompile(`&&|\|\||;|\|`).Split(strings.TrimPrefix(strings.TrimSpace(line), "$ "), -1) {
		words := shellWords(part)
		if end := slices.IndexFunc(words, func(w string) bool { return strings.HasPrefix(w, "#") }); end >= 0 {
			words = words[:end]
		}
		i := 0 // the program: the first word, or the first after -- (kubectl exec POD -- /tsbench)
		if d := slices.Index(words, "--"); d >= 0 {
			i = d + 1
		}
		if i >= len(words) || path.Base(words[i]) != "tsbench" {
			continue
		}
		args := words[i+1:]
		if end := slices.IndexFunc(args, func(w string) bool { return strings.ContainsAny(w[:1], "<>") }); end >= 0 {
			args = args[:end]
		}
		cmds = append(cmds, args)
	}
	return cmds
}

// shellWords splits s on blanks, keeping quoted strings whole and dropping their quotes.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	quote, inWord := rune(0), false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// citedTest is a test, benchmark or fuzz test a page names as the check or the source of a
// claim: `TestEncodeV2Exemplar`, `BenchmarkCatchUp`.
var citedTest = regexp.MustCompile("`((?:Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*)`")

// TestCitedTestsExist: every test a page of docs/ cites as the check of a claim (the
// protocols' sample types, the encoders' bytes) is a test of the repository, so a renamed
// or removed check does not leave the claim standing unchecked.
func TestCitedTestsExist(t *testing.T) {
	defined := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Za-z0-9_]*)\(`).FindAllStringSubmatch(string(b), -1) {
			defined[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(pages, "../README.md") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range citedTest.FindAllStringSubmatch(string(b), -1) {
			if !defined[m[1]] {
				t.Errorf("%s cites %s, which no _test.go defines", p, m[1])
			}
		}
	}
}

// TestCommandsListMatchesHelp: docs/commands.md's list of every subcommand is the synopsis
// `tsbench --help` prints, line for line, and each synopsis names every flag its command's
// -h lists, each flag shown with its type (issue 31: the list lacked profile metadata, --help
// lacked -history and -hold, and run -h showed "-hold report merge").
func TestCommandsListMatchesHelp(t *testing.T) {
	var help bytes.Buffer
	cli.Main(context.Background(), []string{"--help"}, &help, &help)
	var synopsis []string
	for line := range strings.Lines(help.String()) {
		if strings.HasPrefix(line, "  tsbench ") {
			synopsis = append(synopsis, strings.TrimSpace(line))
		}
	}
	if len(synopsis) < 9 {
		t.Fatalf("tsbench --help lists %d commands:\n%s", len(synopsis), help.String())
	}
	doc, err := os.ReadFile("commands.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(doc), "Every subcommand:\n\n```text\n")
	block, _, _ = strings.Cut(block, "```")
	if diff := cmp.Diff(synopsis, strings.Split(strings.TrimSpace(block), "\n")); diff != "" {
		t.Errorf("docs/commands.md's list of every subcommand is not tsbench --help's (-help +doc):\n%s", diff)
	}
	flagLine := regexp.MustCompile(`(?m)^  -([A-Za-z][\w-]*)`)
	for _, s := range synopsis {
		words := strings.Fields(s)[1:]
		cmd := []string{words[0]}
		if len(words) > 1 && regexp.MustCompile(`^[a-z]+$`).MatchString(words[1]) {
			cmd = append(cmd, words[1])
		}
		var out bytes.Buffer
		cli.Main(context.Background(), append(cmd, "-h"), &out, &out)
		// flag.PrintDefaults shows a back-quoted word of a usage as the flag's argument: a
		// bool flag then reads as if it took one ("-hold report merge").
		for _, m := range regexp.MustCompile(`(?m)^  -([\w-]+) (.+)$`).FindAllStringSubmatch(out.String(), -1) {
			if !slices.Contains([]string{"string", "int", "duration", "float", "uint", "value", "int64", "uint64"}, m[2]) {
				t.Errorf("tsbench %s -h shows -%s taking %q: a back-quoted word in its usage", strings.Join(cmd, " "), m[1], m[2])
			}
		}
		for _, m := range flagLine.FindAllStringSubmatch(out.String(), -1) {
			if !regexp.MustCompile(`[\[ |]-` + regexp.QuoteMeta(m[1]) + `\b`).MatchString(s) {
				t.Errorf("tsbench %s -h has -%s; its synopsis in --help does not: %s", strings.Join(cmd, " "), m[1], s)
			}
		}
	}
}

// TestTablesUnbroken: every table of docs/ starts with its header and separator rows, so a
// blank line inside one (which ends it and leaves the rows after it as plain text) fails.
func TestTablesUnbroken(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(pages, "../README.md") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		fence := false
		for i, l := range lines {
			if strings.HasPrefix(l, "```") {
				fence = !fence
			}
			if fence || !strings.HasPrefix(l, "|") || (i > 0 && strings.HasPrefix(lines[i-1], "|")) {
				continue
			}
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "|--") && !strings.HasPrefix(lines[i+1], "| --") && !strings.HasPrefix(lines[i+1], "|:-") {
				t.Errorf("%s:%d: a table row without a header and separator above it (a blank line inside a table?): %.60s", p, i+1, l)
			}
		}
	}
}
