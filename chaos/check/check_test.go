package check

import (
	"strings"
	"testing"
	"time"

	"github.com/mesh/mesh-state/chaos/history"
)

func expect(rev uint64) *uint64 { return &rev }

func put(process int, key, value string, rev uint64, invoke, ret int64) history.Op {
	return history.Op{Process: process, Kind: history.Put, Key: key, Value: value, Revision: rev, Invoke: invoke, Return: ret, Outcome: history.OK}
}

func del(process int, key string, rev uint64, invoke, ret int64) history.Op {
	return history.Op{Process: process, Kind: history.Delete, Key: key, Revision: rev, Invoke: invoke, Return: ret, Outcome: history.OK}
}

func get(kind history.Kind, process int, key, value string, rev uint64, invoke, ret int64) history.Op {
	return history.Op{Process: process, Kind: kind, Key: key, Value: value, Found: value != "", Revision: rev, Invoke: invoke, Return: ret, Outcome: history.OK}
}

func final(key, value string, rev uint64) history.Op {
	op := get(history.GetStrong, 99, key, value, rev, 10_000, 10_001)
	op.Final = true
	return op
}

func event(watch string, kind history.Event, key, value string, rev uint64, at int64) history.Op {
	return history.Op{Kind: history.WatchEvent, Watch: watch, Event: kind, Key: key, Value: value, Revision: rev, Invoke: at, Return: at, Filter: "app.>"}
}

// correct is a history every checker passes: concurrent writes, an unknown put that did happen, a
// CAS that lost its race, reads, a watch from before the writes to its end after the final reads.
func correct() []history.Op {
	return []history.Op{
		event("w1", history.Current, "", "", 0, 1),
		put(1, "app.a", "a1", 1, 10, 20),
		put(2, "app.b", "b1", 2, 15, 25),
		event("w1", history.Changed, "app.a", "a1", 1, 21),
		event("w1", history.Changed, "app.b", "b1", 2, 26),
		get(history.GetStrong, 3, "app.a", "a1", 1, 30, 40),
		{Process: 1, Kind: history.CAS, Key: "app.a", Value: "a2", Expect: expect(1), Revision: 3, Invoke: 50, Return: 60, Outcome: history.OK, Deadline: 1000},
		{Process: 2, Kind: history.CAS, Key: "app.a", Value: "a3", Expect: expect(1), Invoke: 55, Return: 70, Outcome: history.Fail, Reason: "conflict", Deadline: 1000},
		event("w1", history.Changed, "app.a", "a2", 3, 61),
		get(history.GetDefault, 1, "app.a", "a2", 3, 80, 90),
		get(history.GetDefault, 1, "app.a", "a2", 3, 91, 95),
		del(2, "app.b", 4, 100, 110),
		event("w1", history.Deleted, "app.b", "", 4, 111),
		{Process: 4, Kind: history.Put, Key: "app.c", Value: "c1", Invoke: 120, Return: 500, Outcome: history.Unknown, Reason: "timeout"},
		event("w1", history.Changed, "app.c", "c1", 5, 130),
		get(history.GetStrong, 3, "app.c", "c1", 5, 140, 150),
		// A second watch, started late: its current values are the state at its newest revision.
		event("w2", history.Snapshot, "app.a", "a2", 3, 160),
		event("w2", history.Snapshot, "app.c", "c1", 5, 161),
		event("w2", history.Current, "", "", 0, 162),
		final("app.a", "a2", 3),
		final("app.b", "", 0),
		final("app.c", "c1", 5),
		event("w1", history.End, "", "", 0, 20_000),
		event("w2", history.End, "", "", 0, 20_000),
	}
}

func TestCorrectHistoryPasses(t *testing.T) {
	for _, v := range All(correct(), Options{}) {
		if v.Status != Pass {
			t.Errorf("%s", v)
		}
	}
}

