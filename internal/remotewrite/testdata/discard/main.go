// Command discard is the remote-write receiver of the write path's process benchmark
// (BenchmarkProcess): it reads every request body whole, answers 204 and keeps nothing, so
// the benchmark measures tsbench, not a storage. It listens on a free loopback port and
// prints "listening http://ADDR"; on SIGTERM or SIGINT it prints "requests N bytes M", the
// requests and body bytes it read, for the benchmark to check against tsbench's own count.
// A GET answers the same line at any time.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var requests, bytes atomic.Int64
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				fmt.Fprintf(w, "requests %d bytes %d\n", requests.Load(), bytes.Load())
				return
			}
			n, _ := io.Copy(io.Discard, r.Body)
			bytes.Add(n)
			requests.Add(1)
			w.WriteHeader(http.StatusNoContent)
		}),
	}
	fmt.Fprintf(os.Stdout, "listening http://%s\n", ln.Addr())
	go func() { _ = srv.Serve(ln) }()
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	fmt.Fprintf(os.Stdout, "requests %d bytes %d\n", requests.Load(), bytes.Load())
}
