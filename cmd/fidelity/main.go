// Command fidelity is the measuring side of `make fidelity` (issue 14): it puts a real
// exporter behind a 1 s cache, so that vmagent can scrape it as many targets (node_exporter
// refuses more than 40 concurrent scrapes), and, after the run, merges and snapshots each
// pipeline's VictoriaMetrics and Prometheus and prints bytes per sample side by side.
//
//	fidelity cache -listen 127.0.0.1:0 -upstream http://127.0.0.1:9100/metrics
//	fidelity measure -targets 50 -pipeline real,http://vm,/vm/data,http://prom,/prom/data ...
//
// scripts/fidelity.sh runs both; every address is loopback.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fidelity:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: fidelity cache|measure [flags]")
	}
	switch args[0] {
	case "cache":
		return cache(ctx, args[1:], stdout)
	case "measure":
		return measure(ctx, args[1:], stdout)
	}
	return fmt.Errorf("unknown subcommand %q: want cache or measure", args[0])
}

// cache serves the upstream page on every path, refreshed in the background every -ttl: as
// the prometheus-benchmark chart's nginx in front of node_exporter, except that a scrape never
// waits for node_exporter, so a slow exporter on a loaded machine does not fail scrapes (each
// failure writes a staleness marker into every series of the target).
func cache(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("cache", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "loopback address to serve on")
	upstream := fs.String("upstream", "", "the exporter's /metrics URL")
	ttl := fs.Duration("ttl", time.Second, "how often the page is fetched again")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := loopback(*upstream); err != nil {
		return err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", *listen)
	if err != nil {
		return err
	}
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() {
		return fmt.Errorf("-listen %s is not a loopback address", *listen)
	}
	c := &pageCache{upstream: *upstream, client: &http.Client{Timeout: 10 * time.Second}}
	if err := c.refresh(ctx); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		tick := time.NewTicker(*ttl)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := c.refresh(ctx); err != nil && ctx.Err() == nil {
					fmt.Fprintln(os.Stderr, "fidelity cache: refresh:", err) // the old page is served meanwhile
				}
			}
		}
	})
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 5 * time.Second}
	fmt.Fprintf(stdout, "listening on %s\n", ln.Addr())
	wg.Go(func() {
		<-ctx.Done()
		_ = srv.Close()
	})
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

type pageCache struct {
	upstream string
	client   *http.Client

	mu   sync.Mutex // guards body
	body []byte
}

func (c *pageCache) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	c.mu.Lock()
	body := c.body
	c.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write(body)
}

func (c *pageCache) refresh(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.upstream, nil)
	if err != nil {
		return err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("upstream: HTTP %d", resp.StatusCode)
	}
	c.mu.Lock()
	c.body = b
	c.mu.Unlock()
	return nil
}

func loopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return fmt.Errorf("%q: want an http URL", raw)
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s: only loopback addresses (127.0.0.1) are allowed", raw)
	}
	return nil
}

// pipeline is one side of the comparison: its two storages.
type pipeline struct {
	name             string
	vmURL, vmDir     string
	promURL, promDir string
}

// figures are one pipeline's measurements.
type figures struct {
	seriesPerTarget        float64
	vmSamples, promSamples float64
	vmData, vmTotal        float64               // bytes
	promChunks, promTotal  float64               // bytes
	changed                map[string][2]float64 // kind → changed samples, samples after a first
	exported, stale        float64               // exported samples; staleness markers among them (failed scrapes)
}

