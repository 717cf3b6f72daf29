// Command chaos is the fault suite's driver (issue 44): it derives a whole fault schedule from a seed
// and prints it, stands a nats-server cluster up in network namespaces (one per node, one for the
// clients), runs the workload host (integration/src/chaos: runtime-state serving sdk-ts bundles that
// record a history) against it, applies the faults on schedule, heals, waits for the viewers to
// converge, then runs the checkers over the history and prints their verdicts. Exit 1 on a
// violation, 2 when the run itself failed. It cleans up on every path, Ctrl-C included.
//
//	chaos -seed 7 -classes kill,pause,partition -duration 2m -server-version v2.15.3
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mesh/mesh-state/chaos/check"
	"github.com/mesh/mesh-state/chaos/history"
	"github.com/mesh/mesh-state/chaos/lazyfs"
	"github.com/mesh/mesh-state/chaos/netns"
)

const stream = "KV_mod_chaos_items"

type options struct {
	seed                   uint64
	classes                []string
	duration               time.Duration
	nodes                  int
	writers, viewers, keys int
	bin, version, out      string
	workload               string
	syncInterval           string
	replayServer           string // how the replay line names the server
	// known: checkers whose violations are findings already written down (docs/faults/README.md, "Known
	// violations"): printed in full, not failing the run, so the other checkers still guard CI.
	known []string
}

