package check

import (
	"fmt"
	"time"

	"github.com/mesh/mesh-state/chaos/history"
)

// Deadlines checks that every request with a deadline was answered (ok, or a refusal) within it:
// an unknown outcome is a request the client gave up on, which is itself a late answer.
func Deadlines(ops []history.Op, slack time.Duration) Verdict {
	const name = "deadlines"
	var details []string
	checked := 0
	for _, op := range ops {
		if op.Kind == history.WatchEvent || op.Deadline == 0 {
			continue
		}
		checked++
		took := op.Return - op.Invoke
		if op.Outcome == history.Unknown || took > op.Deadline+slack.Nanoseconds() {
			details = append(details, fmt.Sprintf("%s took %s (%s) against a deadline of %s", describe(op), time.Duration(took), op.Outcome, time.Duration(op.Deadline)))
		}
	}
	if checked == 0 {
		return Verdict{Checker: name, Status: Skipped, Details: []string{"no operation carries a deadline"}}
	}
	return verdict(name, details)
}
