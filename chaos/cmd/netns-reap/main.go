// Command netns-reap removes the network namespaces a fault suite left behind (those whose name starts
// with -prefix, "chaos-" by default), killing the processes still in them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/mesh/mesh-state/chaos/netns"
)

func main() {
	prefix := flag.String("prefix", netns.DefaultPrefix, "remove namespaces whose name starts with this")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	removed, err := netns.Reap(ctx, *prefix)
	for _, name := range removed {
		fmt.Println("removed", name)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "netns-reap:", err)
		os.Exit(1)
	}
}
