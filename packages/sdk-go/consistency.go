package meshstate

import (
	"fmt"
	"strings"
)

// Consistency is how current a read must be (docs/decisions/0011-read-consistency.md). It is an option
// of Get, Keys, History, Watch and Mirror:
//
//	entry, found, err := servers.Get(ctx, "all.github", meshstate.ConsistencyStrong)
//
// Without one the runtime reads at its default, ConsistencySession, and the request carries no field.
type Consistency string

const (
	// ConsistencySession, the runtime's default: never older than a write the runtime acknowledged to this
	// bundle before the read began, nor than what the bundle already read of that key.
	ConsistencySession Consistency = "session"
	// ConsistencyStrong: every write acknowledged anywhere before the read began, read from the stream's
	// leader; slower, and ReasonUnavailable when no leader answers.
	ConsistencyStrong Consistency = "strong"
	// ConsistencyLocal: any replica's answer, the fastest; it may be older than the bundle's own writes, and
	// successive reads may go back in time.
	ConsistencyLocal Consistency = "local"
)

// consistencyLevels are the wire's words, in state-protocol's order (its CONSISTENCY_LEVELS).
var consistencyLevels = []Consistency{ConsistencySession, ConsistencyStrong, ConsistencyLocal}

// ReadOption tunes Get, Keys and History. A Consistency is one.
type ReadOption interface {
	applyRead(*readOptions)
}

type readOptions struct{ consistency Consistency }

func (c Consistency) applyRead(options *readOptions)   { options.consistency = c }
func (c Consistency) applyWatch(options *watchOptions) { options.consistency = c }

// check refuses a level the wire does not have, as the runtime would (bad-request naming the allowed
// words), before anything is sent. The empty level is no level: the runtime's default.
func (c Consistency) check(bucket, key string) error {
	if c == "" {
		return nil
	}
	for _, level := range consistencyLevels {
		if c == level {
			return nil
		}
	}
	words := make([]string, len(consistencyLevels))
	for i, level := range consistencyLevels {
		words[i] = fmt.Sprintf("%q", string(level))
	}
	refusal := newStateError(ReasonBadRequest, fmt.Sprintf("consistency must be one of %s, got %q (nothing was sent)", strings.Join(words, ", "), string(c)), bucket, key)
	refusal.Path = "consistency"
	refusal.Data["path"] = "consistency"
	return refusal
}

// readParams applies options, checks the level and adds it to params when one is given.
func readParams(params map[string]any, options []ReadOption, bucket, key string) error {
	settings := readOptions{}
	for _, option := range options {
		option.applyRead(&settings)
	}
	return withConsistency(params, settings.consistency, bucket, key)
}

func withConsistency(params map[string]any, level Consistency, bucket, key string) error {
	if err := level.check(bucket, key); err != nil {
		return err
	}
	if level != "" {
		params["consistency"] = string(level)
	}
	return nil
}
