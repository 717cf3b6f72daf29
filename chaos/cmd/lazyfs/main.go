// Command lazyfs mounts a lazyfs and answers control commands, or sends one.
//
//	lazyfs mount -backing DIR -mountpoint DIR -control SOCKET   # foreground; prints "ready" once mounted and listening
//	lazyfs ctl -control SOCKET lose-unsynced|stats             # prints the JSON reply
//
// SIGTERM or SIGINT unmounts and exits 0.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mesh/mesh-state/chaos/lazyfs"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "mount":
		err = mount(os.Args[2:])
	case "ctl":
		err = control(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lazyfs:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: lazyfs mount -backing DIR -mountpoint DIR -control SOCKET\n       lazyfs ctl -control SOCKET lose-unsynced|stats")
	os.Exit(2)
}

func mount(args []string) error {
	flags := flag.NewFlagSet("mount", flag.ExitOnError)
	backing := flags.String("backing", "", "the directory that holds the data")
	mountpoint := flags.String("mountpoint", "", "where to mount it")
	socket := flags.String("control", "", "the unix socket for control commands")
	flags.Parse(args)
	if *backing == "" || *mountpoint == "" || *socket == "" {
		usage()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	listener, err := lazyfs.ListenControl(*socket)
	if err != nil {
		return err
	}
	fs, err := lazyfs.Mount(*backing, *mountpoint)
	if err != nil {
		listener.Close()
		return err
	}
	served := make(chan error, 1)
	go func() { served <- fs.ServeControl(ctx, listener) }()
	// "ready": the mount is up and the socket is listening.
	fmt.Println("ready")
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	stop()
	os.Remove(*socket)
	if unmountErr := fs.Unmount(); unmountErr != nil {
		return unmountErr
	}
	return err
}

func control(args []string) error {
	flags := flag.NewFlagSet("ctl", flag.ExitOnError)
	socket := flags.String("control", "", "the unix socket of a mounted lazyfs")
	flags.Parse(args)
	if *socket == "" || flags.NArg() != 1 {
		usage()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reply, err := lazyfs.Send(ctx, *socket, flags.Arg(0))
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(reply)
}
