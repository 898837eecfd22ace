package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// server is tsbench's own HTTP address (-httpListenAddr): /metrics, the live report at /
// (live.go), and in scrape mode the targets.
type server struct {
	srv      *http.Server // nil: no address
	mux      *http.ServeMux
	addr     string // the address srv listens on
	live     *live  // the live report; nil without
	stopLive context.CancelFunc
}

// serve starts tsbench's own /metrics on HTTPListenAddr.
func (r *run) serve(reg *prometheus.Registry) error {
	if r.opts.HTTPListenAddr == "" {
		return nil
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", r.opts.HTTPListenAddr)
	if err != nil {
		return fmt.Errorf("-httpListenAddr %s: %w (another tsbench running? pick another address, or \"\" for none)", r.opts.HTTPListenAddr, err)
	}
	h := &r.http
	h.mux, h.addr = http.NewServeMux(), ln.Addr().String()
	h.mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	h.srv = &http.Server{Handler: h.mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = h.srv.Serve(ln) }()
	r.log.Info("serving tsbench's metrics", "url", "http://"+h.addr+"/metrics")
	if r.opts.LiveReport != nil {
		h.live = newLive(r.opts.LiveReport, liveInterval(r.cfg.CheckpointInterval, r.opts), r.opts.LiveGrace, r.log)
		h.mux.Handle("GET /{$}", h.live)
		var ctx context.Context
		ctx, h.stopLive = context.WithCancel(context.Background())
		go h.live.run(ctx)
		r.log.Info("serving the live report", "url", "http://"+h.addr+"/", "every", h.live.every)
	}
	return nil
}

// close stops the address and the live report's renderer.
func (h *server) close() {
	if h.srv != nil {
		_ = h.srv.Close()
	}
	if h.live != nil {
		h.stopLive()
		<-h.live.done
	}
}
