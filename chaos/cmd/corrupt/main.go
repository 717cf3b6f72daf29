// Command corrupt damages the newest block file under a stopped server's store directory and prints
// what it did as JSON (replay it with the same seed).
//
//	corrupt -dir STORE -seed N [-bits 3] flip   # flags before the mode: Go's flag stops at the first argument
//	corrupt -dir STORE -seed N truncate
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/mesh/mesh-state/chaos/corrupt"
)

func main() {
	dir := flag.String("dir", "", "the server's store directory (searched for the newest *.blk)")
	seed := flag.Uint64("seed", 0, "the seed that picks what to damage")
	count := flag.Int("bits", 3, "how many bits to flip")
	flag.Parse()
	if *dir == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: corrupt -dir STORE -seed N [-bits 3] flip|truncate")
		os.Exit(2)
	}
	path, err := corrupt.NewestBlock(*dir)
	if err != nil {
		fail(err)
	}
	var damage corrupt.Damage
	switch flag.Arg(0) {
	case "flip":
		damage, err = corrupt.FlipBits(path, *seed, *count)
	case "truncate":
		damage, err = corrupt.Truncate(path, *seed)
	default:
		fmt.Fprintln(os.Stderr, "corrupt: want flip or truncate")
		os.Exit(2)
	}
	if err != nil {
		fail(err)
	}
	json.NewEncoder(os.Stdout).Encode(damage)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "corrupt:", err)
	os.Exit(1)
}
