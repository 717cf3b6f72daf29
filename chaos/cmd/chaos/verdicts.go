package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/mesh/mesh-state/chaos/check"
	"github.com/mesh/mesh-state/chaos/history"
	"github.com/mesh/mesh-state/chaos/netns"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

func concatenate(dir, to string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var all []byte
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		all = append(all, data...)
	}
	return os.WriteFile(to, all, 0o644)
}

// leftBehind lists namespaces with the run's prefix, mounts of its stores and live processes it started.
func leftBehind(prefix string, mounts []string, pids []int) []string {
	var found []string
	if names, err := netns.List(context.Background()); err == nil {
		for _, name := range names {
			if strings.HasPrefix(name, prefix) {
				found = append(found, "namespace "+name)
			}
		}
	}
	if data, err := os.ReadFile("/proc/mounts"); err == nil {
		for _, m := range mounts {
			if strings.Contains(string(data), " "+m+" ") {
				found = append(found, "mount "+m)
			}
		}
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(stat), ") Z ") {
				found = append(found, fmt.Sprintf("process %d", pid))
			}
		}
	}
	return found
}

// finalReadsVerdict: every key with an acknowledged write has a final read. Without one the durability
// and convergence checkers would skip the key, and a bucket lost whole (every read refused) would pass.
// workloadVerdict refuses a run whose workload did not do its work (a bundle that crashed at start, a history
// with no acknowledged write, no final read or no watch event): every other checker passes such a run vacuously.
// It is never a known finding: a run that did nothing proves nothing.
func workloadVerdict(ops []history.Op, doneRaw string) check.Verdict {
	var done struct {
		Writers       []json.RawMessage `json:"writers"`
		ConvergenceMs []json.RawMessage `json:"convergenceMs"`
	}
	var problems []string
	if err := json.Unmarshal([]byte(doneRaw), &done); err != nil {
		problems = append(problems, "the workload's summary is not JSON: "+err.Error())
	}
	for i, w := range done.Writers {
		if string(w) == "null" {
			problems = append(problems, fmt.Sprintf("writer %d did not finish (see workload.log)", i))
		}
	}
	for i, v := range done.ConvergenceMs {
		if string(v) == "null" {
			problems = append(problems, fmt.Sprintf("viewer %d did not converge or did not run (see workload.log)", i))
		}
	}
	writes, finals, events := 0, 0, 0
	for _, op := range ops {
		switch {
		case op.IsWrite() && op.Outcome == history.OK:
			writes++
		case op.Final && op.Outcome == history.OK:
			finals++
		case op.Kind == history.WatchEvent:
			events++
		}
	}
	for what, n := range map[string]int{"acknowledged writes": writes, "final strong reads": finals, "watch events": events} {
		if n == 0 {
			problems = append(problems, "the history holds no "+what)
		}
	}
	sort.Strings(problems)
	if len(problems) == 0 {
		return check.Verdict{Checker: "workload-ran", Status: check.Pass}
	}
	return check.Verdict{Checker: "workload-ran", Status: check.Violation, Details: problems}
}

func finalReadsVerdict(ops []history.Op) check.Verdict {
	written, read := map[string]bool{}, map[string]bool{}
	for _, op := range ops {
		if op.IsWrite() && op.Outcome == history.OK {
			written[op.Key] = true
		}
		if op.Final && op.Outcome == history.OK {
			read[op.Key] = true
		}
	}
	var missing []string
	for key := range written {
		if !read[key] {
			missing = append(missing, fmt.Sprintf("key %q had acknowledged writes and no final read (see workload.log)", key))
		}
	}
	sort.Strings(missing)
	if len(missing) == 0 {
		return check.Verdict{Checker: "final-reads", Status: check.Pass}
	}
	return check.Verdict{Checker: "final-reads", Status: check.Violation, Details: missing}
}

func leftBehindVerdict(found []string) check.Verdict {
	if len(found) == 0 {
		return check.Verdict{Checker: "nothing-left-behind", Status: check.Pass}
	}
	return check.Verdict{Checker: "nothing-left-behind", Status: check.Violation, Details: found}
}
