package storagetest

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/storage"
)

// metadataRecorder is the TSDB as the remote-write handler sees it, keeping the metadata it
// appends (2.0's, per series; 1.0's metadata field it ignores, and OTLP's handler takes the
// TSDB's other appender, so neither is recorded) by metric family, for /api/v1/metadata. A Prometheus
// server's /api/v1/metadata answers from its scrape targets only, so what it was sent by
// remote write never shows there though its head keeps it; this receiver serves what its head
// was given instead, so a test sees what the handler kept. Guarded by the Receiver's mu: the
// handlers append under its write lock, /api/v1/metadata reads under its read lock.
type metadataRecorder struct {
	storage.Appendable
	families map[string][]metadata.Metadata // by family, in arrival order, without repeats
}

func (m *metadataRecorder) Appender(ctx context.Context) storage.Appender {
	return &metadataAppender{Appender: m.Appendable.Appender(ctx), rec: m}
}

type metadataAppender struct {
	storage.Appender
	rec *metadataRecorder
}

// UpdateMetadata records md under the series' family (its name less _bucket, _count or _sum
// for a histogram or summary, as a scrape names families) and hands it on.
func (a *metadataAppender) UpdateMetadata(ref storage.SeriesRef, l labels.Labels, md metadata.Metadata) (storage.SeriesRef, error) {
	family := l.Get(model.MetricNameLabel)
	if md.Type == model.MetricTypeHistogram || md.Type == model.MetricTypeSummary {
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			if f, ok := strings.CutSuffix(family, suffix); ok {
				family = f
				break
			}
		}
	}
	if !slices.Contains(a.rec.families[family], md) {
		a.rec.families[family] = append(a.rec.families[family], md)
	}
	return a.Appender.UpdateMetadata(ref, l, md)
}

// metadata answers /api/v1/metadata (every family, or ?metric= one) from what was recorded.
func (r *Receiver) metadata(w http.ResponseWriter, req *http.Request) {
	type entry struct {
		Type string `json:"type"`
		Help string `json:"help"`
		Unit string `json:"unit"`
	}
	data := map[string][]entry{}
	metric := req.FormValue("metric")
	for family, mds := range r.meta.families {
		if metric != "" && family != metric {
			continue
		}
		for _, md := range mds {
			data[family] = append(data[family], entry{Type: string(md.Type), Help: md.Help, Unit: md.Unit})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": data})
}
