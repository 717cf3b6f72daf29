package lazyfs

import (
	"sort"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
)

// pageSize is the unit the cache keeps: a partial write loads the page it touches from the backing
// file first, as a kernel page cache does.
const pageSize = 4096

// fileState is what one backing file (by inode number) holds in memory and the disk does not yet have.
type fileState struct {
	inode *fs.Inode // for telling the kernel its cached pages are stale after a loss; may be nil
	size  int64     // the size a reader sees
	// cutTo is the smallest size the file was truncated to since its last sync (-1: none): backing
	// bytes from there on are not the file's any more, even where no page covers them.
	cutTo int64
	pages map[int64][]byte // page index -> pageSize bytes
}

// Stats counts what the cache did since the mount.
type Stats struct {
	Writes          int64 `json:"writes"`
	WrittenBytes    int64 `json:"writtenBytes"`
	Syncs           int64 `json:"syncs"`
	SyncedBytes     int64 `json:"syncedBytes"`
	UnsyncedFiles   int   `json:"unsyncedFiles"`
	UnsyncedBytes   int64 `json:"unsyncedBytes"` // dirty pages x page size
	Losses          int64 `json:"losses"`
	LostFiles       int64 `json:"lostFiles"`
	LostBytes       int64 `json:"lostBytes"`
	WriteThroughs   int64 `json:"writeThroughs"` // writes on O_SYNC/O_DSYNC handles
	DroppedOnUnlink int64 `json:"droppedOnUnlink"`
}

// Loss reports what one lose-unsynced discarded.
type Loss struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

type cache struct {
	mu    sync.Mutex
	files map[uint64]*fileState
	stats Stats
}

func newCache() *cache { return &cache{files: map[uint64]*fileState{}} }

// state returns the file's state, making it from the backing file's size on first use.
func (c *cache) state(ino uint64, inode *fs.Inode, fd int) (*fileState, syscall.Errno) {
	if st, ok := c.files[ino]; ok {
		if st.inode == nil {
			st.inode = inode
		}
		return st, 0
	}
	var stat syscall.Stat_t
	if err := syscall.Fstat(fd, &stat); err != nil {
		return nil, fs.ToErrno(err)
	}
	st := &fileState{inode: inode, size: stat.Size, cutTo: -1, pages: map[int64][]byte{}}
	c.files[ino] = st
	return st, 0
}

// readBacking reads what the backing file holds for the file at [off, off+len(buf)), zero where the
// file was cut or the backing file ends.
func readBacking(fd int, st *fileState, buf []byte, off int64) syscall.Errno {
	clear(buf)
	limit := int64(len(buf))
	if st != nil && st.cutTo >= 0 {
		limit = min(limit, max(st.cutTo-off, 0))
	}
	for done := int64(0); done < limit; {
		n, err := syscall.Pread(fd, buf[done:limit], off+done)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fs.ToErrno(err)
		}
		if n == 0 {
			break
		}
		done += int64(n)
	}
	return 0
}

func (c *cache) page(fd int, st *fileState, index int64) ([]byte, syscall.Errno) {
	if p, ok := st.pages[index]; ok {
		return p, 0
	}
	p := make([]byte, pageSize)
	if errno := readBacking(fd, st, p, index*pageSize); errno != 0 {
		return nil, errno
	}
	// Bytes past the reader's size are not the file's (a truncation may have cut them).
	if end := st.size - index*pageSize; end < pageSize {
		clear(p[max(end, 0):])
	}
	st.pages[index] = p
	return p, 0
}

func (c *cache) write(ino uint64, inode *fs.Inode, fd int, data []byte, off int64) (uint32, syscall.Errno) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, errno := c.state(ino, inode, fd)
	if errno != 0 {
		return 0, errno
	}
	for done := 0; done < len(data); {
		at := off + int64(done)
		p, errno := c.page(fd, st, at/pageSize)
		if errno != 0 {
			return uint32(done), errno
		}
		done += copy(p[at%pageSize:], data[done:])
	}
	st.size = max(st.size, off+int64(len(data)))
	c.stats.Writes++
	c.stats.WrittenBytes += int64(len(data))
	return uint32(len(data)), 0
}

