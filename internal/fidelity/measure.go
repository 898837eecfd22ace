package fidelity

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
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

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

func measure(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("measure", flag.ContinueOnError)
	fs.SetOutput(stderr)
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
	log := slog.New(slog.NewTextHandler(stderr, nil))
	res := make([]figures, len(pipes))
	var wg sync.WaitGroup
	errs := make([]error, len(pipes))
	for i, p := range pipes {
		wg.Go(func() {
			f, err := measurePipeline(ctx, client, p, *targets, *sampleTargets, time.Second)
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

// measurePipeline merges and snapshots one pipeline's storages and measures them: samples and
// bytes on disk in each, series per target, and the changed fraction of the samples of the
// targets matching exportInstances, by series kind. poll is how often it looks whether
// VictoriaMetrics' merges have ended.
func measurePipeline(ctx context.Context, client *http.Client, p pipeline, targets int, exportInstances string, poll time.Duration) (figures, error) {
	f := figures{changed: map[string][2]float64{}}
	if err := f.measureVM(ctx, client, p, poll); err != nil {
		return f, err
	}
	if err := f.measureProm(ctx, client, p, targets); err != nil {
		return f, err
	}
	return f, f.measureExport(ctx, client, p, exportInstances)
}

// measureVM merges VictoriaMetrics' data into one part and measures it: samples, the data
// directory and the whole with the index.
func (f *figures) measureVM(ctx context.Context, client *http.Client, p pipeline, poll time.Duration) error {
	// VictoriaMetrics: flush, force-merge every partition, wait for the merges to end; twice,
	// so rows that were still arriving during the first merge end up in the one part too.
	for range 2 {
		if err := get(ctx, client, p.vmURL+"/internal/force_flush", nil); err != nil {
			return err
		}
		if err := get(ctx, client, p.vmURL+"/internal/force_merge", nil); err != nil {
			return err
		}
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(poll):
			}
			m, err := vmMetrics(ctx, client, p.vmURL)
			if err != nil {
				return err
			}
			if m["vm_active_force_merges"] == 0 && m["vm_active_merges_total"] == 0 {
				f.vmSamples = m["vm_rows_total"]
				break
			}
		}
	}
	var err error
	if f.vmData, err = dirSize(filepath.Join(p.vmDir, "data")); err != nil {
		return err
	}
	var idx float64
	if idx, err = dirSize(filepath.Join(p.vmDir, "indexdb")); err != nil {
		return err
	}
	f.vmTotal = f.vmData + idx
	return nil
}

// measureProm snapshots Prometheus and measures the snapshot: its bytes, its chunks' bytes,
// its samples and series per target.
func (f *figures) measureProm(ctx context.Context, client *http.Client, p pipeline, targets int) error {
	// A snapshot with the head, which writes the head out as a block.
	var snap struct {
		Data struct{ Name string } `json:"data"`
	}
	if err := post(ctx, client, p.promURL+"/api/v1/admin/tsdb/snapshot?skip_head=false", &snap); err != nil {
		return err
	}
	dir := filepath.Join(p.promDir, "snapshots", snap.Data.Name)
	var series float64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
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
		return err
	}
	f.seriesPerTarget = series / float64(targets)
	return nil
}

// measureExport counts, from the samples VictoriaMetrics exports of the targets matching
// exportInstances, how often a sample differs from the one before it, by series kind.
func (f *figures) measureExport(ctx context.Context, client *http.Client, p pipeline, exportInstances string) error {
	q := url.Values{"match[]": {`{instance=~"` + exportInstances + `"}`}}
	export, err := fetch(ctx, client, http.MethodGet, p.vmURL+"/api/v1/export?"+q.Encode())
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(export))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var line struct {
			Metric map[string]string `json:"metric"`
			Values []any             `json:"values"`
		}
		if err := json.Unmarshal(quoteNonFinite(sc.Bytes()), &line); err != nil {
			return fmt.Errorf("export: %w", err)
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
	return sc.Err()
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
	b, err := fetch(ctx, client, method, u)
	if err != nil || into == nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// fetch is the body of a 2xx answer to method u; any other answer is an error with its text.
func fetch(ctx context.Context, client *http.Client, method, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: HTTP %d: %s", method, u, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return b, nil
}

var metricLine = regexp.MustCompile(`^([a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$`)

// vmMetrics sums VictoriaMetrics' own metrics by name; vm_rows_total sums vm_rows of every
// storage/* type (the samples on disk and in memory).
func vmMetrics(ctx context.Context, client *http.Client, base string) (map[string]float64, error) {
	page, err := fetch(ctx, client, http.MethodGet, base+"/metrics")
	if err != nil {
		return nil, err
	}
	m := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(page))
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
