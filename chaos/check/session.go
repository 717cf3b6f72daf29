package check

import (
	"fmt"
	"sort"

	"github.com/mesh/mesh-state/chaos/history"
)

func sorted(details []string) []string {
	sort.Strings(details)
	return details
}

type observation struct {
	op      history.Op
	deleted bool // the observation was a delete (own) or a read that found nothing
}

// sessionCheck walks each process's operations in order, remembering per key the newest revision
// the process has `learned` (from its own writes, or from its reads), and judges each default read.
func sessionCheck(name string, ops []history.Op, learn func(history.Op) bool) Verdict {
	perProcess := map[int][]history.Op{}
	for _, op := range byInvoke(ops, func(op history.Op) bool { return op.Kind != history.WatchEvent && op.Outcome == history.OK }) {
		perProcess[op.Process] = append(perProcess[op.Process], op)
	}
	var details []string
	for _, session := range perProcess {
		seen := map[string]observation{}
		for _, op := range session {
			if op.Kind == history.GetDefault {
				if prior, ok := seen[op.Key]; ok && prior.op.Revision > 0 {
					if problem := staleness(ops, prior, op); problem != "" {
						details = append(details, problem)
					}
				}
			}
			if !learn(op) || op.Revision == 0 {
				continue
			}
			if prior, ok := seen[op.Key]; !ok || op.Revision >= prior.op.Revision {
				seen[op.Key] = observation{op: op, deleted: op.Kind == history.Delete || (!op.IsWrite() && !op.Found)}
			}
		}
	}
	return verdict(name, sorted(details))
}

// staleness says what is wrong with a read that comes after the process learned prior, if anything.
func staleness(ops []history.Op, prior observation, read history.Op) string {
	switch {
	case read.Found && read.Revision > 0 && read.Revision < prior.op.Revision:
		return fmt.Sprintf("%s is older than what the process had before: %s", describe(read), describe(prior.op))
	case read.Found && read.Revision > 0 && read.Revision == prior.op.Revision && prior.deleted:
		return fmt.Sprintf("%s brings back what the process saw deleted: %s", describe(read), describe(prior.op))
	case !read.Found && !prior.deleted && !mayHaveDeleted(ops, read.Key, prior.op.Revision, read.Return):
		return fmt.Sprintf("%s, but the process had %s and no delete could have followed", describe(read), describe(prior.op))
	}
	return ""
}

// ReadYourWrites checks that a default read never shows a process less than its own acknowledged writes.
func ReadYourWrites(ops []history.Op) Verdict {
	return sessionCheck("read-your-writes", ops, func(op history.Op) bool { return op.IsWrite() })
}

// MonotonicReads checks that a process's default reads of a key never go back in revision (nor
// un-find a key no delete could have removed) after any of its reads.
func MonotonicReads(ops []history.Op) Verdict {
	return sessionCheck("monotonic-reads", ops, func(op history.Op) bool {
		return op.Kind == history.GetDefault || op.Kind == history.GetStrong
	})
}
