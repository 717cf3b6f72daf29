// Package lazyfs is a FUSE passthrough file system that keeps written data in memory until the file is
// fsynced (then writes it through) and, on command, discards everything not yet synced, as a power loss
// would. It is the fault "an fsync that never reached the disk", after Jepsen's LazyFS.
//
// Metadata (create, rename, unlink, mkdir, chmod) goes to the backing directory at once and survives a
// loss; only file contents and sizes are held back. The backing directory must be one file system.
package lazyfs

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// FS is one mounted lazyfs.
type FS struct {
	Backing    string
	Mountpoint string
	server     *fuse.Server
	cache      *cache
}

// Mount mounts a lazyfs over backing at mountpoint (both existing directories).
func Mount(backing, mountpoint string) (*FS, error) {
	backing, err := filepath.Abs(backing)
	if err != nil {
		return nil, err
	}
	var st syscall.Stat_t
	if err := syscall.Stat(backing, &st); err != nil {
		return nil, fmt.Errorf("lazyfs: backing %s: %w", backing, err)
	}
	c := newCache()
	root := &fs.LoopbackRoot{Path: backing, Dev: uint64(st.Dev)}
	rootNode := &node{LoopbackNode: fs.LoopbackNode{RootData: root}, cache: c}
	root.RootNode = rootNode
	// No kernel caching of attributes or names: a size the cache changes must be seen at once.
	zero := time.Duration(0)
	server, err := fs.Mount(mountpoint, rootNode, &fs.Options{
		EntryTimeout: &zero, AttrTimeout: &zero, NegativeTimeout: &zero,
		MountOptions: fuse.MountOptions{FsName: "lazyfs:" + backing, Name: "lazyfs", DirectMount: true},
	})
	if err != nil {
		return nil, fmt.Errorf("lazyfs: mount %s: %w", mountpoint, err)
	}
	return &FS{Backing: backing, Mountpoint: mountpoint, server: server, cache: c}, nil
}

// LoseUnsynced discards every write not yet synced and tells the kernel its cached pages are stale.
func (f *FS) LoseUnsynced() Loss {
	loss, stale := f.cache.loseUnsynced()
	for _, inode := range stale {
		// ENOENT means the kernel already forgot the inode, and with it its pages.
		_ = inode.NotifyContent(0, 0)
	}
	return loss
}

// Stats returns the counters since the mount.
func (f *FS) Stats() Stats { return f.cache.snapshot() }

// Unmount unmounts. While a process holds a file open in the mount the unmount is lazy: the mount
// leaves the tree at once and goes when the last file closes.
func (f *FS) Unmount() error {
	err := f.server.Unmount()
	if err == nil {
		return nil
	}
	if detachErr := syscall.Unmount(f.Mountpoint, syscall.MNT_DETACH); detachErr != nil {
		return fmt.Errorf("lazyfs: unmount %s: %w (detach: %v)", f.Mountpoint, err, detachErr)
	}
	return nil
}

// Wait blocks until the file system is unmounted.
func (f *FS) Wait() { f.server.Wait() }

type node struct {
	fs.LoopbackNode
	cache *cache
}

// WrapChild makes every node the loopback creates below a lazyfs node a lazyfs node too, sharing the cache: go-fuse
// calls it before the new inode is initialised, so the loopback node it replaces holds nothing yet.
func (n *node) WrapChild(_ context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &node{LoopbackNode: fs.LoopbackNode{RootData: ops.(*fs.LoopbackNode).RootData}, cache: n.cache}
}

var (
	_ fs.NodeWrapChilder    = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeGetattrer      = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeStatxer        = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeCopyFileRanger = (*node)(nil)
	_ fs.NodeTmpfiler       = (*node)(nil)
	_ fs.FileReader         = (*file)(nil)
	_ fs.FileWriter         = (*file)(nil)
	_ fs.FileFsyncer        = (*file)(nil)
	_ fs.FileReleaser       = (*file)(nil)
	_ fs.FileFlusher        = (*file)(nil)
	_ fs.FileGetattrer      = (*file)(nil)
)

func (n *node) backingPath(name string) string {
	return filepath.Join(n.RootData.Path, n.Path(n.RootData.RootNode.EmbeddedInode()), name)
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	// A truncation on open is held back like any other: the backing file keeps its bytes until a sync.
	fh, fuseFlags, errno := n.LoopbackNode.Open(ctx, readWrite(flags)&^syscall.O_TRUNC)
	if errno == syscall.EACCES {
		fh, fuseFlags, errno = n.LoopbackNode.Open(ctx, flags&^syscall.O_TRUNC)
	}
	if errno != 0 {
		return nil, 0, errno
	}
	f, errno := n.wrap(fh, flags)
	if errno == 0 && flags&syscall.O_TRUNC != 0 {
		errno = n.cache.truncate(f.ino, f.inode, f.fd, 0)
	}
	return f, fuseFlags, errno
}

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	inode, fh, fuseFlags, errno := n.LoopbackNode.Create(ctx, name, readWrite(flags)&^syscall.O_TRUNC, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	child := inode.Operations().(*node)
	f, errno := child.wrap(fh, flags)
	if errno == 0 && flags&syscall.O_TRUNC != 0 {
		errno = n.cache.truncate(f.ino, inode, f.fd, 0)
	}
	if size, ok := n.cache.size(f.ino); ok {
		out.Size = uint64(size)
	}
	return inode, f, fuseFlags, errno
}

// readWrite opens the backing file for reading and writing whatever the caller asked: a partial page
// write reads the page first, and an fsync through a read-only descriptor writes the pages out.
func readWrite(flags uint32) uint32 {
	return flags&^syscall.O_ACCMODE | syscall.O_RDWR
}

