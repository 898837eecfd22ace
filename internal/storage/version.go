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

// buildInfo are the metrics by which each family's storage says its version on /metrics, and
// the label that holds it: VictoriaMetrics' vm_app_version (short_version from 1.80 on, else
// version, its whole build tag), the Prometheus ecosystem's *_build_info.
var buildInfo = []struct{ metric, label string }{
	{"vm_app_version", "short_version"},
	{"vm_app_version", "version"},
	{"prometheus_build_info", "version"},
	{"cortex_build_info", "version"},
	{"thanos_build_info", "version"},
}

// release is a version label's value as a release: a VictoriaMetrics build tag's release,
// any other value as it is.
func release(v string) string {
	if tag := vmBuildTag.FindString(v); tag != "" {
		return tag
	}
	return v
}

// vmBuildTag finds the release in a VictoriaMetrics build tag such as
// victoria-metrics-20220802-123456-tags-v1.79.5-0-gabcdef.
var vmBuildTag = regexp.MustCompile(`v\d+\.\d+\.\d+(-enterprise)?(-cluster)?`)

// ReadVersion is the version the storage whose query API is at readURL says it is on its
// /metrics page, through c (its read side's auth): "" when the page names none (a binary built
// without its version, as Debian's VictoriaMetrics 1.79 is), an error when the page cannot be
// read.
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
	for _, bi := range buildInfo {
		for _, m := range families[bi.metric].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == bi.label && l.GetValue() != "" {
					return release(l.GetValue()), nil
				}
			}
		}
	}
	return "", nil
}