func (c *cache) read(ino uint64, fd int, buf []byte, off int64) (int, syscall.Errno) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.files[ino]
	if !ok {
		n, err := syscall.Pread(fd, buf, off)
		if err != nil {
			return 0, fs.ToErrno(err)
		}
		return n, 0
	}
	if off >= st.size {
		return 0, 0
	}
	n := min(int64(len(buf)), st.size-off)
	for done := int64(0); done < n; {
		at := off + done
		index, within := at/pageSize, at%pageSize
		chunk := min(pageSize-within, n-done)
		if p, ok := st.pages[index]; ok {
			copy(buf[done:done+chunk], p[within:])
		} else if errno := readBacking(fd, st, buf[done:done+chunk], at); errno != 0 {
			return 0, errno
		}
		done += chunk
	}
	return int(n), 0
}

// truncate records a size change without touching the backing file.
func (c *cache) truncate(ino uint64, inode *fs.Inode, fd int, size int64) syscall.Errno {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, errno := c.state(ino, inode, fd)
	if errno != 0 {
		return errno
	}
	if size < st.size {
		for index, p := range st.pages {
			start := index * pageSize
			switch {
			case start >= size:
				delete(st.pages, index)
			case start+pageSize > size:
				clear(p[size-start:])
			}
		}
		if st.cutTo < 0 || size < st.cutTo {
			st.cutTo = size
		}
	}
	st.size = size
	return 0
}

// sync writes the file's pages through to the backing file and syncs it.
func (c *cache) sync(ino uint64, fd int, dataOnly bool) syscall.Errno {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.Syncs++
	if st, ok := c.files[ino]; ok {
		if st.cutTo >= 0 {
			if err := syscall.Ftruncate(fd, st.cutTo); err != nil {
				return fs.ToErrno(err)
			}
		}
		indexes := make([]int64, 0, len(st.pages))
		for index := range st.pages {
			indexes = append(indexes, index)
		}
		sort.Slice(indexes, func(i, j int) bool { return indexes[i] < indexes[j] })
		for _, index := range indexes {
			start := index * pageSize
			p := st.pages[index][:min(pageSize, st.size-start)]
			for len(p) > 0 {
				n, err := syscall.Pwrite(fd, p, start)
				if err == syscall.EINTR {
					continue
				}
				if err != nil {
					return fs.ToErrno(err)
				}
				p, start = p[n:], start+int64(n)
				c.stats.SyncedBytes += int64(n)
			}
		}
		var stat syscall.Stat_t
		if err := syscall.Fstat(fd, &stat); err != nil {
			return fs.ToErrno(err)
		}
		if stat.Size != st.size {
			if err := syscall.Ftruncate(fd, st.size); err != nil {
				return fs.ToErrno(err)
			}
		}
		delete(c.files, ino)
	}
	var err error
	if dataOnly {
		err = syscall.Fdatasync(fd)
	} else {
		err = syscall.Fsync(fd)
	}
	return fs.ToErrno(err)
}

// forget drops a file's state when its last name is gone: its data can no longer be lost or found.
func (c *cache) forget(ino uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.files[ino]; ok {
		delete(c.files, ino)
		c.stats.DroppedOnUnlink++
	}
}

// size returns the size a reader sees, if the cache holds the file.
func (c *cache) size(ino uint64) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.files[ino]
	if !ok {
		return 0, false
	}
	return st.size, true
}

// loseUnsynced discards everything not synced, as a power loss would, and returns the inodes whose
// kernel caches must be told.
func (c *cache) loseUnsynced() (Loss, []*fs.Inode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var loss Loss
	var stale []*fs.Inode
	for _, st := range c.files {
		loss.Files++
		loss.Bytes += int64(len(st.pages)) * pageSize
		if st.inode != nil {
			stale = append(stale, st.inode)
		}
	}
	c.files = map[uint64]*fileState{}
	c.stats.Losses++
	c.stats.LostFiles += int64(loss.Files)
	c.stats.LostBytes += loss.Bytes
	return loss, stale
}

func (c *cache) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.UnsyncedFiles = len(c.files)
	for _, st := range c.files {
		s.UnsyncedBytes += int64(len(st.pages)) * pageSize
	}
	return s
}
