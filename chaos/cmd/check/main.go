// Command check reads a history file and prints one verdict line per checker. It exits 1 when a
// checker finds a violation, 2 when the history cannot be read, 0 otherwise (passes, skips and
// undecided linearizability, each printed).
//
//	check [-timeout 30s] [-deadline-slack 50ms] history.jsonl
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mesh/mesh-state/chaos/check"
	"github.com/mesh/mesh-state/chaos/history"
)

func main() {
	var options check.Options
	flag.DurationVar(&options.LinearizabilityTimeout, "timeout", 0, "Porcupine's budget per key (default 30s)")
	flag.DurationVar(&options.DeadlineSlack, "deadline-slack", 0, "how late past its deadline an answer may come")
	verbose := flag.Bool("v", false, "print every detail of a violation, not only the first")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: check [-timeout D] [-deadline-slack D] [-v] history.jsonl")
		os.Exit(2)
	}
	file, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "check:", err)
		os.Exit(2)
	}
	ops, err := history.Read(file)
	file.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "check:", err)
		os.Exit(2)
	}
	violated := false
	for _, v := range check.All(ops, options) {
		fmt.Println(v)
		if *verbose {
			for _, detail := range v.Details {
				fmt.Println("    " + detail)
			}
		}
		violated = violated || v.Status == check.Violation
	}
	if violated {
		os.Exit(1)
	}
}
