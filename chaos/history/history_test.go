package history

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	zero := uint64(0)
	ops := []Op{
		{Process: 1, Kind: CAS, Key: "a", Value: "v1", Expect: &zero, Revision: 3, Invoke: 10, Return: 20, Outcome: OK, Deadline: 5_000_000_000},
		{Process: 2, Kind: GetStrong, Key: "a", Found: true, Value: "v1", Revision: 3, Invoke: 21, Return: 30, Outcome: OK, Final: true},
		{Process: 3, Kind: Delete, Key: "a", Invoke: 31, Return: 90, Outcome: Unknown, Reason: "timeout"},
		{Process: 9, Kind: WatchEvent, Watch: "w1", Event: Current, Filter: "a.>", Invoke: 40, Return: 40},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, op := range ops {
		if err := w.Write(op); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ops) || got[0].Expect == nil || *got[0].Expect != 0 || got[1] != ops[1] || got[3] != ops[3] {
		t.Fatalf("round trip: %+v", got)
	}
}

func TestReadRefuses(t *testing.T) {
	for name, line := range map[string]string{
		"unknown field":   `{"process":1,"op":"put","key":"a","invoke":1,"return":2,"outcome":"ok","colour":"red"}`,
		"unknown op":      `{"process":1,"op":"append","key":"a","invoke":1,"return":2,"outcome":"ok"}`,
		"no key":          `{"process":1,"op":"put","invoke":1,"return":2,"outcome":"ok"}`,
		"cas, no expect":  `{"process":1,"op":"cas","key":"a","invoke":1,"return":2,"outcome":"ok"}`,
		"bad outcome":     `{"process":1,"op":"put","key":"a","invoke":1,"return":2,"outcome":"maybe"}`,
		"return < invoke": `{"process":1,"op":"put","key":"a","invoke":3,"return":2,"outcome":"ok"}`,
		"bad event":       `{"process":1,"op":"watch-event","watch":"w","event":"gap","invoke":1,"return":1}`,
		"two values":      `{"process":1,"op":"put","key":"a","invoke":1,"return":2,"outcome":"ok"} {}`,
		"not json":        `put a 1`,
	} {
		_, err := Read(strings.NewReader("\n" + line + "\n"))
		var lineErr *LineError
		if !errors.As(err, &lineErr) || lineErr.Line != 2 {
			t.Errorf("%s: %v, want an error on line 2", name, err)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"process":1,"op":"put","key":"a","value":"x","revision":2,"invoke":1,"return":2,"outcome":"ok"}`))
	f.Add([]byte(`{"process":1,"op":"watch-event","watch":"w","event":"snapshot","key":"a","revision":1,"invoke":1,"return":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ops, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		// Whatever parses must validate and survive a round trip.
		var buf bytes.Buffer
		w := NewWriter(&buf)
		for _, op := range ops {
			if err := w.Write(op); err != nil {
				t.Fatalf("parsed op does not write: %+v: %v", op, err)
			}
		}
		again, err := Read(&buf)
		if err != nil || len(again) != len(ops) {
			t.Fatalf("round trip: %v (%d vs %d)", err, len(again), len(ops))
		}
	})
}
