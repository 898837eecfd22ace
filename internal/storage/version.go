package storage

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// VersionLabel is a metric of a /metrics page and its label that holds a version.
type VersionLabel struct {
	Metric, Label string
	// Release finds the release in the label's value when it holds more (a build tag); nil:
	// the value is the release.
	Release *regexp.Regexp
}

// release is the release in a version label's value v.
func (vl VersionLabel) release(v string) string {
	if vl.Release != nil {
		if r := vl.Release.FindString(v); r != "" {
			return r
		}
	}
	return v
}

// ReadVersion is the version the storage whose query API is at readURL says it is on its
// /metrics page, where a family's Version says, through c (its read side's auth): "" when the
// page names none (a binary built without its version, as Debian's VictoriaMetrics 1.79 is),
// an error when the page cannot be read.
func ReadVersion(ctx context.Context, c *Client, readURL string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	root, err := hostRoot(readURL)
	if err != nil {
		return "", err
	}
	b, err := getPage(ctx, c, root+"metrics")
	if err != nil {
		return "", err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return "", fmt.Errorf("GET %smetrics: not the Prometheus text format: %w", root, err)
	}
	for _, f := range Families() {
		for _, v := range f.Version {
			for _, m := range families[v.Metric].GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == v.Label && l.GetValue() != "" {
						return v.release(l.GetValue()), nil
					}
				}
			}
		}
	}
	return "", nil
}
