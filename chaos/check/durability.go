package check

import (
	"fmt"

	"github.com/mesh/mesh-state/chaos/history"
)

// finalReads returns, per key, the last successful strong read marked final.
func finalReads(ops []history.Op) map[string]history.Op {
	final := map[string]history.Op{}
	for _, op := range ops {
		if op.Final && op.Kind == history.GetStrong && op.Outcome == history.OK {
			if last, ok := final[op.Key]; !ok || op.Invoke >= last.Invoke {
				final[op.Key] = op
			}
		}
	}
	return final
}

// mayHaveDeleted says whether some delete of key, other than a known one at or below revision r,
// could have taken effect before `before`: an acknowledged one above r, or one whose outcome or
// revision is not known.
func mayHaveDeleted(ops []history.Op, key string, r uint64, before int64) bool {
	for _, op := range ops {
		if op.Kind != history.Delete || op.Key != key || op.Invoke >= before {
			continue
		}
		if op.Outcome == history.Unknown || (op.Outcome == history.OK && (op.Revision > r || op.Revision == 0)) {
			return true
		}
	}
	return false
}

// mayHaveWritten says whether a write of value to key whose revision is not known could have
// happened (an unknown outcome, or an acknowledged write the driver recorded without a revision).
func mayHaveWritten(ops []history.Op, key, value string) bool {
	for _, op := range ops {
		if (op.Kind == history.Put || op.Kind == history.CAS) && op.Key == key && op.Value == value &&
			(op.Outcome == history.Unknown || (op.Outcome == history.OK && op.Revision == 0)) {
			return true
		}
	}
	return false
}

// AcknowledgedWritesSurvive checks the final reads: every acknowledged write is present or
// superseded by a later one, and no acknowledged delete is undone (a deleted value never comes back).
func AcknowledgedWritesSurvive(ops []history.Op) Verdict {
	const name = "acknowledged-writes"
	final := finalReads(ops)
	if len(final) == 0 {
		return Verdict{Checker: name, Status: Skipped, Details: []string{"no final strong reads in the history"}}
	}
	writes := writesByRevision(ops)
	latest := map[string]history.Op{}
	for _, w := range writes {
		if last, ok := latest[w.Key]; !ok || w.Revision > last.Revision {
			latest[w.Key] = w
		}
	}
	var details []string
	for key, read := range final {
		last, acked := latest[key]
		switch {
		case read.Found && read.Revision > 0:
			if acked && read.Revision < last.Revision {
				details = append(details, fmt.Sprintf("%s lost: the final read %s", describe(last), describe(read)))
				continue
			}
			if w, ok := writes[read.Revision]; ok {
				if w.Key != key || w.Kind == history.Delete || w.Value != read.Value {
					details = append(details, fmt.Sprintf("the final read %s does not match the write at that revision: %s", describe(read), describe(w)))
				}
			} else if !mayHaveWritten(ops, key, read.Value) {
				details = append(details, fmt.Sprintf("the final read %s comes from no write in the history", describe(read)))
			}
		case read.Found:
			if !mayHaveWritten(ops, key, read.Value) && (!acked || last.Value != read.Value) {
				ok := false
				for _, w := range writes {
					ok = ok || (w.Key == key && w.Kind != history.Delete && w.Value == read.Value && (!acked || w.Revision >= last.Revision || last.Kind != history.Delete))
				}
				if !ok {
					details = append(details, fmt.Sprintf("the final read %s comes from no write after the last acknowledged one", describe(read)))
				}
			}
		default: // not found
			if acked && last.Kind != history.Delete && !mayHaveDeleted(ops, key, last.Revision, read.Invoke) {
				details = append(details, fmt.Sprintf("%s lost: the final read finds no key", describe(last)))
			}
		}
	}
	return verdict(name, sorted(details))
}
