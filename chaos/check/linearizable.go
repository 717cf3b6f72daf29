package check

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/mesh/mesh-state/chaos/history"
)

// keyState is one key in the model. When the last write's revision is not known (an unknown
// outcome, or a driver that did not record it), revKnown is false and the revision is only known to
// be above floor.
type keyState struct {
	present  bool
	value    string
	rev      uint64
	revKnown bool
	floor    uint64
}

type condition int

const (
	no condition = iota
	yes
	maybe
)

// holds says whether a write expecting revision expect could apply to s.
func (s keyState) holds(expect *uint64) condition {
	switch {
	case expect == nil:
		return yes
	case *expect == 0:
		return map[bool]condition{true: no, false: yes}[s.present]
	case s.revKnown:
		return map[bool]condition{true: yes, false: no}[s.rev == *expect]
	case *expect > s.floor:
		return maybe
	default:
		return no
	}
}

func (s keyState) known() uint64 {
	if s.revKnown {
		return s.rev
	}
	return s.floor
}

// after returns the state a write leaves; rev 0 means the write's revision is not known.
func (s keyState) after(op history.Op, rev uint64) (keyState, bool) {
	next := keyState{present: op.Kind != history.Delete, rev: rev, revKnown: rev > 0}
	if next.present {
		next.value = op.Value
	}
	if rev == 0 {
		next.floor = s.known()
		return next, true
	}
	// Revisions are the stream's sequence: each write to a key gets a higher one than the last.
	return next, rev > s.known()
}

func step(state, input, output any) []any {
	s := state.(keyState)
	call := input.(history.Op)
	result := output.(history.Op)
	switch {
	case call.IsWrite():
		condition := s.holds(call.Expect)
		switch result.Outcome {
		case history.OK:
			if condition == no {
				return nil
			}
			if next, ok := s.after(call, result.Revision); ok {
				return []any{next}
			}
			return nil
		case history.Fail: // only "conflict" failures reach the model
			if condition == yes {
				return nil
			}
			return []any{s}
		default: // unknown: it may have applied (at its linearization point), or never
			if condition == no {
				return []any{s}
			}
			next, _ := s.after(call, 0)
			return []any{s, next}
		}
	default: // get-strong, ok
		if result.Found != s.present || (s.present && result.Value != s.value) {
			return nil
		}
		if result.Revision == 0 || !s.present {
			return []any{s}
		}
		if s.revKnown {
			if result.Revision != s.rev {
				return nil
			}
			return []any{s}
		}
		if result.Revision <= s.floor {
			return nil
		}
		return []any{keyState{present: true, value: s.value, rev: result.Revision, revKnown: true}}
	}
}

var keyModel = (&porcupine.NondeterministicModel{
	Init:  func() []any { return []any{keyState{}} },
	Step:  step,
	Equal: func(a, b any) bool { return a.(keyState) == b.(keyState) },
	DescribeOperation: func(input, output any) string {
		op := input.(history.Op)
		op.Outcome, op.Revision, op.Found, op.Return = output.(history.Op).Outcome, output.(history.Op).Revision, output.(history.Op).Found, output.(history.Op).Return
		if op.Kind == history.GetStrong {
			op.Value = output.(history.Op).Value
		}
		return describe(op)
	},
	DescribeState: func(state any) string { return fmt.Sprintf("%+v", state.(keyState)) },
}).ToModel()

// porcupineOps turns a key's operations into Porcupine's: a definite failure other than a failed
// condition never happened and is left out; an unknown outcome never returns (it may take effect at
// any time after its invocation, or not at all); a read that did not succeed tells nothing.
func porcupineOps(ops []history.Op) []porcupine.Operation {
	var out []porcupine.Operation
	for _, op := range ops {
		switch {
		case op.Kind == history.GetStrong && op.Outcome == history.OK:
		case op.IsWrite() && op.Outcome == history.OK:
		case op.IsWrite() && op.Outcome == history.Unknown:
		case op.IsWrite() && op.Outcome == history.Fail && op.Reason == "conflict" && op.Expect != nil:
		default:
			continue
		}
		ret := op.Return
		if op.Outcome == history.Unknown {
			ret = math.MaxInt64
		}
		out = append(out, porcupine.Operation{ClientId: op.Process, Input: op, Call: op.Invoke, Output: op, Return: ret})
	}
	return out
}

// Linearizable checks, key by key with Porcupine, that strong reads, puts, CAS and deletes could have
// happened one at a time in an order that respects real time.
func Linearizable(ops []history.Op, timeout time.Duration) Verdict {
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	perKey := map[string][]history.Op{}
	for _, op := range ops {
		if op.IsWrite() || op.Kind == history.GetStrong {
			perKey[op.Key] = append(perKey[op.Key], op)
		}
	}
	keys := make([]string, 0, len(perKey))
	for key := range perKey {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	var details, undecided []string
	for _, key := range keys {
		result, info := porcupine.CheckOperationsVerbose(keyModel, porcupineOps(perKey[key]), timeout)
		switch result {
		case porcupine.Illegal:
			details = append(details, fmt.Sprintf("key %q: no linearization of %d operations%s", key, len(perKey[key]), longestPrefix(info)))
		case porcupine.Unknown:
			undecided = append(undecided, fmt.Sprintf("key %q: Porcupine timed out after %s", key, timeout))
		}
	}
	if len(details) == 0 && len(undecided) > 0 {
		return Verdict{"linearizable", Undecided, undecided}
	}
	return verdict("linearizable", details)
}

// longestPrefix names where the longest partial linearization stopped, for the report.
func longestPrefix(info porcupine.LinearizationInfo) string {
	partials := info.PartialLinearizationsOperations()
	if len(partials) == 0 || len(partials[0]) == 0 {
		return ""
	}
	longest := partials[0][0]
	for _, p := range partials[0] {
		if len(p) > len(longest) {
			longest = p
		}
	}
	return fmt.Sprintf("; the longest linearizable prefix has %d", len(longest))
}
