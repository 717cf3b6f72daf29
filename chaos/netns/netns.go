// Package netns builds a small network of Linux network namespaces for fault tests: one namespace per
// node, each with a veth link to a bridge that lives in a namespace of its own, and cuts links with
// nftables drop rules inside the nodes' namespaces (this kernel has no netem). Nothing is added to the
// namespace the caller runs in. Every name starts with the cluster's prefix, so Reap finds leftovers.
package netns

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// DefaultPrefix starts every namespace this package makes unless told otherwise.
const DefaultPrefix = "chaos-"

// Subnet is the nodes' addresses: node i (from 0) gets .(i+1). It exists only inside the cluster's
// namespaces, so two clusters may use it at once.
var Subnet = netip.MustParsePrefix("10.77.0.0/24")

// Node is one namespace on the bridge.
type Node struct {
	Name      string     // as the caller named it
	Namespace string     // the namespace, prefix included
	Addr      netip.Addr // on its eth0
	port      string     // its veth end on the bridge
	spared    bool       // never cut (Spare)
}

// Cluster is a set of nodes on one bridge.
type Cluster struct {
	Prefix string // prefix + random id, e.g. "chaos-3f9a1c-"
	Nodes  []*Node
	bridge string // the bridge's namespace
}

// Create makes the namespaces and links for the named nodes (at most 250). On error it removes what it
// made. prefix "" means DefaultPrefix.
func Create(ctx context.Context, prefix string, names ...string) (c *Cluster, err error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if len(names) == 0 || len(names) > 250 {
		return nil, fmt.Errorf("netns: %d nodes, want 1 to 250", len(names))
	}
	id := make([]byte, 3)
	rand.Read(id)
	c = &Cluster{Prefix: prefix + hex.EncodeToString(id) + "-"}
	c.bridge = c.Prefix + "bridge"
	defer func() {
		if err != nil {
			c.Close(context.WithoutCancel(ctx))
		}
	}()
	// The bridge namespace is recorded first so a failure part way is still torn down.
	if err := run(ctx, "ip", "netns", "add", c.bridge); err != nil {
		return nil, err
	}
	if err := runBatch(ctx, c.bridge, "link add br0 type bridge", "link set br0 up", "link set lo up"); err != nil {
		return nil, err
	}
	addr := Subnet.Addr()
	for i, name := range names {
		addr = addr.Next()
		node := &Node{Name: name, Namespace: c.Prefix + name, Addr: addr, port: fmt.Sprintf("p%d", i)}
		if err := run(ctx, "ip", "netns", "add", node.Namespace); err != nil {
			return nil, err
		}
		c.Nodes = append(c.Nodes, node)
		if err := runBatch(ctx, c.bridge,
			fmt.Sprintf("link add %s type veth peer name eth0 netns %s", node.port, node.Namespace),
			fmt.Sprintf("link set %s master br0", node.port),
			fmt.Sprintf("link set %s up", node.port)); err != nil {
			return nil, err
		}
		if err := runBatch(ctx, node.Namespace,
			fmt.Sprintf("addr add %s/%d dev eth0", node.Addr, Subnet.Bits()),
			"link set eth0 up", "link set lo up"); err != nil {
			return nil, err
		}
		// The table the cuts go into; a heal empties its chain.
		if err := nft(ctx, node.Namespace, "add table inet chaos\nadd chain inet chaos input { type filter hook input priority 0; policy accept; }\n"); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Node returns the node of that name, or nil.
func (c *Cluster) Node(name string) *Node {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Command returns a command that runs inside the node's namespace (`ip netns exec` execs it, so its
// pid is the program's own, ready for SIGSTOP or SIGKILL).
func (c *Cluster) Command(ctx context.Context, node string, name string, args ...string) (*exec.Cmd, error) {
	n := c.Node(node)
	if n == nil {
		return nil, fmt.Errorf("netns: no node %q", node)
	}
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.Namespace, name}, args...)...), nil
}

// Do runs fn on an OS thread that is in the node's namespace; sockets fn opens stay in it after.
func (c *Cluster) Do(node string, fn func() error) error {
	n := c.Node(node)
	if n == nil {
		return fmt.Errorf("netns: no node %q", node)
	}
	target, err := os.Open("/run/netns/" + n.Namespace)
	if err != nil {
		return err
	}
	defer target.Close()
	runtime.LockOSThread()
	home, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer home.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("netns: setns %s: %w", n.Namespace, err)
	}
	fnErr := fn()
	if err := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread stays locked and dies with this goroutine rather than serve others in the wrong namespace.
		return errors.Join(fnErr, fmt.Errorf("netns: back to the home namespace: %w", err))
	}
	runtime.UnlockOSThread()
	return fnErr
}

// Spare exempts nodes from every cut Partition and Isolate make: a spared node (say, the clients')
// keeps talking to every node, so the clients see both sides of a partition, as clients spread over
// a real network would. DropOneWay still applies to it.
func (c *Cluster) Spare(names ...string) error {
	for _, name := range names {
		n := c.Node(name)
		if n == nil {
			return fmt.Errorf("netns: no node %q", name)
		}
		n.spared = true
	}
	return nil
}

