package reproduce

import (
	"fmt"
	"math"

	"github.com/tsbench/tsbench/internal/results"
)

// sent is every sample the storages acked, each copy counted: what tsbench generated,
// encoded and sent.
func sent(r *results.Run) int64 {
	var n int64
	for _, s := range r.Storages {
		if s.Write != nil {
			n += s.Write.AckedSamples
		}
	}
	return n
}

// generatorPerCore is the samples tsbench sent per CPU-second of its own process over the run.
func generatorPerCore(r *results.Run, _ *results.Storage) (float64, string) {
	g, secs := r.Generator, r.EndTime.Sub(r.StartTime).Seconds()
	if g == nil || g.CPUCoresMean == nil || *g.CPUCoresMean == 0 || secs <= 0 {
		return 0, "tsbench's own CPU not observed"
	}
	return float64(sent(r)) / (*g.CPUCoresMean * secs), ""
}

// wirePerSample is what tsbench sent on the wire, compressed, per sample acked.
func wirePerSample(r *results.Run, _ *results.Storage) (float64, string) {
	var bytes int64
	for _, s := range r.Storages {
		if s.Write != nil {
			bytes += s.Write.BytesSent
		}
	}
	if n := sent(r); n > 0 {
		return float64(bytes) / float64(n), ""
	}
	return 0, "no sample acked"
}

// generatorPerSeries is tsbench's largest RSS over the active series: an upper bound, since
// its memory grows with targets and queues, not with series (it keeps no per-series state).
func generatorPerSeries(r *results.Run, _ *results.Storage) (float64, string) {
	g := r.Generator
	if g == nil || g.RSSBytesMax == nil || r.Workload.ActiveSeries == 0 {
		return 0, "tsbench's own RSS not observed"
	}
	return *g.RSSBytesMax / float64(r.Workload.ActiveSeries), ""
}

// Sizing is what a load needs of tsbench's generator pods, from the chart's formula
// (deploy/helm/tsbench: cpu request = ceil(1000 × samples/s per pod × cpuHeadroom /
// samplesPerCore) millicores).
type Sizing struct {
	SamplesPerSecond, ActiveSeries float64
	Shards                         int
	Cores                          float64 // used in all, at SamplesPerCore
	CPURequestMillis               int     // per shard, with the headroom
	RAMBytes                       float64 // in all, at RAMPerSeries: an upper bound
}

// ShardSamplesPerSecond is what one generator pod sends: about one requested core and
// under 350 Mbit/s per storage (docs/scale-out.md, Sizing).
const ShardSamplesPerSecond = 2.5e6

// CPUHeadroom is the chart's cpuHeadroom: the request is twice the measured use.
const CPUHeadroom = 2

// Size is the sizing of rate samples/s over series active series at samplesPerCore samples
// per CPU-second and ramPerSeries bytes of RSS per active series.
func Size(rate, series, samplesPerCore, ramPerSeries float64) Sizing {
	shards := int(math.Ceil(rate / ShardSamplesPerSecond))
	return Sizing{
		SamplesPerSecond: rate, ActiveSeries: series, Shards: shards,
		Cores:            rate / samplesPerCore,
		CPURequestMillis: int(math.Ceil(1000 * rate / float64(shards) * CPUHeadroom / samplesPerCore)),
		RAMBytes:         series * ramPerSeries,
	}
}

// String is the sizing in one line, beside the article's 16 × (8 vCPU, 25 GB).
func (z Sizing) String() string {
	return fmt.Sprintf("%.0f M samples/s over %.0f M active series: %d shards, %.1f cores used (%d m requested per shard), %.1f GB RSS at most, beside the article's 16 × (8 vCPU, 25 GB) = 128 vCPU, 400 GB",
		z.SamplesPerSecond/1e6, z.ActiveSeries/1e6, z.Shards, z.Cores, z.CPURequestMillis, z.RAMBytes/1e9)
}
