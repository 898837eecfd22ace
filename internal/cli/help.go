package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// errHelp is a command's -h: Main prints the command's help on stdout and exits 0.
type errHelp struct {
	fs   *flag.FlagSet
	text string // more on the command's arguments, after its usage lines (withHelpText)
}

func (errHelp) Error() string { return "help requested" }
func (errHelp) Unwrap() error { return flag.ErrHelp }

// withHelpText adds text to a command's help when err is its -h.
func withHelpText(err error, text string) error {
	if h, ok := errors.AsType[errHelp](err); ok {
		h.text = text
		return h
	}
	return err
}

// writeHelp prints a command's help: its entries of the top-level usage, h's text, then its flags.
func writeHelp(w io.Writer, h errHelp) {
	fs := h.fs
	fmt.Fprintf(w, "Usage:\n%s", commandUsage(fs.Name(), true))
	if h.text != "" {
		fmt.Fprintf(w, "\n%s\n", h.text)
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprint(w, "\nFlags:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// commandUsage is the entries of the top-level usage for the command of the flag set named
// name ("tsbench report") and its subcommands (report compare, report merge): each usage
// line, and with doc the indented lines under it too.
func commandUsage(name string, doc bool) string {
	name = strings.TrimPrefix(name, "tsbench ")
	var b strings.Builder
	in := false
	for line := range strings.Lines(usage) {
		if rest, ok := strings.CutPrefix(line, "  tsbench "); ok {
			in = rest == name+"\n" || strings.HasPrefix(rest, name+" ")
		} else if !strings.HasPrefix(line, "      ") {
			in = false
		} else if !doc {
			continue
		}
		if in {
			b.WriteString(line)
		}
	}
	return b.String()
}

// usageError is a usage error of the command fs parses, followed by the command's usage lines.
func usageError(fs *flag.FlagSet, format string, args ...any) error {
	lines := strings.TrimSuffix(commandUsage(fs.Name(), false), "\n")
	return errUsage{fmt.Errorf(format+"\nusage:\n%s", append(args, lines)...)}
}