func measure(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("measure", flag.ContinueOnError)
	targets := fs.Int("targets", 50, "targets per pipeline")
	sampleTargets := fs.String("exportInstances", `host-00000[0-4]:9100`, "instance regexp of the targets whose samples are exported to count changes")
	var pipes []pipeline
	fs.Func("pipeline", "name,vmURL,vmDataDir,promURL,promDataDir (repeat; the first is the reference)", func(s string) error {
		f := strings.Split(s, ",")
		if len(f) != 5 {
			return fmt.Errorf("%q: want name,vmURL,vmDataDir,promURL,promDataDir", s)
		}
		for _, u := range []string{f[1], f[3]} {
			if err := loopback(u); err != nil {
				return err
			}
		}
		pipes = append(pipes, pipeline{f[0], strings.TrimSuffix(f[1], "/"), f[2], strings.TrimSuffix(f[3], "/"), f[4]})
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(pipes) < 2 || *targets < 1 {
		return errors.New("measure needs -targets and at least two -pipeline")
	}
	client := &http.Client{Timeout: 10 * time.Minute}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	res := make([]figures, len(pipes))
	var wg sync.WaitGroup
	errs := make([]error, len(pipes))
	for i, p := range pipes {
		wg.Go(func() {
			f, err := measurePipeline(ctx, client, p, *targets, *sampleTargets)
			if err != nil {
				errs[i] = fmt.Errorf("pipeline %s: %w", p.name, err)
				return
			}
			log.Info("measured", "pipeline", p.name, "vm_samples", f.vmSamples, "prom_samples", f.promSamples)
			res[i] = f
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	printTable(stdout, pipes, res)
	return nil
}

func measurePipeline(ctx context.Context, client *http.Client, p pipeline, targets int, exportInstances string) (figures, error) {
	f := figures{changed: map[string][2]float64{}}
	// VictoriaMetrics: flush, force-merge every partition, wait for the merges to end; twice,
	// so rows that were still arriving during the first merge end up in the one part too.
	for range 2 {
		if err := get(ctx, client, p.vmURL+"/internal/force_flush", nil); err != nil {
			return f, err
		}
		if err := get(ctx, client, p.vmURL+"/internal/force_merge", nil); err != nil {
			return f, err
		}
		for {
			select {
			case <-ctx.Done():
				return f, ctx.Err()
			case <-time.After(time.Second):
			}
			m, err := vmMetrics(ctx, client, p.vmURL)
			if err != nil {
				return f, err
			}
			if m["vm_active_force_merges"] == 0 && m["vm_active_merges_total"] == 0 {
				f.vmSamples = m["vm_rows_total"]
				break
			}
		}
	}
	var err error
	if f.vmData, err = dirSize(filepath.Join(p.vmDir, "data")); err != nil {
		return f, err
	}
	var idx float64
	if idx, err = dirSize(filepath.Join(p.vmDir, "indexdb")); err != nil {
		return f, err
	}
	f.vmTotal = f.vmData + idx
	// Prometheus: a snapshot with the head, which writes the head out as a block.
	var snap struct {
		Data struct{ Name string } `json:"data"`
	}
	if err := post(ctx, client, p.promURL+"/api/v1/admin/tsdb/snapshot?skip_head=false", &snap); err != nil {
		return f, err
	}
	dir := filepath.Join(p.promDir, "snapshots", snap.Data.Name)
	var series float64
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		f.promTotal += float64(info.Size())
		if filepath.Base(filepath.Dir(path)) == "chunks" {
			f.promChunks += float64(info.Size())
		}
		if d.Name() == "meta.json" {
			var meta struct {
				Stats struct{ NumSamples, NumSeries float64 } `json:"stats"`
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if err := json.Unmarshal(b, &meta); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			f.promSamples += meta.Stats.NumSamples
			series = max(series, meta.Stats.NumSeries)
		}
		return nil
	})
	if err != nil {
		return f, err
	}
	f.seriesPerTarget = series / float64(targets)
	// Changed samples per series kind, from the exported samples of a few targets.
	q := url.Values{"match[]": {`{instance=~"` + exportInstances + `"}`}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.vmURL+"/api/v1/export?"+q.Encode(), nil)
	if err != nil {
		return f, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return f, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var line struct {
			Metric map[string]string `json:"metric"`
			Values []any             `json:"values"`
		}
		if err := json.Unmarshal(quoteNonFinite(sc.Bytes()), &line); err != nil {
			return f, fmt.Errorf("export: %w", err)
		}
		k := kind(line.Metric["__name__"])
		c := f.changed[k]
		for _, v := range line.Values {
			f.exported++
			if v == nil { // VictoriaMetrics exports a staleness marker as null
				f.stale++
			}
		}
		for i := 1; i < len(line.Values); i++ {
			if fmt.Sprint(line.Values[i]) != fmt.Sprint(line.Values[i-1]) {
				c[0]++
			}
			c[1]++
		}
		f.changed[k] = c
	}
	return f, sc.Err()
}

// quoteNonFinite quotes the NaN and ±Inf that VictoriaMetrics' export writes bare in "values",
// which encoding/json refuses.
func quoteNonFinite(line []byte) []byte {
	head, rest, ok := bytes.Cut(line, []byte(`"values":[`))
	if !ok {
		return line
	}
	values, tail, ok := bytes.Cut(rest, []byte("]"))
	if !ok {
		return line
	}
	fields := bytes.Split(values, []byte(","))
	for i, f := range fields {
		if v := string(f); v == "NaN" || v == "Inf" || v == "+Inf" || v == "-Inf" {
			fields[i] = []byte(strconv.Quote(v))
		}
	}
	out := make([]byte, 0, len(line)+16)
	out = append(append(append(out, head...), `"values":[`...), bytes.Join(fields, []byte(","))...)
	return append(append(out, ']'), tail...)
}

// kinds are the series kinds of issue 14's table, by metric name prefix; the first match wins.
var kinds = []struct{ name, prefix string }{
	{"node_cpu", "node_cpu_"},
	{"node_memory", "node_memory_"},
	{"node_filesystem", "node_filesystem_"},
	{"node_disk", "node_disk_"},
	{"node_network", "node_network_"},
	{"node_other", "node_"},
	{"go_", "go_"},
	{"process_", "process_"},
	{"other", ""},
}

func kind(name string) string {
	for _, k := range kinds {
		if strings.HasPrefix(name, k.prefix) {
			return k.name
		}
	}
	return "other"
}

func get(ctx context.Context, client *http.Client, u string, into any) error {
	return do(ctx, client, http.MethodGet, u, into)
}

func post(ctx context.Context, client *http.Client, u string, into any) error {
	return do(ctx, client, http.MethodPost, u, into)
}

func do(ctx context.Context, client *http.Client, method, u string, into any) error {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, u, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if into != nil {
		return json.Unmarshal(b, into)
	}
	return nil
}

var metricLine = regexp.MustCompile(`^([a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$`)

// vmMetrics sums VictoriaMetrics' own metrics by name; vm_rows_total sums vm_rows of every
// storage/* type (the samples on disk and in memory).
func vmMetrics(ctx context.Context, client *http.Client, base string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		g := metricLine.FindStringSubmatch(sc.Text())
		if g == nil {
			continue
		}
		v, err := strconv.ParseFloat(g[3], 64)
		if err != nil {
			continue
		}
		switch {
		case g[1] == "vm_rows" && strings.Contains(g[2], `type="storage/`):
			m["vm_rows_total"] += v
		case g[1] == "vm_active_merges" || g[1] == "vm_active_force_merges":
			key := g[1]
			if key == "vm_active_merges" {
				key = "vm_active_merges_total"
			}
			m[key] += v
		}
	}
	return m, sc.Err()
}

func dirSize(dir string) (float64, error) {
	var n float64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += float64(info.Size())
		}
		return nil
	})
	return n, err
}

