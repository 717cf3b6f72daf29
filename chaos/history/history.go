// Package history is the record of a fault run: one operation per line (JSONL), written by the driver
// while it drives and read by the checkers afterwards. chaos/README.md documents the format.
package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Kind is what an operation did.
type Kind string

const (
	Put        Kind = "put"         // an unconditional write
	CAS        Kind = "cas"         // a write only if the key's revision is Expect (0: only if absent)
	Delete     Kind = "delete"      // a delete, conditional when Expect is set
	GetStrong  Kind = "get-strong"  // a read that must be linearizable
	GetDefault Kind = "get-default" // a read that may be stale, within session guarantees
	WatchEvent Kind = "watch-event" // one event a watch delivered (Watch, Event)
)

// Outcome is how an operation ended.
type Outcome string

const (
	OK      Outcome = "ok"      // it happened, and Return is when the client heard so
	Fail    Outcome = "fail"    // it certainly did not happen (Reason says why; "conflict" for a failed condition)
	Unknown Outcome = "unknown" // it may have happened, at any time after Invoke
)

// Event is the kind of a watch event.
type Event string

const (
	Snapshot Event = "snapshot" // a current value, before the current marker
	Current  Event = "current"  // the end of the current values
	Changed  Event = "put"      // a value written after the marker
	Deleted  Event = "delete"   // a key deleted (after the marker, or one the watcher held)
	End      Event = "end"      // the driver stopped the watch after healing: its view is final
)

// Op is one line of a history.
type Op struct {
	Process int    `json:"process"` // one operation at a time per process; a new id after an unknown outcome
	Kind    Kind   `json:"op"`
	Key     string `json:"key,omitempty"`
	// Value is what a write wrote or what a found read read.
	Value string `json:"value,omitempty"`
	// Found says whether a read found the key (reads only).
	Found bool `json:"found,omitempty"`
	// Revision is the revision a write was given, a read read, or an event carries; 0 when not known.
	Revision uint64 `json:"revision,omitempty"`
	// Expect is a cas's (or conditional delete's) expected revision; 0 means "only if absent".
	Expect  *uint64 `json:"expect,omitempty"`
	Invoke  int64   `json:"invoke"` // ns, one clock for the whole history
	Return  int64   `json:"return"` // ns; for unknown, when the client gave up
	Outcome Outcome `json:"outcome"`
	Reason  string  `json:"reason,omitempty"`
	// Deadline is the request's own deadline, ns after Invoke (0: none).
	Deadline int64 `json:"deadline,omitempty"`
	// Final marks the strong reads made after healing and quiescence: the final state.
	Final bool `json:"final,omitempty"`
	// Watch names the watch a watch-event belongs to; Filter is its key filter (on its first event).
	Watch  string `json:"watch,omitempty"`
	Event  Event  `json:"event,omitempty"`
	Filter string `json:"filter,omitempty"`
}

// IsWrite says whether the operation changes a key.
func (o Op) IsWrite() bool { return o.Kind == Put || o.Kind == CAS || o.Kind == Delete }

// LineError says which line of a history is wrong.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("history line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// MaxLine bounds one line, so a broken file cannot make the reader hold it whole.
const MaxLine = 1 << 20

// Read parses a history strictly: unknown fields, unknown kinds and missing fields are errors.
func Read(r io.Reader) ([]Op, error) {
	lines := bufio.NewScanner(r)
	lines.Buffer(make([]byte, 0, 64*1024), MaxLine)
	var ops []Op
	for n := 1; lines.Scan(); n++ {
		line := bytes.TrimSpace(lines.Bytes())
		if len(line) == 0 {
			continue
		}
		decoder := json.NewDecoder(bytes.NewReader(line))
		decoder.DisallowUnknownFields()
		var op Op
		if err := decoder.Decode(&op); err != nil {
			return nil, &LineError{n, err}
		}
		if decoder.More() {
			return nil, &LineError{n, errors.New("more than one JSON value")}
		}
		if err := op.Validate(); err != nil {
			return nil, &LineError{n, err}
		}
		ops = append(ops, op)
	}
	if err := lines.Err(); err != nil {
		return nil, err
	}
	return ops, nil
}

// Validate checks the fields an operation of its kind needs.
func (o Op) Validate() error {
	switch o.Kind {
	case Put, CAS, Delete, GetStrong, GetDefault:
		if o.Key == "" {
			return errors.New("key is required")
		}
		if o.Kind == CAS && o.Expect == nil {
			return errors.New("cas needs expect")
		}
	case WatchEvent:
		if o.Watch == "" {
			return errors.New("watch-event needs watch")
		}
		switch o.Event {
		case Snapshot, Changed, Deleted:
			if o.Key == "" {
				return fmt.Errorf("watch event %q needs key", o.Event)
			}
		case Current, End:
		default:
			return fmt.Errorf("unknown watch event %q", o.Event)
		}
		return nil
	default:
		return fmt.Errorf("unknown op %q", o.Kind)
	}
	switch o.Outcome {
	case OK, Fail, Unknown:
	default:
		return fmt.Errorf("unknown outcome %q", o.Outcome)
	}
	if o.Return < o.Invoke {
		return errors.New("return before invoke")
	}
	return nil
}

// Writer appends operations to a history; it is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	out io.Writer
}

// NewWriter writes lines to out.
func NewWriter(out io.Writer) *Writer { return &Writer{out: out} }

// Write appends one operation as one line.
func (w *Writer) Write(op Op) error {
	if err := op.Validate(); err != nil {
		return err
	}
	line, err := json.Marshal(op)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.out.Write(append(line, '\n'))
	return err
}