// wrap takes the loopback's handle apart for its descriptor: our handle must not offer passthrough,
// which would let the kernel write to the backing file behind the cache.
func (n *node) wrap(fh fs.FileHandle, flags uint32) (*file, syscall.Errno) {
	lf, ok := fh.(*fs.LoopbackFile)
	if !ok {
		return nil, syscall.EIO
	}
	fd, ok := lf.PassthroughFd()
	if !ok {
		return nil, syscall.EBADF
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, fs.ToErrno(err)
	}
	return &file{
		handle: lf, fd: fd, ino: st.Ino, inode: n.EmbeddedInode(), cache: n.cache,
		syncEachWrite: flags&(syscall.O_SYNC|syscall.O_DSYNC) != 0,
	}, 0
}

func (n *node) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if f, ok := fh.(*file); ok {
		return f.Getattr(ctx, out)
	}
	if errno := n.LoopbackNode.Getattr(ctx, nil, out); errno != 0 {
		return errno
	}
	if size, ok := n.cache.size(out.Ino); ok {
		out.Size = uint64(size)
	}
	return 0
}

func (n *node) Statx(ctx context.Context, fh fs.FileHandle, flags, mask uint32, out *fuse.StatxOut) syscall.Errno {
	if errno := n.LoopbackNode.Statx(ctx, nil, flags, mask, out); errno != 0 {
		return errno
	}
	if size, ok := n.cache.size(out.Ino); ok {
		out.Size = uint64(size)
	}
	return 0
}

func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if size, ok := in.GetSize(); ok {
		fd, closeFd, errno := n.descriptor(fh)
		if errno != 0 {
			return errno
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			closeFd()
			return fs.ToErrno(err)
		}
		errno = n.cache.truncate(st.Ino, n.EmbeddedInode(), fd, int64(size))
		closeFd()
		if errno != 0 {
			return errno
		}
		in.Valid &^= fuse.FATTR_SIZE
	}
	if errno := n.LoopbackNode.Setattr(ctx, nil, in, out); errno != 0 {
		return errno
	}
	if size, ok := n.cache.size(out.Ino); ok {
		out.Size = uint64(size)
	}
	return 0
}

// descriptor returns the open handle's descriptor, or opens the backing file for a truncate by path.
func (n *node) descriptor(fh fs.FileHandle) (int, func(), syscall.Errno) {
	if f, ok := fh.(*file); ok {
		return f.fd, func() {}, 0
	}
	fd, err := syscall.Open(n.backingPath(""), syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, nil, fs.ToErrno(err)
	}
	return fd, func() { syscall.Close(fd) }, 0
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	var st syscall.Stat_t
	statErr := syscall.Lstat(n.backingPath(name), &st)
	if errno := n.LoopbackNode.Unlink(ctx, name); errno != 0 {
		return errno
	}
	if statErr == nil && st.Nlink <= 1 {
		n.cache.forget(st.Ino)
	}
	return 0
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	target := filepath.Join(n.RootData.Path, newParent.EmbeddedInode().Path(n.RootData.RootNode.EmbeddedInode()), newName)
	var before, replaced syscall.Stat_t
	sourceErr := syscall.Lstat(n.backingPath(name), &before)
	targetErr := syscall.Lstat(target, &replaced)
	if errno := n.LoopbackNode.Rename(ctx, name, newParent, newName, flags); errno != 0 {
		return errno
	}
	// A file replaced by the rename lost its last name (unless it was the source itself, or exchanged).
	if targetErr == nil && (sourceErr != nil || replaced.Ino != before.Ino) && replaced.Nlink <= 1 && flags&fs.RENAME_EXCHANGE == 0 {
		n.cache.forget(replaced.Ino)
	}
	return 0
}

// CopyFileRange is refused so the kernel falls back to reads and writes, which the cache sees.
func (n *node) CopyFileRange(context.Context, fs.FileHandle, uint64, *fs.Inode, fs.FileHandle, uint64, uint64, uint64) (uint32, syscall.Errno) {
	return 0, syscall.EOPNOTSUPP
}

// Tmpfile is refused: the loopback's O_TMPFILE handle would write past the cache.
func (n *node) Tmpfile(context.Context, uint32, uint32, *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EOPNOTSUPP
}

type file struct {
	handle        *fs.LoopbackFile // owns fd; closed on Release
	fd            int
	ino           uint64
	inode         *fs.Inode
	cache         *cache
	syncEachWrite bool
}

func (f *file) Read(ctx context.Context, buf []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n, errno := f.cache.read(f.ino, f.fd, buf, off)
	if errno != 0 {
		return nil, errno
	}
	return fuse.ReadResultData(buf[:n]), 0
}

func (f *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	n, errno := f.cache.write(f.ino, f.inode, f.fd, data, off)
	if errno == 0 && f.syncEachWrite {
		f.cache.mu.Lock()
		f.cache.stats.WriteThroughs++
		f.cache.mu.Unlock()
		errno = f.cache.sync(f.ino, f.fd, true)
	}
	return n, errno
}

func (f *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	// FUSE_FSYNC_FDATASYNC is bit 0 of the flags.
	return f.cache.sync(f.ino, f.fd, flags&1 != 0)
}

// Flush is close(2) on one descriptor: it does not sync, as on a local disk.
func (f *file) Flush(ctx context.Context) syscall.Errno { return 0 }

func (f *file) Release(ctx context.Context) syscall.Errno { return f.handle.Release(ctx) }

func (f *file) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	if errno := f.handle.Getattr(ctx, out); errno != 0 {
		return errno
	}
	if size, ok := f.cache.size(f.ino); ok {
		out.Size = uint64(size)
	}
	return 0
}