func TestEachCheckerCatchesItsViolation(t *testing.T) {
	base := correct()
	cases := []struct {
		name    string
		checker func([]history.Op) Verdict
		ops     []history.Op
		want    string
	}{
		{"stale strong read", func(ops []history.Op) Verdict { return Linearizable(ops, 0) },
			append(base, get(history.GetStrong, 5, "app.a", "a1", 1, 200, 210)), `key "app.a"`},
		{"two creates of one key both succeed", func(ops []history.Op) Verdict { return Linearizable(ops, 0) },
			[]history.Op{
				{Process: 1, Kind: history.CAS, Key: "k", Value: "x", Expect: expect(0), Revision: 1, Invoke: 0, Return: 10, Outcome: history.OK},
				{Process: 2, Kind: history.CAS, Key: "k", Value: "y", Expect: expect(0), Revision: 2, Invoke: 5, Return: 15, Outcome: history.OK},
			}, `key "k"`},
		{"a read of a value never written", func(ops []history.Op) Verdict { return Linearizable(ops, 0) },
			[]history.Op{put(1, "k", "x", 1, 0, 10), get(history.GetStrong, 2, "k", "z", 1, 20, 30)}, `key "k"`},
		{"lost acknowledged put", AcknowledgedWritesSurvive,
			replaceFinal(base, final("app.a", "", 0)), `"a2" -> ok@3 [50..60] lost`},
		{"rolled back to an older revision", AcknowledgedWritesSurvive,
			replaceFinal(base, final("app.a", "a1", 1)), `lost: the final read`},
		{"undone delete", AcknowledgedWritesSurvive,
			replaceFinal(base, final("app.b", "b1", 2)), `app.b`},
		{"stale default read of one's own write", ReadYourWrites,
			append(base, get(history.GetDefault, 2, "app.b", "b1", 2, 115, 118)), "older than what the process had before: process 2 delete"},
		{"default read older than the process's own write", ReadYourWrites,
			append(base, get(history.GetDefault, 1, "app.a", "a1", 1, 96, 99)), "older than what the process had"},
		{"default reads going back", MonotonicReads,
			append(base, get(history.GetDefault, 3, "app.a", "a2", 3, 200, 210), get(history.GetDefault, 3, "app.a", "a1", 1, 220, 230)), "older than"},
		{"watch gap", WatchReliable,
			dropEvent(base, "w1", 2), "watch w1: missed process 2 put \"app.b\""},
		{"missed delete", WatchReliable,
			dropEvent(base, "w1", 4), "watch w1: missed process 2 delete"},
		{"current values lack a key", WatchReliable,
			dropEvent(base, "w2", 3), "watch w2: current values lack"},
		{"invented event", WatchReliable,
			append(base, event("w3", history.Changed, "app.a", "forged", 3, 70)), "is not the write at that revision"},
		{"duplicate delivery", WatchOrderedUnique,
			append(base, event("w1", history.Changed, "app.b", "b1", 2, 19_000)), "delivered twice"},
		{"out of order", WatchOrderedUnique,
			swap(base, 8, 12), "revision 3 (put \"app.a\") after 4"},
		{"viewer does not converge", WatchConverged,
			replaceFinal(base, final("app.c", "c2", 6)), `the final read has "c2"`},
		{"late answer", func(ops []history.Op) Verdict { return Deadlines(ops, time.Duration(0)) },
			append(base, history.Op{Process: 7, Kind: history.Put, Key: "app.d", Value: "d", Invoke: 0, Return: 5000, Outcome: history.OK, Deadline: 1000}), "against a deadline"},
		{"given up on", func(ops []history.Op) Verdict { return Deadlines(ops, time.Duration(0)) },
			append(base, history.Op{Process: 7, Kind: history.Put, Key: "app.d", Value: "d", Invoke: 0, Return: 900, Outcome: history.Unknown, Reason: "timeout", Deadline: 1000}), "(unknown) against a deadline"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if v := c.checker(base); v.Status != Pass {
				t.Fatalf("the correct history fails: %s", v)
			}
			v := c.checker(c.ops)
			if v.Status != Violation || !strings.Contains(strings.Join(v.Details, "\n"), c.want) {
				t.Fatalf("got %s %q, want a violation mentioning %q", v.Status, v.Details, c.want)
			}
		})
	}
}

