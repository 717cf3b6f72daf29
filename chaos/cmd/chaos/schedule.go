package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Classes are the fault classes a run may draw from, in the order the schedule names them.
var Classes = []string{"kill", "pause", "partition", "lostfsync", "corrupt", "crash"}

// Fault is one scheduled fault: applied At (from the start of the workload), undone Hold later.
type Fault struct {
	At    time.Duration
	Hold  time.Duration
	Class string
	// Target: a node ("n2"), "leader" (the bucket stream's leader when the fault is applied) or
	// "follower" (a node that is not its leader).
	Target string
	// Partition: "isolate-leader", "majority-minority" (Groups) or "one-way" (From loses its packets to To).
	Kind     string
	Groups   [][]string
	From, To string
	// Corrupt: "flip" or "truncate", with the seed corrupt uses.
	Mode string
	Seed uint64
}

func (f Fault) String() string {
	s := fmt.Sprintf("%7.1fs %-9s", f.At.Seconds(), f.Class)
	switch f.Class {
	case "partition":
		switch f.Kind {
		case "majority-minority":
			s += fmt.Sprintf(" %s | %s", strings.Join(f.Groups[0], ","), strings.Join(f.Groups[1], ","))
		case "one-way":
			s += fmt.Sprintf(" one-way %s -x-> %s", f.From, f.To)
		default:
			s += " isolate the leader"
		}
	case "corrupt":
		s += fmt.Sprintf(" %s of a %s's newest block (seed %d)", f.Mode, f.Target, f.Seed)
	case "crash":
		s += " every node"
	default:
		s += " " + f.Target
	}
	return s + fmt.Sprintf(", held %.1fs", f.Hold.Seconds())
}

// Schedule derives every fault of a run from the seed alone: the same seed, classes, nodes and
// duration give the same schedule. Targets that depend on the cluster's state ("leader",
// "follower") are resolved when applied, and printed then.
func Schedule(seed uint64, classes []string, nodes int, duration time.Duration) []Fault {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo))) }
	names := make([]string, nodes)
	for i := range names {
		names[i] = fmt.Sprintf("n%d", i+1)
	}
	var faults []Fault
	// Five calm seconds first (the watches reach current), and room at the end for the last fault's heal.
	at := 5 * time.Second
	for {
		f := Fault{At: at, Class: classes[rng.IntN(len(classes))], Hold: between(3*time.Second, 8*time.Second)}
		if at+f.Hold > duration {
			break
		}
		anyNode := names[rng.IntN(nodes)]
		switch f.Class {
		case "kill", "pause":
			f.Target = anyNode
			if rng.IntN(2) == 0 {
				f.Target = "leader"
			}
		case "lostfsync":
			f.Target = anyNode
		case "corrupt":
			f.Target = "follower"
			f.Mode = []string{"flip", "truncate"}[rng.IntN(2)]
			f.Seed = rng.Uint64() % 1_000_000
		case "partition":
			f.Kind = []string{"isolate-leader", "majority-minority", "one-way"}[rng.IntN(3)]
			shuffled := append([]string(nil), names...)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			minority := (nodes - 1) / 2
			f.Groups = [][]string{shuffled[minority:], shuffled[:minority]}
			f.From, f.To = shuffled[0], shuffled[1]
		}
		faults = append(faults, f)
		at += f.Hold + between(3*time.Second, 8*time.Second)
	}
	return faults
}
