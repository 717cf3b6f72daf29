package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mesh/mesh-state/chaos/lazyfs"
)

// The binary as a driver uses it: start, wait for "ready", command it over the socket, SIGTERM.
func TestBinaryMountCommandAndStop(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("lazyfs mounts FUSE and needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("lazyfs needs /dev/fuse: " + err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "lazyfs")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	backing, mountpoint, socket := t.TempDir(), t.TempDir(), filepath.Join(dir, "control.sock")
	cmd := exec.Command(bin, "mount", "-backing", backing, "-mountpoint", mountpoint, "-control", socket)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
			syscall.Unmount(mountpoint, syscall.MNT_DETACH)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("first line %q, %v; want ready", line, err)
	}
	if err := os.WriteFile(filepath.Join(mountpoint, "f"), []byte("unsynced"), 0o644); err != nil {
		t.Fatal(err)
	}
	// "ready" promises the socket listens.
	reply, err := lazyfs.Send(ctx, socket, "stats")
	if err != nil || reply.Stats.UnsyncedFiles != 1 {
		t.Fatalf("stats: %+v %v", reply, err)
	}
	out, err := exec.CommandContext(ctx, bin, "ctl", "-control", socket, "lose-unsynced").Output()
	if err != nil || !strings.Contains(string(out), `"loss":{"files":1,"bytes":4096}`) {
		t.Fatalf("ctl lose-unsynced: %s %v", out, err)
	}
	if data, err := os.ReadFile(filepath.Join(mountpoint, "f")); err != nil || len(data) != 0 {
		t.Fatalf("after the loss: %q %v", data, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("lazyfs after SIGTERM: %v", err)
	}
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mounts), mountpoint) {
		t.Fatalf("%s still mounted after SIGTERM", mountpoint)
	}
	if _, err := os.Stat(socket); !os.IsNotExist(err) {
		t.Fatalf("control socket left behind: %v", err)
	}
}