func main() {
	var o options
	var classes string
	flag.Uint64Var(&o.seed, "seed", 1, "the seed every fault of the run is derived from")
	flag.StringVar(&classes, "classes", "kill,pause,partition", "fault classes, comma separated: "+strings.Join(Classes, ","))
	flag.DurationVar(&o.duration, "duration", 2*time.Minute, "how long faults are applied (the workload runs a little longer)")
	flag.IntVar(&o.nodes, "nodes", 3, "cluster size (the bucket has 3 replicas)")
	flag.IntVar(&o.writers, "writers", 2, "writer bundles")
	flag.IntVar(&o.viewers, "viewers", 2, "viewer bundles")
	flag.IntVar(&o.keys, "keys", 6, "keys the writers share")
	flag.StringVar(&o.version, "server-version", "v2.15.3", "nats-server version, from ~/.cache/mesh-state-tools")
	flag.StringVar(&o.bin, "server-bin", "", "nats-server binary (overrides -server-version)")
	flag.StringVar(&o.out, "out", "", "the run's folder: history, logs, configs (default: a new one in the temp folder)")
	flag.StringVar(&o.workload, "workload", "integration/dist/chaos-workload.js", "the built workload host")
	flag.StringVar(&o.syncInterval, "sync-interval", "", "JetStream sync_interval (\"\": the server's default, 2 min; \"always\")")
	known := flag.String("known", "", "checkers whose violations are known findings: printed, exit code unaffected")
	flag.Parse()
	if *known != "" {
		o.known = strings.Split(*known, ",")
	}
	o.classes = strings.Split(classes, ",")
	for _, class := range o.classes {
		if !contains(Classes, class) {
			fmt.Fprintf(os.Stderr, "chaos: unknown class %q (known: %s; clock skew is not done: see docs/faults)\n", class, strings.Join(Classes, ","))
			os.Exit(2)
		}
	}
	server := "-server-version " + o.version
	if o.bin != "" {
		server = "-server-bin " + o.bin
	} else {
		home, _ := os.UserHomeDir()
		o.bin = filepath.Join(home, ".cache/mesh-state-tools", "nats-server-"+o.version, "nats-server")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	o.replayServer = server
	code, err := run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		if code == 0 {
			code = 2
		}
	}
	os.Exit(code)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func logf(format string, args ...any) {
	fmt.Printf("%s "+format+"\n", append([]any{time.Now().Format("15:04:05.0")}, args...)...)
}

func run(ctx context.Context, o options) (code int, err error) {
	if o.out == "" {
		if o.out, err = os.MkdirTemp("", fmt.Sprintf("chaos-seed%d-", o.seed)); err != nil {
			return 2, err
		}
	}
	if o.workload, err = filepath.Abs(o.workload); err != nil {
		return 2, err
	}
	historyDir := filepath.Join(o.out, "history")
	if err := os.MkdirAll(historyDir, 0o755); err != nil {
		return 2, err
	}
	faults := Schedule(o.seed, o.classes, o.nodes, o.duration)
	fmt.Printf("chaos: seed %d, %d nodes (R3), classes %s, duration %s, nats-server %s, sync_interval %s\n",
		o.seed, o.nodes, strings.Join(o.classes, ","), o.duration, o.bin, or(o.syncInterval, "default"))
	fmt.Printf("schedule (%d faults):\n", len(faults))
	for _, f := range faults {
		fmt.Println("  " + f.String())
	}
	fmt.Println("run folder:", o.out)

	// Everything below is undone in reverse on every path; a second failure is reported, not hidden.
	var undo []func() error
	defer func() {
		var errs []error
		for i := len(undo) - 1; i >= 0; i-- {
			errs = append(errs, undo[i]())
		}
		if cleanupErr := errors.Join(errs...); cleanupErr != nil {
			err = errors.Join(err, fmt.Errorf("cleanup: %w", cleanupErr))
		}
	}()
	cleanCtx := context.WithoutCancel(ctx)

	names := []string{}
	for i := 1; i <= o.nodes; i++ {
		names = append(names, fmt.Sprintf("n%d", i))
	}
	nc, err := netns.Create(ctx, "", append(names, "clients")...)
	if err != nil {
		return 2, err
	}
	undo = append(undo, func() error { return nc.Close(cleanCtx) })
	if err := nc.Spare("clients"); err != nil {
		return 2, err
	}
	c := &cluster{net: nc, bin: o.bin, out: o.out}
	useLazy := contains(o.classes, "lostfsync")
	var mounts []string
	for _, node := range nc.Nodes[:o.nodes] {
		s := &server{name: node.Name, addr: node.Addr.String(), config: filepath.Join(o.out, node.Name+".conf")}
		s.store = filepath.Join(o.out, node.Name+".store")
		if err := os.MkdirAll(s.store, 0o755); err != nil {
			return 2, err
		}
		if useLazy {
			backing := filepath.Join(o.out, node.Name+".real")
			if err := os.MkdirAll(backing, 0o755); err != nil {
				return 2, err
			}
			if s.lazy, err = lazyfs.Mount(backing, s.store); err != nil {
				return 2, err
			}
			mounts = append(mounts, s.store)
			lazy := s.lazy
			undo = append(undo, lazy.Unmount)
		}
		c.servers = append(c.servers, s)
	}

	// The accounts and users, composed by grant-composer in the workload host.
	credentials := filepath.Join(o.out, "credentials.json")
	if out, err := exec.CommandContext(ctx, "node", o.workload, "compose", "--out", credentials).CombinedOutput(); err != nil {
		return 2, fmt.Errorf("compose: %w: %s", err, out)
	}
	var composed struct{ Accounts string }
	raw, err := os.ReadFile(credentials)
	if err != nil {
		return 2, err
	}
	if err := json.Unmarshal(raw, &composed); err != nil {
		return 2, err
	}
	if err := c.writeConfigs(composed.Accounts, o.syncInterval); err != nil {
		return 2, err
	}
	for _, s := range c.servers {
		if err := c.start(ctx, s); err != nil {
			return 2, err
		}
	}
	undo = append(undo, func() error {
		for _, s := range c.servers {
			c.stop(s)
		}
		return nil
	})

	var urls []string
	for _, s := range c.servers {
		urls = append(urls, fmt.Sprintf("nats://%s:4222", s.addr))
	}
	spec := map[string]any{
		"urls": urls, "replicas": 3, "writers": o.writers, "viewers": o.viewers, "keys": o.keys, "seed": o.seed,
		"historyDir": historyDir, "credentials": credentials, "requestTimeoutMs": 5000, "deadlineMs": 7000,
		"convergeTimeoutMs": 60000,
	}
	specPath := filepath.Join(o.out, "spec.json")
	specJSON, _ := json.Marshal(spec)
	if err := os.WriteFile(specPath, specJSON, 0o644); err != nil {
		return 2, err
	}
	host, err := nc.Command(context.WithoutCancel(ctx), "clients", "node", o.workload, "run", "--spec", specPath)
	if err != nil {
		return 2, err
	}
	host.Stderr, _ = os.Create(filepath.Join(o.out, "workload.log"))
	hostIn, _ := host.StdinPipe()
	hostOut, _ := host.StdoutPipe()
	if err := host.Start(); err != nil {
		return 2, err
	}
	hostPid := host.Process.Pid
	leftoverHost := ""
	hostDone := make(chan error, 1)
	lines := make(chan map[string]json.RawMessage, 4)
	go func() {
		scanner := bufio.NewScanner(hostOut)
		scanner.Buffer(make([]byte, 1<<20), 1<<20)
		for scanner.Scan() {
			var line map[string]json.RawMessage
			if json.Unmarshal(scanner.Bytes(), &line) == nil {
				lines <- line
			}
		}
		hostDone <- host.Wait()
		close(lines)
	}()
	undo = append(undo, func() error {
		host.Process.Signal(syscall.SIGKILL)
		return nil
	})
	await := func(field string, within time.Duration) (json.RawMessage, error) {
		timer := time.NewTimer(within)
		defer timer.Stop()
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					return nil, fmt.Errorf("the workload host exited before %q (see %s)", field, filepath.Join(o.out, "workload.log"))
				}
				if v, found := line[field]; found {
					return v, nil
				}
			case <-timer.C:
				return nil, fmt.Errorf("no %q from the workload host within %s", field, within)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	if _, err := await("ready", 2*time.Minute); err != nil {
		return 2, err
	}
	logf("workload running: %d writers, %d viewers, %d keys", o.writers, o.viewers, o.keys)

	// The faults, each applied and undone in turn.
	start := time.Now()
	for _, f := range faults {
		select {
		case <-time.After(time.Until(start.Add(f.At))):
		case <-ctx.Done():
			return 2, ctx.Err()
		}
		if err := apply(ctx, c, f); err != nil {
			return 2, fmt.Errorf("fault %s: %w", f, err)
		}
	}
	select {
	case <-time.After(time.Until(start.Add(o.duration))):
	case <-ctx.Done():
		return 2, ctx.Err()
	}

	// Heal everything, then wait until the stream has a leader and every replica is current.
	if err := nc.Heal(ctx); err != nil {
		return 2, err
	}
	for _, s := range c.servers {
		running, paused := s.state()
		if !running {
			if err := c.start(ctx, s); err != nil {
				return 2, err
			}
		} else if paused {
			c.signal(s, syscall.SIGCONT)
		}
	}
	healed := time.Now()
	settled := false
	for time.Since(healed) < 2*time.Minute && !settled {
		time.Sleep(time.Second)
		for _, s := range c.servers {
			if streams, err := c.jsz(s, time.Second); err == nil {
				if info := streams[stream]; info.Leader != "" && info.Current == info.Replicas && info.Replicas == 3 {
					settled = true
				}
			}
		}
	}
	logf("healed; stream settled: %v after %.1fs", settled, time.Since(healed).Seconds())

	fmt.Fprintln(hostIn, "quiesce")
	doneRaw, err := await("done", 5*time.Minute)
	if err != nil {
		return 2, err
	}
	select {
	case <-hostDone:
	case <-time.After(30 * time.Second):
		leftoverHost = "the workload host did not exit within 30 s of its last line"
		host.Process.Signal(syscall.SIGKILL)
		<-hostDone
	case <-ctx.Done():
		return 2, ctx.Err()
	}
	logf("workload done: %s", doneRaw)

	// Nothing left behind: the runtime deleted its consumers before the servers stop.
	// Each node reports the consumers it knows of; the most any node reports is what is left.
	var leftovers []string
	if leftoverHost != "" {
		leftovers = append(leftovers, leftoverHost)
	}
	// A consumer delete reaches each replica a moment later, and a consumer the runtime lost in a fault is removed
	// by the server after 30 s idle (runtime-state's consumerInactiveMs): counted again for up to 40 s before it is a leak.
	consumers, answered := 0, 0
	for counted := time.Now(); ; time.Sleep(time.Second) {
		consumers, answered = 0, 0
		for _, s := range c.servers {
			if streams, err := c.jsz(s, 2*time.Second); err == nil {
				answered++
				consumers = max(consumers, streams[stream].Consumers)
			}
		}
		if (answered > 0 && consumers == 0) || time.Since(counted) > 40*time.Second {
			logf("consumers left on the bucket: %d (after %.1fs)", consumers, time.Since(counted).Seconds())
			break
		}
	}
	if answered == 0 {
		leftovers = append(leftovers, "consumers not counted: no node answered")
	} else if consumers > 0 {
		leftovers = append(leftovers, fmt.Sprintf("%d consumers on %s", consumers, stream))
	}

	// Stop the servers, unmount, remove the namespaces now (not in the deferred undo) to check them.
	for _, s := range c.servers {
		c.stop(s)
	}
	for _, s := range c.servers {
		if s.lazy != nil {
			if err := s.lazy.Unmount(); err != nil {
				leftovers = append(leftovers, "unmount "+s.store+": "+err.Error())
			}
		}
	}
	if err := nc.Close(cleanCtx); err != nil {
		leftovers = append(leftovers, err.Error())
	}
	undo = nil
	leftovers = append(leftovers, leftBehind(nc.Prefix, mounts, append(c.pids, hostPid))...)

	// The history: each bundle's file, concatenated (each is in its own order, as the format asks).
	historyPath := filepath.Join(o.out, "history.jsonl")
	if err := concatenate(historyDir, historyPath); err != nil {
		return 2, err
	}
	file, err := os.Open(historyPath)
	if err != nil {
		return 2, err
	}
	ops, err := history.Read(file)
	file.Close()
	if err != nil {
		return 2, err
	}
	verdicts := check.All(ops, check.Options{LinearizabilityTimeout: time.Minute, DeadlineSlack: time.Second})
	verdicts = append(verdicts, workloadVerdict(ops, string(doneRaw)), finalReadsVerdict(ops), leftBehindVerdict(leftovers))
	fmt.Printf("\nverdicts (seed %d, nats-server %s, classes %s):\n", o.seed, o.bin, strings.Join(o.classes, ","))
	for _, v := range verdicts {
		line := "  " + v.String()
		knownViolation := v.Status == check.Violation && contains(o.known, v.Checker)
		if knownViolation {
			line += "  [known: docs/faults/README.md]"
		}
		fmt.Println(line)
		if v.Status == check.Violation {
			if !knownViolation {
				code = 1
			}
			for i, d := range v.Details {
				if i == 5 {
					fmt.Printf("      … %d more\n", len(v.Details)-5)
					break
				}
				fmt.Println("      " + d)
			}
		}
	}
	fmt.Printf("operations: %d; history: %s\n", len(ops), historyPath)
	fmt.Printf("replay: pnpm chaos -seed %d -classes %s -duration %s -nodes %d %s%s\n",
		o.seed, strings.Join(o.classes, ","), o.duration, o.nodes, o.replayServer, syncFlag(o.syncInterval))
	return code, nil
}

func or(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

func syncFlag(s string) string {
	if s == "" {
		return ""
	}
	return " -sync-interval " + s
}
