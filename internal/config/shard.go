package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Shard is this process's part of a workload split over Count processes: `shard: 1/3` in
// the config, `-shard 1/3` on the command line, the pod ordinal in the Helm chart. The zero
// value and 0/1 are the whole workload.
type Shard struct {
	Index int // 0 ≤ Index < Count
	Count int
}

// ParseShard reads "i/n".
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, errI := strconv.Atoi(is)
	n, errN := strconv.Atoi(ns)
	if !ok || errI != nil || errN != nil {
		return Shard{}, fmt.Errorf("%q is not i/n (e.g. 0/3: the first of 3 shards)", s)
	}
	sh := Shard{Index: i, Count: n}
	if err := sh.validate(); err != nil {
		return Shard{}, err
	}
	return sh, nil
}

func (s Shard) validate() error {
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("%d/%d: want 0 <= i < n (shards are numbered from 0)", s.Index, s.Count)
	}
	return nil
}

// Of is the shard count, 1 for the zero value.
func (s Shard) Of() int { return max(1, s.Count) }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Of()) }

// UnmarshalText reads "i/n".
func (s *Shard) UnmarshalText(b []byte) error {
	sh, err := ParseShard(string(b))
	if err != nil {
		return err // the key and line are added by checkKeys
	}
	*s = sh
	return nil
}

// MarshalText writes "i/n".
func (s Shard) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Lead reports whether this shard runs what must run once per storage across the shards: the
// query load, the storages' observation and snapshot, and the rule comparison of the read-back.
func (c *Config) Lead() bool { return c.Shard.Index == c.LeadShard }

// StartTime is the startTime key: an RFC 3339 time, or zero for the moment the run starts.
type StartTime struct{ time.Time }

// UnmarshalText reads RFC 3339, "" as zero.
func (t *StartTime) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		t.Time = time.Time{}
		return nil
	}
	v, err := time.Parse(time.RFC3339, string(b))
	if err != nil {
		return fmt.Errorf("%q is not an RFC 3339 time (e.g. 2026-11-23T12:00:00Z)", b)
	}
	t.Time = v
	return nil
}
