package corrupt

import (
	"bytes"
	"errors"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func writeBlock(t *testing.T, path string, data []byte, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func TestNewestBlock(t *testing.T) {
	dir := t.TempDir()
	if _, err := NewestBlock(dir); !errors.Is(err, ErrNoBlock) {
		t.Fatalf("empty dir: %v", err)
	}
	old, now := time.Now().Add(-time.Hour), time.Now()
	writeBlock(t, filepath.Join(dir, "streams/KV_a/msgs/1.blk"), []byte("a"), old)
	writeBlock(t, filepath.Join(dir, "streams/KV_b/msgs/9.blk"), []byte("b"), now.Add(-time.Minute))
	// Same directory: the higher number is the newer block, whatever the clock says.
	writeBlock(t, filepath.Join(dir, "streams/KV_b/msgs/10.blk"), []byte("b"), now.Add(-2*time.Minute))
	writeBlock(t, filepath.Join(dir, "streams/KV_b/msgs/index.db"), []byte("i"), now)
	got, err := NewestBlock(dir)
	if err != nil || got != filepath.Join(dir, "streams/KV_b/msgs/10.blk") {
		t.Fatalf("newest = %s, %v", got, err)
	}
}

func TestFlipBitsIsExactAndReplays(t *testing.T) {
	original := bytes.Repeat([]byte{0x5a}, 4096)
	var runs []Damage
	for range 2 {
		path := filepath.Join(t.TempDir(), "1.blk")
		writeBlock(t, path, original, time.Now())
		damage, err := FlipBits(path, 42, 5)
		if err != nil {
			t.Fatal(err)
		}
		after, _ := os.ReadFile(path)
		flipped := 0
		for i := range after {
			flipped += bits.OnesCount8(after[i] ^ original[i])
		}
		if flipped != 5 || len(after) != len(original) {
			t.Fatalf("%d bits differ (want 5), size %d", flipped, len(after))
		}
		runs = append(runs, damage)
	}
	if !slices.Equal(runs[0].Flips, runs[1].Flips) {
		t.Fatalf("the same seed flipped %v then %v", runs[0].Flips, runs[1].Flips)
	}
	if other, _ := FlipBits(runs[0].File, 43, 5); slices.Equal(other.Flips, runs[0].Flips) {
		t.Fatal("another seed flipped the same bits")
	}
}

func TestTruncateKeepsAPrefix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "3.blk")
	original := bytes.Repeat([]byte("message "), 100)
	writeBlock(t, path, original, time.Now())
	damage, err := Truncate(path, 7)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	if int64(len(after)) != damage.SizeAfter || damage.SizeAfter >= damage.SizeBefore || !bytes.Equal(after, original[:len(after)]) {
		t.Fatalf("damage %+v, %d bytes left", damage, len(after))
	}
}
