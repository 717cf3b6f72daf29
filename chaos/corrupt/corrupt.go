// Package corrupt damages a stopped server's newest JetStream block file, reproducibly from a seed:
// bit flips or a truncation, as a failing disk would. The caller stops the server first; a running
// server would overwrite or cache the damage away.
package corrupt

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Damage is what was done, so a failing seed can be replayed and reported.
type Damage struct {
	File       string  `json:"file"`
	Seed       uint64  `json:"seed"`
	SizeBefore int64   `json:"sizeBefore"`
	SizeAfter  int64   `json:"sizeAfter"`
	Flips      []int64 `json:"flips,omitempty"` // bit positions (byte*8 + bit)
}

// ErrNoBlock is returned when the directory holds no block file.
var ErrNoBlock = errors.New("corrupt: no *.blk file")

// NewestBlock returns the block file under dir that a server wrote last: the highest-numbered
// N.blk of the most recently modified message directory (a stream's blocks are numbered in order).
func NewestBlock(dir string) (string, error) {
	type block struct {
		path  string
		index int
		mtime int64
	}
	var blocks []block
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(d.Name(), ".blk") {
			return err
		}
		index, convErr := strconv.Atoi(strings.TrimSuffix(d.Name(), ".blk"))
		if convErr != nil {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		blocks = append(blocks, block{path, index, info.ModTime().UnixNano()})
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(blocks) == 0 {
		return "", fmt.Errorf("%w under %s", ErrNoBlock, dir)
	}
	sort.Slice(blocks, func(i, j int) bool {
		a, b := blocks[i], blocks[j]
		if filepath.Dir(a.path) == filepath.Dir(b.path) {
			return a.index > b.index
		}
		return a.mtime > b.mtime
	})
	return blocks[0].path, nil
}

// FlipBits flips n distinct bits of the file at positions drawn from the seed.
func FlipBits(path string, seed uint64, n int) (Damage, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Damage{}, err
	}
	bits := int64(len(data)) * 8
	if int64(n) > bits || n < 1 {
		return Damage{}, fmt.Errorf("corrupt: %d flips asked of a %d-byte file", n, len(data))
	}
	random := rand.New(rand.NewPCG(seed, 0x6c617a79))
	damage := Damage{File: path, Seed: seed, SizeBefore: int64(len(data)), SizeAfter: int64(len(data))}
	chosen := map[int64]bool{}
	for len(damage.Flips) < n {
		bit := random.Int64N(bits)
		if chosen[bit] {
			continue
		}
		chosen[bit] = true
		data[bit/8] ^= 1 << (bit % 8)
		damage.Flips = append(damage.Flips, bit)
	}
	return damage, writeInPlace(path, data)
}

// Truncate cuts the file at an offset drawn from the seed, in [0, size).
func Truncate(path string, seed uint64) (Damage, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Damage{}, err
	}
	if info.Size() == 0 {
		return Damage{}, fmt.Errorf("corrupt: %s is empty", path)
	}
	random := rand.New(rand.NewPCG(seed, 0x6c617a79))
	damage := Damage{File: path, Seed: seed, SizeBefore: info.Size(), SizeAfter: random.Int64N(info.Size())}
	if err := os.Truncate(path, damage.SizeAfter); err != nil {
		return Damage{}, err
	}
	return damage, syncFile(path)
}

// writeInPlace rewrites the same inode (no rename), as a disk's damage would leave it.
func writeInPlace(path string, data []byte) error {
	file, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := file.WriteAt(data, 0); err != nil {
		file.Close()
		return err
	}
	// Synced, so the damage survives a lazyfs under the store.
	if err := file.Sync(); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

func syncFile(path string) error {
	file, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = file.Sync()
	return errors.Join(err, file.Close())
}
