package netns

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func createForTest(t *testing.T, prefix string, names ...string) *Cluster {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Create(ctx, prefix, names...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return c
}

// listenTCP opens a listener inside the node's namespace that accepts and closes connections.
func listenTCP(t *testing.T, c *Cluster, node string) netip.AddrPort {
	t.Helper()
	var listener net.Listener
	err := c.Do(node, func() (err error) {
		listener, err = net.Listen("tcp", netip.AddrPortFrom(c.Node(node).Addr, 0).String())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { listener.Close() })
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	return listener.Addr().(*net.TCPAddr).AddrPort()
}

func dialTCP(c *Cluster, node string, to netip.AddrPort) error {
	return c.Do(node, func() error {
		conn, err := net.DialTimeout("tcp", to.String(), 500*time.Millisecond)
		if err == nil {
			conn.Close()
		}
		return err
	})
}

// udpHeard sends a datagram from one node to another and reports whether it arrived.
func udpHeard(t *testing.T, c *Cluster, from, to string) bool {
	t.Helper()
	var receiver, sender *net.UDPConn
	if err := c.Do(to, func() (err error) {
		receiver, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(c.Node(to).Addr, 0)))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer receiver.Close()
	if err := c.Do(from, func() (err error) {
		sender, err = net.DialUDP("udp", nil, receiver.LocalAddr().(*net.UDPAddr))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer sender.Close()
	if _, err := sender.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	receiver.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	_, err := receiver.Read(make([]byte, 16))
	return err == nil
}

func TestCutsAndHeal(t *testing.T) {
	ctx := context.Background()
	c := createForTest(t, "", "n1", "n2", "n3")
	n2 := listenTCP(t, c, "n2")
	n3 := listenTCP(t, c, "n3")
	if err := dialTCP(c, "n1", n2); err != nil {
		t.Fatalf("n1 -> n2 before any cut: %v", err)
	}

	if err := c.Isolate(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if err := dialTCP(c, "n1", n2); err == nil {
		t.Fatal("n1 reached n2 while isolated")
	}
	if err := dialTCP(c, "n2", n3); err != nil {
		t.Fatalf("n2 -> n3 while n1 is isolated: %v", err)
	}

	if err := c.Partition(ctx, []string{"n1", "n2"}, []string{"n3"}); err != nil {
		t.Fatal(err)
	}
	if err := dialTCP(c, "n1", n2); err != nil {
		t.Fatalf("n1 -> n2 inside the majority: %v", err)
	}
	if err := dialTCP(c, "n2", n3); err == nil {
		t.Fatal("n2 reached n3 across the partition")
	}

	if err := c.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	if err := dialTCP(c, "n2", n3); err != nil {
		t.Fatalf("n2 -> n3 after heal: %v", err)
	}

	if err := c.DropOneWay(ctx, "n1", "n2"); err != nil {
		t.Fatal(err)
	}
	if udpHeard(t, c, "n1", "n2") {
		t.Fatal("n1 -> n2 arrived under a one-way drop")
	}
	if !udpHeard(t, c, "n2", "n1") {
		t.Fatal("n2 -> n1 lost under a drop of the other direction")
	}
	if err := c.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	if !udpHeard(t, c, "n1", "n2") {
		t.Fatal("n1 -> n2 lost after heal")
	}
}

func TestCommandRunsInsideAndCloseRemovesEverything(t *testing.T) {
	ctx := context.Background()
	c := createForTest(t, "", "a", "b")
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", c.Node("a").Namespace, "ip", "-brief", "addr", "show", "eth0").Output()
	if err != nil || !strings.Contains(string(out), c.Node("a").Addr.String()) {
		t.Fatalf("eth0 in a: %q %v", out, err)
	}
	sleeper, err := c.Command(ctx, "b", "sleep", "600")
	if err != nil {
		t.Fatal(err)
	}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the process is inside b's namespace (ip netns exec has exec'd it).
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		out, _ := exec.Command("ip", "netns", "identify", strconv.Itoa(sleeper.Process.Pid)).Output()
		if strings.TrimSpace(string(out)) == c.Node("b").Namespace {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("sleep never entered b's namespace")
		}
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := sleeper.Wait(); !errors.As(err, &exit) {
		t.Fatalf("the process in b outlived the cluster: %v", err)
	}
	assertNoNamespaces(t, c.Prefix)
}

func TestReapRemovesLeftovers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	ctx := context.Background()
	prefix := "chaos-reaptest-"
	c, err := Create(ctx, prefix, "x", "y")
	if err != nil {
		t.Fatal(err)
	}
	removed, err := Reap(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 3 {
		t.Fatalf("reaped %v, want the bridge and two nodes", removed)
	}
	assertNoNamespaces(t, c.Prefix)
}

func assertNoNamespaces(t *testing.T, prefix string) {
	t.Helper()
	names, err := List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasPrefix(name, prefix) {
			t.Errorf("namespace %s left behind", name)
		}
	}
}

// A spared node (the clients') reaches both sides of a partition and an isolated node.
func TestSparedNodeIsNeverCut(t *testing.T) {
	ctx := context.Background()
	c := createForTest(t, "", "n1", "n2", "n3", "clients")
	if err := c.Spare("clients"); err != nil {
		t.Fatal(err)
	}
	n1 := listenTCP(t, c, "n1")
	n3 := listenTCP(t, c, "n3")
	if err := c.Partition(ctx, []string{"n1", "n2"}, []string{"n3"}); err != nil {
		t.Fatal(err)
	}
	if err := dialTCP(c, "n1", n3); err == nil {
		t.Fatal("n1 reached n3 across the partition")
	}
	for _, to := range []netip.AddrPort{n1, n3} {
		if err := dialTCP(c, "clients", to); err != nil {
			t.Fatalf("clients -> %v across the partition: %v", to, err)
		}
	}
	if err := c.Isolate(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if err := dialTCP(c, "clients", n1); err != nil {
		t.Fatalf("clients -> isolated n1: %v", err)
	}
	if err := dialTCP(c, "n3", n1); err == nil {
		t.Fatal("n3 reached the isolated n1")
	}
	if err := c.Spare("nobody"); err == nil {
		t.Fatal("Spare of an unknown node did not fail")
	}
}
