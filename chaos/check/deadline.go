package check

import (
	"fmt"
	"time"

	"github.com/mesh/mesh-state/chaos/history"
)

// Deadlines checks that every request with a deadline was answered within it: an unknown outcome
// with the driver's reason "timeout" is a request the client gave up on, which is itself a late
// answer; an unknown the runtime gave a reason for (a write answered `unavailable` may still have
// landed) was answered, and only its time counts.
// GaveUp is the reason a driver records when it stopped waiting for an answer.
const GaveUp = "timeout"

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
		if (op.Outcome == history.Unknown && op.Reason == GaveUp) || took > op.Deadline+slack.Nanoseconds() {
			details = append(details, fmt.Sprintf("%s took %s (%s) against a deadline of %s", describe(op), time.Duration(took), op.Outcome, time.Duration(op.Deadline)))
		}
	}
	if checked == 0 {
		return Verdict{Checker: name, Status: Skipped, Details: []string{"no operation carries a deadline"}}
	}
	return verdict(name, details)
}
