package main

import (
	"context"
	"fmt"
	"github.com/mesh/mesh-state/chaos/corrupt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// apply does one fault, holds it, and undoes it.
func apply(ctx context.Context, c *cluster, f Fault) error {
	resolve := func(target string) *server {
		leader, followers := c.placement(stream)
		switch target {
		case "leader":
			if s := c.byName(leader); s != nil {
				return s
			}
			return c.servers[0]
		case "follower":
			// A replica of the bucket's stream (on five nodes, three hold it), else any node but the leader.
			if len(followers) > 0 {
				return c.byName(followers[0])
			}
			for _, s := range c.servers {
				if s.name != leader {
					return s
				}
			}
		}
		return c.byName(target)
	}
	hold := func() error {
		select {
		case <-time.After(f.Hold):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	switch f.Class {
	case "kill", "lostfsync", "corrupt":
		s := resolve(f.Target)
		c.kill(s)
		what := "SIGKILL " + s.name
		if f.Class == "lostfsync" && s.lazy != nil {
			loss := s.lazy.LoseUnsynced()
			what += fmt.Sprintf(", lost unsynced writes: %d files, %d bytes", loss.Files, loss.Bytes)
		}
		if f.Class == "corrupt" {
			// The bucket's own blocks when this node holds them; else the node's newest block of any stream.
			dir := filepath.Join(s.store, "jetstream", "STATE", "streams", stream)
			if _, statErr := os.Stat(dir); statErr != nil {
				dir = s.store
			}
			block, err := corrupt.NewestBlock(dir)
			if err != nil {
				what += ", nothing to corrupt: " + err.Error()
			} else {
				var damage corrupt.Damage
				if f.Mode == "flip" {
					damage, err = corrupt.FlipBits(block, f.Seed, 8)
				} else {
					damage, err = corrupt.Truncate(block, f.Seed)
				}
				if err != nil {
					return err
				}
				what += fmt.Sprintf(", %s %s: %d -> %d bytes", f.Mode, damage.File, damage.SizeBefore, damage.SizeAfter)
			}
		}
		logf("%s: %s", f.Class, what)
		if err := hold(); err != nil {
			return err
		}
		logf("%s: restart %s", f.Class, s.name)
		return c.start(ctx, s)
	case "pause":
		s := resolve(f.Target)
		logf("pause: SIGSTOP %s", s.name)
		if err := c.signal(s, syscall.SIGSTOP); err != nil {
			return err
		}
		if err := hold(); err != nil {
			return err
		}
		logf("pause: SIGCONT %s", s.name)
		return c.signal(s, syscall.SIGCONT)
	case "crash":
		logf("crash: SIGKILL every node")
		for _, s := range c.servers {
			c.kill(s)
		}
		for _, s := range c.servers {
			if s.lazy != nil {
				loss := s.lazy.LoseUnsynced()
				logf("crash: %s lost unsynced writes: %d files, %d bytes", s.name, loss.Files, loss.Bytes)
			}
		}
		if err := hold(); err != nil {
			return err
		}
		logf("crash: restart every node")
		for _, s := range c.servers {
			if err := c.start(ctx, s); err != nil {
				return err
			}
		}
		return nil
	case "partition":
		var err error
		switch f.Kind {
		case "isolate-leader":
			s := resolve("leader")
			logf("partition: isolate the leader %s", s.name)
			err = c.net.Isolate(ctx, s.name)
		case "majority-minority":
			logf("partition: %v | %v", f.Groups[0], f.Groups[1])
			err = c.net.Partition(ctx, f.Groups...)
		case "one-way":
			logf("partition: %s's packets to %s lost", f.From, f.To)
			err = c.net.DropOneWay(ctx, f.From, f.To)
		}
		if err != nil {
			return err
		}
		if err := hold(); err != nil {
			return err
		}
		logf("partition: heal")
		return c.net.Heal(ctx)
	}
	return fmt.Errorf("unknown class %q", f.Class)
}
