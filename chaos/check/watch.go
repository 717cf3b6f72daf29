package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mesh/mesh-state/chaos/history"
)

// watch is one watch's events in delivery (file) order.
type watch struct {
	id      string
	filter  string
	events  []history.Op
	current int // index of the current marker, -1 if none
	end     int // index of the end event, -1 if none
}

func watches(ops []history.Op) []*watch {
	byID := map[string]*watch{}
	var order []*watch
	for _, op := range ops {
		if op.Kind != history.WatchEvent {
			continue
		}
		w, ok := byID[op.Watch]
		if !ok {
			w = &watch{id: op.Watch, current: -1, end: -1}
			byID[op.Watch] = w
			order = append(order, w)
		}
		if w.filter == "" && op.Filter != "" {
			w.filter = op.Filter
		}
		switch op.Event {
		case history.Current:
			if w.current < 0 {
				w.current = len(w.events)
			}
		case history.End:
			if w.end < 0 {
				w.end = len(w.events)
			}
		}
		w.events = append(w.events, op)
	}
	for _, w := range order {
		if w.filter == "" {
			w.filter = ">"
		}
	}
	return order
}

// matches applies a NATS subject filter (`*` one token, `>` the rest) to a key.
func matches(filter, key string) bool {
	f, k := strings.Split(filter, "."), strings.Split(key, ".")
	for i, token := range f {
		if token == ">" {
			return len(k) > i
		}
		if i >= len(k) || (token != "*" && token != k[i]) {
			return false
		}
	}
	return len(f) == len(k)
}

// WatchOrderedUnique checks that each watch delivers revisions in increasing order, none twice.
func WatchOrderedUnique(ops []history.Op) Verdict {
	var details []string
	for _, w := range watches(ops) {
		seen := map[uint64]bool{}
		var last uint64
		for _, e := range w.events {
			if e.Revision == 0 {
				continue
			}
			switch {
			case seen[e.Revision]:
				details = append(details, fmt.Sprintf("watch %s: revision %d (%s %q) delivered twice", w.id, e.Revision, e.Event, e.Key))
			case e.Revision < last:
				details = append(details, fmt.Sprintf("watch %s: revision %d (%s %q) after %d", w.id, e.Revision, e.Event, e.Key, last))
			}
			seen[e.Revision] = true
			last = max(last, e.Revision)
		}
	}
	return verdict("watch-ordered-unique", details)
}

// WatchReliable checks, for each watch that reached its current marker, against the acknowledged
// writes: every event is a write that happened (same key, value, kind); the current values are the
// state at the newest revision among them; and no acknowledged change after it is missed, up to the
// watch's end (or the newest revision it delivered).
func WatchReliable(ops []history.Op) Verdict {
	writes := writesByRevision(ops)
	var details []string
	for _, w := range watches(ops) {
		details = append(details, w.inventedEvents(writes)...)
		if w.current < 0 {
			continue
		}
		details = append(details, w.missed(ops, writes)...)
	}
	return verdict("watch-reliable", details)
}

func (w *watch) inventedEvents(writes map[uint64]history.Op) []string {
	var details []string
	for _, e := range w.events {
		write, ok := writes[e.Revision]
		if e.Revision == 0 || !ok {
			continue
		}
		isDelete := e.Event == history.Deleted
		if write.Key != e.Key || (write.Kind == history.Delete) != isDelete || (!isDelete && write.Value != e.Value) {
			details = append(details, fmt.Sprintf("watch %s: %s %q=%q@%d is not the write at that revision: %s", w.id, e.Event, e.Key, e.Value, e.Revision, describe(write)))
		}
	}
	return details
}

