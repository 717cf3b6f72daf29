// Package check judges a recorded history after the run: each checker reads the whole history and
// returns a verdict. The driver never judges while it drives.
package check

import (
	"fmt"
	"sort"
	"time"

	"github.com/mesh/mesh-state/chaos/history"
)

// Status is a checker's conclusion.
type Status string

const (
	Pass      Status = "pass"
	Violation Status = "violation"
	// Skipped: the history holds nothing this checker can judge (say, no final reads).
	Skipped Status = "skipped"
	// Undecided: the checker ran out of time (Porcupine's "unknown").
	Undecided Status = "undecided"
)

// Verdict is one checker's result; Details name the operations at fault.
type Verdict struct {
	Checker string
	Status  Status
	Details []string
}

func (v Verdict) String() string {
	s := fmt.Sprintf("%-24s %s", v.Checker, v.Status)
	if len(v.Details) > 0 {
		s += ": " + v.Details[0]
		if len(v.Details) > 1 {
			s += fmt.Sprintf(" (and %d more)", len(v.Details)-1)
		}
	}
	return s
}

func verdict(checker string, details []string) Verdict {
	if len(details) > 0 {
		return Verdict{checker, Violation, details}
	}
	return Verdict{Checker: checker, Status: Pass}
}

// Options tune the checkers.
type Options struct {
	// LinearizabilityTimeout bounds Porcupine per key (0: 30 s).
	LinearizabilityTimeout time.Duration
	// DeadlineSlack is how late past its deadline an answer may come (timer and scheduling noise).
	DeadlineSlack time.Duration
}

// All runs every checker, in a fixed order.
func All(ops []history.Op, options Options) []Verdict {
	return []Verdict{
		Linearizable(ops, options.LinearizabilityTimeout),
		AcknowledgedWritesSurvive(ops),
		ReadYourWrites(ops),
		MonotonicReads(ops),
		WatchOrderedUnique(ops),
		WatchReliable(ops),
		WatchConverged(ops),
		Deadlines(ops, options.DeadlineSlack),
	}
}

func describe(op history.Op) string {
	s := fmt.Sprintf("process %d %s %q", op.Process, op.Kind, op.Key)
	if op.Expect != nil {
		s += fmt.Sprintf(" if revision %d", *op.Expect)
	}
	switch {
	case op.Kind == history.GetStrong || op.Kind == history.GetDefault:
		if op.Found {
			s += fmt.Sprintf(" -> %q@%d", op.Value, op.Revision)
		} else {
			s += " -> not found"
		}
	case op.IsWrite():
		if op.Kind != history.Delete {
			s += fmt.Sprintf(" %q", op.Value)
		}
		s += fmt.Sprintf(" -> %s", op.Outcome)
		if op.Revision > 0 {
			s += fmt.Sprintf("@%d", op.Revision)
		}
	}
	return s + fmt.Sprintf(" [%d..%d]", op.Invoke, op.Return)
}

// byInvoke returns the operations of the kinds asked for, in invocation order.
func byInvoke(ops []history.Op, keep func(history.Op) bool) []history.Op {
	var out []history.Op
	for _, op := range ops {
		if keep(op) {
			out = append(out, op)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Invoke < out[j].Invoke })
	return out
}

// writesByRevision indexes the writes whose revision is known (acknowledged ones).
func writesByRevision(ops []history.Op) map[uint64]history.Op {
	writes := map[uint64]history.Op{}
	for _, op := range ops {
		if op.IsWrite() && op.Outcome == history.OK && op.Revision > 0 {
			writes[op.Revision] = op
		}
	}
	return writes
}
