package main

import (
	"reflect"
	"testing"
	"time"
)

// A seed is the whole schedule: the same inputs give the same faults, another seed others, and every
// fault is of a class asked for and is undone within the duration.
func TestScheduleIsTheSeeds(t *testing.T) {
	classes := []string{"kill", "pause", "partition", "lostfsync", "corrupt", "crash"}
	a := Schedule(7, classes, 5, 10*time.Minute)
	if !reflect.DeepEqual(a, Schedule(7, classes, 5, 10*time.Minute)) {
		t.Fatal("seed 7 gave two schedules")
	}
	if reflect.DeepEqual(a, Schedule(8, classes, 5, 10*time.Minute)) {
		t.Fatal("seeds 7 and 8 gave the same schedule")
	}
	if len(a) < 20 {
		t.Fatalf("%d faults in 10 minutes", len(a))
	}
	for i, f := range a {
		if !contains(classes, f.Class) || f.At+f.Hold > 10*time.Minute || (i > 0 && f.At < a[i-1].At+a[i-1].Hold) {
			t.Fatalf("fault %d out of bounds: %s", i, f)
		}
		if f.Class == "partition" && (len(f.Groups[0]) != 3 || len(f.Groups[1]) != 2 || f.From == f.To) {
			t.Fatalf("fault %d: a bad partition of five nodes: %s", i, f)
		}
	}
	if got := Schedule(7, []string{"kill"}, 3, 4*time.Second); len(got) != 0 {
		t.Fatalf("a run shorter than the calm start has faults: %v", got)
	}
}