func (w *watch) missed(ops []history.Op, writes map[uint64]history.Op) []string {
	var snapshotTop, lastDelivered, firstAfter uint64
	delivered := map[uint64]bool{}
	for i, e := range w.events {
		if e.Revision == 0 {
			continue
		}
		delivered[e.Revision] = true
		lastDelivered = max(lastDelivered, e.Revision)
		if i < w.current {
			snapshotTop = max(snapshotTop, e.Revision)
		} else if firstAfter == 0 {
			firstAfter = e.Revision
		}
	}
	// Up to where must the watch have delivered? Its end: every write acknowledged before it.
	until := lastDelivered
	if w.end >= 0 {
		for rev, write := range writes {
			if write.Return < w.events[w.end].Invoke && matches(w.filter, write.Key) {
				until = max(until, rev)
			}
		}
	}
	if firstAfter == 0 {
		firstAfter = until + 1
	}
	revisions := make([]uint64, 0, len(writes))
	for rev, write := range writes {
		if matches(w.filter, write.Key) && rev <= until {
			revisions = append(revisions, rev)
		}
	}
	sort.Slice(revisions, func(i, j int) bool { return revisions[i] < revisions[j] })

	var details []string
	// The current values against the acknowledged state at snapshotTop.
	held := w.stateBefore(w.current)
	truth := map[string]history.Op{}
	for _, rev := range revisions {
		if rev <= snapshotTop {
			truth[writes[rev].Key] = writes[rev]
		}
	}
	for key, write := range truth {
		got, ok := held[key]
		switch {
		case write.Kind == history.Delete && ok && got.Revision < write.Revision:
			details = append(details, fmt.Sprintf("watch %s: current values hold %q@%d, deleted by %s", w.id, key, got.Revision, describe(write)))
		case write.Kind != history.Delete && !ok && !mayHaveDeleted(ops, key, write.Revision, 1<<62):
			details = append(details, fmt.Sprintf("watch %s: current values lack %s", w.id, describe(write)))
		case write.Kind != history.Delete && ok && got.Revision < write.Revision:
			details = append(details, fmt.Sprintf("watch %s: current values hold %q@%d, older than %s", w.id, key, got.Revision, describe(write)))
		}
	}
	// Every change after the current values.
	for _, rev := range revisions {
		write := writes[rev]
		if rev <= snapshotTop || delivered[rev] {
			continue
		}
		if write.Kind == history.Delete {
			if state := w.stateUpTo(rev); state[write.Key].Revision > 0 {
				details = append(details, fmt.Sprintf("watch %s: missed %s while holding the key", w.id, describe(write)))
			}
			continue
		}
		if rev < firstAfter && supersededByDelete(writes, write, firstAfter) {
			continue // written and deleted before the watch began: never current, never a change
		}
		details = append(details, fmt.Sprintf("watch %s: missed %s", w.id, describe(write)))
	}
	return details
}

// supersededByDelete says whether the newest acknowledged write of w's key below `below` is a delete after w.
func supersededByDelete(writes map[uint64]history.Op, w history.Op, below uint64) bool {
	var newest history.Op
	for rev, other := range writes {
		if other.Key == w.Key && rev > w.Revision && rev < below && rev > newest.Revision {
			newest = other
		}
	}
	return newest.Kind == history.Delete
}

// stateBefore is the watcher's view after its first n events.
func (w *watch) stateBefore(n int) map[string]history.Op {
	held := map[string]history.Op{}
	for _, e := range w.events[:n] {
		switch e.Event {
		case history.Snapshot, history.Changed:
			held[e.Key] = e
		case history.Deleted:
			delete(held, e.Key)
		}
	}
	return held
}

// stateUpTo is the watcher's view from the events below revision rev.
func (w *watch) stateUpTo(rev uint64) map[string]history.Op {
	n := 0
	for n < len(w.events) && (w.events[n].Revision == 0 || w.events[n].Revision < rev) {
		n++
	}
	return w.stateBefore(n)
}

// WatchConverged checks that every watch the driver ended after healing holds exactly the final
// state: the keys the final strong reads found, with their values, and none they did not.
func WatchConverged(ops []history.Op) Verdict {
	const name = "watch-converged"
	final := finalReads(ops)
	var details []string
	judged := 0
	for _, w := range watches(ops) {
		if w.end < 0 || len(final) == 0 {
			continue
		}
		judged++
		held := w.stateBefore(w.end)
		for key, read := range final {
			if !matches(w.filter, key) {
				continue
			}
			got, ok := held[key]
			switch {
			case read.Found && !ok:
				details = append(details, fmt.Sprintf("watch %s ends without %q, which the final read finds (%q)", w.id, key, read.Value))
			case read.Found && got.Value != read.Value:
				details = append(details, fmt.Sprintf("watch %s ends with %q=%q, the final read has %q", w.id, key, got.Value, read.Value))
			case !read.Found && ok:
				details = append(details, fmt.Sprintf("watch %s ends holding %q=%q, which the final read does not find", w.id, key, got.Value))
			}
		}
		for key := range held {
			if _, ok := final[key]; !ok {
				details = append(details, fmt.Sprintf("watch %s ends holding %q, which no final read covered", w.id, key))
			}
		}
	}
	if judged == 0 {
		return Verdict{Checker: name, Status: Skipped, Details: []string{"no watch ended after final strong reads"}}
	}
	return verdict(name, sorted(details))
}