// Partition lets each group talk within itself and to nobody else: Partition(["n1"], ["n2","n3"])
// isolates n1; ["n1","n2"] vs ["n3","n4","n5"] splits a majority from a minority. A node in no group
// is cut from everyone but the spared nodes. It replaces any earlier cut.
func (c *Cluster) Partition(ctx context.Context, groups ...[]string) error {
	groupOf := map[string]int{}
	for g, names := range groups {
		for _, name := range names {
			if c.Node(name) == nil {
				return fmt.Errorf("netns: no node %q", name)
			}
			groupOf[name] = g + 1
		}
	}
	rules := map[*Node][]string{}
	for _, to := range c.Nodes {
		for _, from := range c.Nodes {
			if from.spared || to.spared {
				continue
			}
			if from != to && (groupOf[from.Name] == 0 || groupOf[from.Name] != groupOf[to.Name]) {
				rules[to] = append(rules[to], from.Addr.String())
			}
		}
	}
	return c.apply(ctx, rules)
}

// Isolate cuts one node from all the others.
func (c *Cluster) Isolate(ctx context.Context, node string) error {
	var rest []string
	for _, n := range c.Nodes {
		if n.Name != node && !n.spared {
			rest = append(rest, n.Name)
		}
	}
	return c.Partition(ctx, []string{node}, rest)
}

// DropOneWay loses every packet from `from` to `to`; the other direction still flows. It adds to any
// earlier cut.
func (c *Cluster) DropOneWay(ctx context.Context, from, to string) error {
	src, dst := c.Node(from), c.Node(to)
	if src == nil || dst == nil {
		return fmt.Errorf("netns: no node %q or %q", from, to)
	}
	return nft(ctx, dst.Namespace, fmt.Sprintf("add rule inet chaos input ip saddr %s drop\n", src.Addr))
}

// Heal removes every cut.
func (c *Cluster) Heal(ctx context.Context) error {
	return c.apply(ctx, map[*Node][]string{})
}

func (c *Cluster) apply(ctx context.Context, dropFrom map[*Node][]string) error {
	var errs []error
	for _, n := range c.Nodes {
		// One nft transaction per node: the flush and the new rules land together.
		script := "flush chain inet chaos input\n"
		for _, addr := range dropFrom[n] {
			script += fmt.Sprintf("add rule inet chaos input ip saddr %s drop\n", addr)
		}
		errs = append(errs, nft(ctx, n.Namespace, script))
	}
	return errors.Join(errs...)
}

// Close kills every process still in the cluster's namespaces and deletes the namespaces (their veth
// links go with them). It is safe to call twice.
func (c *Cluster) Close(ctx context.Context) error {
	namespaces := []string{c.bridge}
	for _, n := range c.Nodes {
		namespaces = append(namespaces, n.Namespace)
	}
	c.Nodes = nil
	return removeNamespaces(ctx, namespaces)
}

// Reap removes every namespace whose name starts with prefix ("" means DefaultPrefix), killing the
// processes in it: what a crashed suite left behind. It returns the names it removed.
func Reap(ctx context.Context, prefix string) ([]string, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	all, err := List(ctx)
	if err != nil {
		return nil, err
	}
	var mine []string
	for _, name := range all {
		if strings.HasPrefix(name, prefix) {
			mine = append(mine, name)
		}
	}
	return mine, removeNamespaces(ctx, mine)
}

// List returns the names of all named network namespaces on the machine.
func List(ctx context.Context) ([]string, error) {
	out, err := exec.CommandContext(ctx, "ip", "netns", "list").Output()
	if err != nil {
		return nil, fmt.Errorf("netns: ip netns list: %w", err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if fields := strings.Fields(line); len(fields) > 0 {
			names = append(names, fields[0])
		}
	}
	return names, nil
}

func removeNamespaces(ctx context.Context, namespaces []string) error {
	var errs []error
	for _, ns := range namespaces {
		if _, err := os.Stat("/run/netns/" + ns); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if out, err := exec.CommandContext(ctx, "ip", "netns", "pids", ns).Output(); err == nil {
			for _, field := range strings.Fields(string(out)) {
				var pid int
				if _, err := fmt.Sscan(field, &pid); err == nil && pid > 1 {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		errs = append(errs, run(ctx, "ip", "netns", "delete", ns))
	}
	return errors.Join(errs...)
}

func run(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("netns: %s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// runBatch runs `ip` commands inside a namespace in one process.
func runBatch(ctx context.Context, ns string, commands ...string) error {
	cmd := exec.CommandContext(ctx, "ip", "-n", ns, "-batch", "-")
	cmd.Stdin = strings.NewReader(strings.Join(commands, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("netns: ip -n %s: %q: %w: %s", ns, commands, err, bytes.TrimSpace(out))
	}
	return nil
}

func nft(ctx context.Context, ns, script string) error {
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", ns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("netns: nft in %s: %q: %w: %s", ns, script, err, bytes.TrimSpace(out))
	}
	return nil
}