// A write the runtime answered in time with `unavailable` is unknown (it may have landed) but answered.
func TestDeadlineAnsweredUnknown(t *testing.T) {
	ops := []history.Op{{Process: 7, Kind: history.Put, Key: "app.d", Value: "d", Invoke: 0, Return: 900, Outcome: history.Unknown, Reason: "unavailable", Deadline: 1000}}
	if v := Deadlines(ops, 0); v.Status != Pass {
		t.Fatalf("an answered unknown failed the deadline check: %s", v)
	}
}

func TestUnknownOutcomes(t *testing.T) {
	unknownPut := history.Op{Process: 1, Kind: history.Put, Key: "k", Value: "x", Invoke: 0, Return: 100, Outcome: history.Unknown}
	for name, ops := range map[string][]history.Op{
		"never happened":        {unknownPut, get(history.GetStrong, 2, "k", "", 0, 200, 210)},
		"happened late":         {unknownPut, get(history.GetStrong, 2, "k", "", 0, 200, 210), get(history.GetStrong, 2, "k", "x", 4, 300, 310)},
		"a cas it may have won": {unknownPut, {Process: 3, Kind: history.CAS, Key: "k", Value: "y", Expect: expect(4), Revision: 5, Invoke: 400, Return: 410, Outcome: history.OK}},
	} {
		if v := Linearizable(ops, 0); v.Status != Pass {
			t.Errorf("%s: %s", name, v)
		}
	}
	// But a value, once read, stays until a write replaces it.
	ops := []history.Op{unknownPut, get(history.GetStrong, 2, "k", "x", 4, 200, 210), get(history.GetStrong, 2, "k", "", 0, 300, 310)}
	if v := Linearizable(ops, 0); v.Status != Violation {
		t.Errorf("a value read then gone with no delete: %s", v)
	}
}

func TestSkippedWithoutFinalReads(t *testing.T) {
	var ops []history.Op
	for _, op := range correct() {
		if !op.Final {
			ops = append(ops, op)
		}
	}
	for _, v := range []Verdict{AcknowledgedWritesSurvive(ops), WatchConverged(ops)} {
		if v.Status != Skipped {
			t.Errorf("%s without final reads: %s", v.Checker, v.Status)
		}
	}
}

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		filter, key string
		want        bool
	}{
		{">", "a", true}, {">", "a.b", true}, {"a.>", "a", false}, {"a.>", "a.b.c", true},
		{"a.*", "a.b", true}, {"a.*", "a.b.c", false}, {"a.b", "a.b", true}, {"a.b", "a.c", false},
	} {
		if got := matches(c.filter, c.key); got != c.want {
			t.Errorf("matches(%q, %q) = %v", c.filter, c.key, got)
		}
	}
}

func replaceFinal(ops []history.Op, read history.Op) []history.Op {
	out := append([]history.Op(nil), ops...)
	for i, op := range out {
		if op.Final && op.Key == read.Key {
			out[i] = read
		}
	}
	return out
}

// dropEvent removes the watch's event with that revision.
func dropEvent(ops []history.Op, watch string, rev uint64) []history.Op {
	var out []history.Op
	for _, op := range ops {
		if !(op.Kind == history.WatchEvent && op.Watch == watch && op.Revision == rev) {
			out = append(out, op)
		}
	}
	return out
}

func swap(ops []history.Op, i, j int) []history.Op {
	out := append([]history.Op(nil), ops...)
	out[i], out[j] = out[j], out[i]
	return out
}
