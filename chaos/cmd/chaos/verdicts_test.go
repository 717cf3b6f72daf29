package main

import (
	"testing"

	"github.com/mesh/mesh-state/chaos/check"
	"github.com/mesh/mesh-state/chaos/history"
)

func TestWorkloadVerdict(t *testing.T) {
	ran := []history.Op{
		{Process: 1, Kind: history.Put, Key: "k", Value: "v", Revision: 1, Outcome: history.OK},
		{Process: 1, Kind: history.GetStrong, Key: "k", Found: true, Value: "v", Revision: 1, Outcome: history.OK, Final: true},
		{Process: 2, Kind: history.WatchEvent, Key: "k", Revision: 1, Outcome: history.OK},
	}
	tests := []struct {
		name string
		ops  []history.Op
		done string
		want check.Status
	}{
		{"a workload that ran", ran, `{"writers":[{"ok":1}],"convergenceMs":[3]}`, check.Pass},
		{"bundles that crashed at start: an empty history", nil, `{"writers":[null,null],"convergenceMs":[null,null],"keys":0}`, check.Violation},
		{"a history, but a writer that did not finish", ran, `{"writers":[null],"convergenceMs":[3]}`, check.Violation},
		{"no watch events", ran[:2], `{"writers":[{"ok":1}],"convergenceMs":[3]}`, check.Violation},
		{"a summary that is not JSON", ran, `done`, check.Violation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := workloadVerdict(tt.ops, tt.done); got.Status != tt.want {
				t.Fatalf("workloadVerdict = %v, want %v", got, tt.want)
			}
		})
	}
}
