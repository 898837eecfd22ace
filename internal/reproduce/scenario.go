// Package reproduce sets a published comparison's figures beside a run of its setup (tsbench
// reproduce NAME): the scenario's config and its data file of published figures come from
// reproductions/, and every measured figure is read from the run's results, never measured
// again.
//
// Invariant: a row's verdict is holds only when both figures are known, in the same
// scale-free form, within the row's stated tolerance; an unknown figure is not comparable
// here with its reason.
package reproduce

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tsbench/tsbench/internal/config"
)

// dir is where the scenarios are in the embedded assets: NAME.yaml (the config) and
// NAME.figures.yaml (the published figures) for each.
const dir = "reproductions"

// Published is a scenario's data file: the article and every figure it published.
type Published struct {
	Name     string `yaml:"name"`
	Article  string `yaml:"article"`
	Date     string `yaml:"date"`
	Versions string `yaml:"versions"`
	Hardware string `yaml:"hardware"`
	// Setup is the article's own scale, what its figures are divided by to be scale-free.
	Setup Setup `yaml:"setup"`
	// StandIns maps a storage of this run to how it stands in for the article's.
	StandIns map[string]string `yaml:"standIns"`
	// Absent maps a storage the article measured to why it is not here and what to do.
	Absent  map[string]string `yaml:"absent"`
	Figures []Figure          `yaml:"figures"`
	// Sizing is the load the generator is sized for from this run's figures (100m-samples).
	Sizing *SizingFor `yaml:"sizing"`
}

// SizingFor is a load to size the generator for.
type SizingFor struct {
	SamplesPerSecond float64 `yaml:"samplesPerSecond"`
	ActiveSeries     float64 `yaml:"activeSeries"`
}

// Setup is the article's scale.
type Setup struct {
	Targets          float64 `yaml:"targets"`
	SamplesPerSecond float64 `yaml:"samplesPerSecond"`
	ActiveSeries     float64 `yaml:"activeSeries"`
	Samples          float64 `yaml:"samples"` // stored over the span
}

// Figure is one published figure and how this run's results measure it.
type Figure struct {
	Figure string `yaml:"figure"`
	// Text is the figure as the article gives it; Value and Unit are its number in that unit.
	Text  string  `yaml:"text"`
	Value float64 `yaml:"value"`
	Unit  string  `yaml:"unit"`
	// Per divides Value (in base units) by the article's setup to make it scale-free:
	// target, activeSeries, sample, millionSamplesPerSecond, or "" for a figure already free.
	Per string `yaml:"per"`
	// Measure names the figure of the results compared (measures), Storage the storage it is
	// read of; "a/b" compares their ratio. Empty Storage: a figure of the workload.
	Measure   string  `yaml:"measure"`
	Storage   string  `yaml:"storage"`
	Tolerance float64 `yaml:"tolerance"`
	// Unmeasured is why tsbench has no such figure; set only where it has none.
	Unmeasured string `yaml:"unmeasured"`
}

// units are the factors from a figure's unit to the base unit of its scale-free form.
var units = map[string]float64{
	"samples/s": 1, "series": 1, "samples": 1, "bytes/sample": 1, "cores": 1, "×": 1, "s": 1, "samples/core-second": 1,
	"GB": 1e9, "KB": 1e3, "MB": 1e6, "MB/s": 1e6, "GB/s": 1e9, "flag": 1,
}

// Names lists the scenarios in fsys, in name order.
func Names(fsys fs.FS) ([]string, error) {
	files, err := fs.Glob(fsys, dir+"/*.figures.yaml")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(path.Base(f), ".figures.yaml"))
	}
	return names, nil
}

// Load reads the scenario name's config, with overrides (YAML, nil for none) laid over it and
// its targets multiplied by scale, and its published figures.
func Load(fsys fs.FS, name string, overrides []byte, scale float64) (*config.Config, *Published, error) {
	names, err := Names(fsys)
	if err != nil {
		return nil, nil, err
	}
	if !slices.Contains(names, name) {
		return nil, nil, fmt.Errorf("no scenario %q: the scenarios are %s", name, strings.Join(names, ", "))
	}
	if scale <= 0 || math.IsInf(scale, 0) || math.IsNaN(scale) {
		return nil, nil, fmt.Errorf("scale %g: must be > 0", scale)
	}
	pub, err := LoadPublished(fsys, name)
	if err != nil {
		return nil, nil, err
	}
	b, err := fs.ReadFile(fsys, path.Join(dir, name+".yaml"))
	if err != nil {
		return nil, nil, err
	}
	if b, err = overlay(b, overrides); err != nil {
		return nil, nil, err
	}
	cfg, err := config.Parse(b)
	if err != nil {
		return nil, nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	cfg.TargetsCount = max(1, int(math.Round(float64(cfg.TargetsCount)*scale)))
	if err := cfg.Validate(); err != nil {
		return nil, nil, fmt.Errorf("scenario %s at scale %g: %w", name, scale, err)
	}
	return cfg, pub, nil
}

// LoadPublished reads the scenario name's published figures strictly.
func LoadPublished(fsys fs.FS, name string) (*Published, error) {
	b, err := fs.ReadFile(fsys, path.Join(dir, name+".figures.yaml"))
	if err != nil {
		return nil, err
	}
	var p Published
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s.figures.yaml: %w", name, err)
	}
	for _, f := range p.Figures {
		if _, ok := units[f.Unit]; !ok {
			return nil, fmt.Errorf("%s.figures.yaml: %s: unit %q is not one of %s", name, f.Figure, f.Unit, strings.Join(slices.Sorted(maps.Keys(units)), ", "))
		}
		if !slices.Contains([]string{"", "target", "activeSeries", "sample", "millionSamplesPerSecond", "samplesPerSecond"}, f.Per) || p.Setup.per(f.Per) <= 0 {
			return nil, fmt.Errorf("%s.figures.yaml: %s: per %q: not a figure of the setup, or 0 there", name, f.Figure, f.Per)
		}
		if _, ok := measures[f.Measure]; !ok && f.Unmeasured == "" {
			return nil, fmt.Errorf("%s.figures.yaml: %s: measure %q is not one of %s", name, f.Figure, f.Measure, strings.Join(slices.Sorted(maps.Keys(measures)), ", "))
		}
	}
	return &p, nil
}

// overlay lays the top-level keys of overrides over those of base; a key that is a map in
// both (remoteStorages) gets the keys of both, the override's winning.
func overlay(base, overrides []byte) ([]byte, error) {
	if len(bytes.TrimSpace(overrides)) == 0 {
		return base, nil
	}
	var b, o map[string]any
	if err := yaml.Unmarshal(base, &b); err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(overrides, &o); err != nil {
		return nil, fmt.Errorf("overrides: %w", err)
	}
	if b == nil {
		b = map[string]any{}
	}
	for k, v := range o {
		bm, ok1 := b[k].(map[string]any)
		om, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			maps.Copy(bm, om)
			continue
		}
		b[k] = v
	}
	return yaml.Marshal(b)
}
