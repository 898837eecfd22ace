package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/tsbench/tsbench/internal/config"
	"github.com/tsbench/tsbench/internal/query"
	"github.com/tsbench/tsbench/internal/results"
	"github.com/tsbench/tsbench/internal/storage"
)

// checkAttempts and checkPause: a storage that is unreachable or overloaded (a network error,
// a timeout, a 5xx without the API's answer) is asked again; any other answer is final at once.
const (
	checkAttempts = 3
	checkPause    = time.Second
	maxCheckWait  = 10 * time.Second // per attempt, or queryTimeout when shorter
)

// checkQueryAPIs asks every storage with a readURL the query API's cheapest question, the
// instant query `1`, before the workload's clock starts (issue 10). A storage that answers it,
// but not the API's way (a 404 page, HTML, another API's JSON), gets one log line (its readURL
// redacted, what it answered, what to set) and no read load, probes or rule comparison; its
// read-back goes through remoteReadURL when one is set. A storage that could not be reached or
// answered only 5xx has said nothing of its API: it keeps its read load, which counts what it
// meets, with a warning. The run goes on for the others. It returns the checks by storage.
func checkQueryAPIs(ctx context.Context, cfg *config.Config, log *slog.Logger) (map[string]*results.QueryAPI, error) {
	wait := min(cfg.QueryTimeout, maxCheckWait)
	out := map[string]*results.QueryAPI{}
	var mu sync.Mutex // guards out
	failed, err := eachReader(cfg, func(name string, st config.Storage, client *storage.Client) {
		err := askQueryAPI(ctx, query.NewAPI(client, st.ReadURL), wait)
		qa := &results.QueryAPI{URL: config.RedactURL(st.ReadURL), Available: err == nil || passing(err)}
		switch {
		case err == nil:
			if st.RemoteReadURL != "" {
				log.Info("remoteReadURL not used: readURL serves the query API, which the read-back uses", "storage", name)
			}
		case qa.Available:
			// Not reached, or not ready: no answer says it lacks the API. The read load
			// runs, and counts what it meets.
			qa.Answer = err.Error()
			log.Warn("readURL did not answer the query API check; the read load runs and counts its errors",
				"storage", name, "url", qa.URL, "answer", qa.Answer)
		default:
			qa.Answer = err.Error()
			log.Warn("no Prometheus query API at readURL: no read load, probes or rule comparison for this storage",
				"storage", name, "url", qa.URL, "answer", qa.Answer, "fix", fixQueryAPI(st, err))
		}
		mu.Lock()
		out[name] = qa
		mu.Unlock()
	})
	if err != nil {
		return nil, &ConfigError{fmt.Errorf("remoteStorages.%s: %w", failed, err)}
	}
	return out, nil
}

// eachReader calls read, each in its own goroutine, with a read client of every storage that
// has a readURL, which it closes after, and waits for them all. A client that cannot be made
// ends the loop: it returns its storage's name and error once the calls started are done.
func eachReader(cfg *config.Config, read func(name string, st config.Storage, client *storage.Client)) (string, error) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, name := range cfg.StorageNames() {
		st := cfg.RemoteStorages[name]
		if st.ReadURL == "" {
			continue
		}
		client, err := storage.NewClient(name, st, storage.Read, 1)
		if err != nil {
			return name, err
		}
		wg.Go(func() {
			defer client.Close()
			read(name, st, client)
		})
	}
	return "", nil
}

// fixQueryAPI says what to set for a storage whose readURL answered err, not the query API.
func fixQueryAPI(st config.Storage, err error) string {
	fix := "set readURL to the root of the storage's Prometheus HTTP API (the URL before /api/v1/query), or remove it"
	if e, ok := errors.AsType[*query.Error](err); ok && (e.Status == 401 || e.Status == 403) {
		fix = "check the read credentials (readBearerToken, basicAuth, readHeaders), or " + fix
	}
	if st.RemoteReadURL != "" {
		return fix + "; the read-back goes through remoteReadURL"
	}
	return fix + "; to read samples back over Prometheus remote read, set remoteReadURL (InfluxDB 1.x: …/api/v1/prom/read?db=NAME)"
}

// askQueryAPI asks api the check question, again after a pause when the answer may be
// passing; it returns the last answer's error, nil when the API answered.
func askQueryAPI(ctx context.Context, api *query.API, wait time.Duration) error {
	var err error
	for attempt := range checkAttempts {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(checkPause):
			}
		}
		actx, cancel := context.WithTimeout(ctx, wait)
		err = api.Check(actx, time.Now())
		cancel()
		if !passing(err) {
			return err
		}
	}
	return err
}

// passing reports whether a failed check may succeed when asked again.
func passing(err error) bool {
	e, ok := errors.AsType[*query.Error](err)
	if !ok {
		return false
	}
	switch {
	case e.Kind == query.ErrNetwork, e.Kind == query.ErrTimeout:
		return true
	case e.Kind == "http_"+strconv.Itoa(e.Status) && e.Status >= 500:
		return true
	}
	return false
}