func printTable(w io.Writer, pipes []pipeline, res []figures) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var head strings.Builder
	head.WriteString("\t")
	for _, p := range pipes {
		head.WriteString(p.name + "\t")
	}
	for _, p := range pipes[1:] {
		head.WriteString(p.name + "/" + pipes[0].name + "\t")
	}
	fmt.Fprintln(tw, head.String())
	row := func(label string, v func(f figures) float64, ratio bool, format string) {
		var line strings.Builder
		line.WriteString(label + "\t")
		for _, f := range res {
			fmt.Fprintf(&line, format+"\t", v(f))
		}
		for _, f := range res[1:] {
			if ratio {
				fmt.Fprintf(&line, "%.2f", v(f)/v(res[0]))
			}
			line.WriteString("\t") // empty ratio cells keep the columns aligned
		}
		fmt.Fprintln(tw, line.String())
	}
	row("series per target", func(f figures) float64 { return f.seriesPerTarget }, false, "%.0f")
	row("samples in VictoriaMetrics", func(f figures) float64 { return f.vmSamples }, false, "%.0f")
	row("samples in Prometheus", func(f figures) float64 { return f.promSamples }, false, "%.0f")
	for _, k := range kinds {
		if _, ok := res[0].changed[k.name]; !ok {
			continue
		}
		row("changed samples "+k.name, func(f figures) float64 {
			c := f.changed[k.name]
			if c[1] == 0 {
				return math.NaN()
			}
			return c[0] / c[1]
		}, true, "%.3f")
	}
	// A failed scrape leaves a staleness marker in every series of its target, and a gap in
	// its timestamps: both cost bytes that no exporter's data explains.
	row("stale markers per 1000 samples", func(f figures) float64 { return 1000 * f.stale / f.exported }, false, "%.2f")
	row("VM data bytes/sample", func(f figures) float64 { return f.vmData / f.vmSamples }, true, "%.3f")
	row("VM data+indexdb bytes/sample", func(f figures) float64 { return f.vmTotal / f.vmSamples }, true, "%.3f")
	row("Prometheus chunks bytes/sample", func(f figures) float64 { return f.promChunks / f.promSamples }, true, "%.3f")
	row("Prometheus snapshot bytes/sample", func(f figures) float64 { return f.promTotal / f.promSamples }, true, "%.3f")
	_ = tw.Flush()
}
