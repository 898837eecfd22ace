package liar

import (
	"context"
	"time"

	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/storage/remote/otlptranslator/prometheusremotewrite"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// otlpStored tells the query-side lies (hides) on the float samples the receiver stores of
// md: they hide a series by the labels a query answer names, which OTLP's translation makes,
// so their points are the translation's, keyed as in 1.0 and 2.0. The liar translates as the
// receiver does (storagetest: Prometheus' own translator, its default OTLP configuration, or
// with OTLPResourceLabels every resource attribute and the scope as labels and no job or
// instance), without target_info, a series of the storage's own making.
func (l *Liar) otlpStored(rq *request, md pmetric.Metrics) {
	cfg := config.DefaultConfig.OTLPConfig
	if l.lies.OTLPResourceLabels {
		cfg.PromoteAllResourceAttributes = true
		cfg.KeepIdentifyingResourceAttributes = true
		cfg.PromoteScopeMetadata = true
	}
	app := &storedSamples{withoutJobInstance: l.lies.OTLPResourceLabels}
	// An error is the receiver's to answer, for the same request; what was made is told.
	_, _ = prometheusremotewrite.NewPrometheusConverter(app).FromMetrics(context.Background(), md, prometheusremotewrite.Settings{
		AddMetricSuffixes:                    cfg.TranslationStrategy.ShouldAddSuffixes(),
		AllowUTF8:                            !cfg.TranslationStrategy.ShouldEscape(),
		PromoteResourceAttributes:            prometheusremotewrite.NewPromoteResourceAttributes(cfg),
		KeepIdentifyingResourceAttributes:    cfg.KeepIdentifyingResourceAttributes,
		ConvertHistogramsToNHCB:              cfg.ConvertHistogramsToNHCB,
		PromoteScopeMetadata:                 cfg.PromoteScopeMetadata,
		LabelNameUnderscoreSanitization:      cfg.LabelNameUnderscoreSanitization,
		LabelNamePreserveMultipleUnderscores: cfg.LabelNamePreserveMultipleUnderscores,
		LookbackDelta:                        5 * time.Minute,
		DisableTargetInfo:                    true,
	})
	for _, s := range app.samples {
		if !l.skip(s.ls) {
			l.tell(rq, point{series: s.ls.String(), target: s.ls.Get("instance"), t: s.t, v: s.v, stale: value.IsStaleNaN(s.v), n: 1})
		}
	}
}

// storedSamples keeps the float samples a translation appends, as the receiver would store
// them.
type storedSamples struct {
	withoutJobInstance bool // as storagetest's receiver with OTLPResourceLabels
	samples            []storedSample
}

type storedSample struct {
	ls labels.Labels
	t  int64
	v  float64
}

func (a *storedSamples) Append(_ storage.SeriesRef, ls labels.Labels, _, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram, _ storage.AppendV2Options) (storage.SeriesRef, error) {
	if h == nil && fh == nil {
		if a.withoutJobInstance {
			ls = labels.NewBuilder(ls).Del("job", "instance").Labels()
		}
		a.samples = append(a.samples, storedSample{ls: ls, t: t, v: v})
	}
	return 0, nil
}

func (*storedSamples) Commit() error   { return nil }
func (*storedSamples) Rollback() error { return nil }
