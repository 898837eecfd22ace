package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/tsbench/tsbench/internal/results"
)

// lost (deleteAfter × continuous) is the continuous checks of a run whose liar starts
// deleting (LieDeleteAfter) between two checks, once they have found scrapes complete, which
// every check reads again: the first check after it must find each held scrape's deleted
// samples lost after their ack, exactly the liar's count at their times, and the checks after
// it, missing, the deleted series' samples in their new data. A check waits verify's 3 s
// Settle before it reads, so the next reads 3 s after a check ended at the earliest: the
// deletion starts as the first check of data has logged its end (checkedData), not at a time
// after its last read, which a check on a loaded machine can pass before its next read (at
// 1.2 s after the liar's last answer, three runs read across it at a load of 20), and the run
// ends once a check after it has logged its end; the cell checks that no check read across
// the deletion. A check that found its new data complete
// holds its newest scrape (verify.newestComplete): the newest time in its span, at which the
// liar recorded the deleted series of that scrape's target (each of the 2 targets has some,
// and their scrapes' times differ by their phases).

// checkedData is the log line of a check during the run that read data.
func checkedData(line string) bool {
	return strings.Contains(line, `msg="checked during the run"`) && !strings.Contains(line, " checked=0 ")
}

// lostAttempts is how many runs lost makes to time its deletion between two checks' reads.
const lostAttempts = 3

// lostOnce is one run of lost: its results, or why the run could not judge the lie (a check
// read across the deletion, or no check before or after it).
func lostOnce(e *env, attempt int) (*results.Run, string) {
	e.liar.SetAfter(time.Now().Add(time.Hour)) // not the row's: below
	cfg := e.config("bench", startTime(begin())+"verifyInterval: 1s\n"+untilBound+settled, rw1(e))
	out := filepath.Join(e.dir, fmt.Sprintf("out%d", attempt))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := e.background(ctx, "run", "-config", cfg, "-out", out, "-httpListenAddr", "")
	runs := []*background{b}
	var checks int
	e.awaitRun("a check of data", runs, func() bool { checks = b.stderr.Count(checkedData); return checks > 0 })
	deleted := time.Now()
	e.liar.SetAfter(deleted)
	e.awaitRun("a check of data after the deletion", runs, func() bool { return b.stderr.Count(checkedData) > checks })
	stopped := time.Now()
	cancel()
	b.wait(e)
	res := e.results(out)
	e.want = e.expect(cfg, res, stopped)
	lostAfterAck, fresh, why := lostCounts(e, res.Storage("liar").Verify, deleted)
	if why != "" {
		return nil, why
	}
	v := res.Storage("liar").Verify
	c := v.Continuous
	for _, msg := range []string{
		want("verify.lostAfterAck", lostAfterAck, v.LostAfterAck),
		want("verify.continuous.total.lostAfterAck", lostAfterAck, c.Total.LostAfterAck),
		want("verify.continuous.total.readErrors", 0, c.Total.ReadErrors) + want("verify.continuous.total.unchecked", 0, c.Total.Unchecked),
	} {
		if msg != "" {
			e.t.Errorf("%s (deleted at %s; checks %+v)", msg, deleted, v.Checks)
		}
	}
	// The new data's deleted samples are missing too, exactly: a check no longer expects
	// a scrape not generated yet (it once missed one of each target, 294 samples, with
	// nothing deleted: TestContinuousHonest).
	if c.Total.Missing != lostAfterAck+fresh {
		e.t.Errorf("verify.continuous.total.missing %d, want the %d lost after ack and the %d deleted in the new data", c.Total.Missing, lostAfterAck, fresh)
	}
	return res, ""
}

// lostCounts is the liar's count of what the checks of v must find: the samples of the
// scrapes held before the deletion at deleted (lost after their ack), and the deleted
// samples of the new data the checks after it read; why says what kept the run from judging.
func lostCounts(e *env, v *results.Verify, deleted time.Time) (lostAfterAck, fresh int64, why string) {
	var before, after int
	for _, ch := range v.Checks {
		switch end := ch.At.Add(time.Duration(ch.Seconds * float64(time.Second))); {
		case end.Before(deleted) && ch.Checked > 0:
			before++
			if ch.Missing > 0 {
				e.t.Fatalf("a check before the deletion found %d samples missing: not the liar's (checks %+v, examples %q)", ch.Missing, v.Checks, v.Continuous.Examples)
			}
			var newest time.Time
			for _, t := range e.liar.Told() {
				if at := time.UnixMilli(t.T); !at.Before(ch.Span.From) && !at.After(ch.Span.To) && at.After(newest) {
					newest = at
				}
			}
			lostAfterAck += e.liar.Count(newest, newest, nil)
		case end.Before(deleted):
		case ch.At.After(deleted):
			after++
			if !ch.Span.To.Before(ch.Span.From) {
				fresh += e.liar.Count(ch.Span.From, ch.Span.To, nil)
			}
		default:
			return 0, 0, fmt.Sprintf("a check read across the deletion at %s: %+v", deleted, ch)
		}
	}
	if before == 0 || after == 0 || lostAfterAck == 0 {
		return 0, 0, fmt.Sprintf("%d checks with data before the deletion at %s, %d after, %d samples held: the cell could not fail (checks %+v)", before, deleted, after, lostAfterAck, v.Checks)
	}
	return lostAfterAck, fresh, ""
}
