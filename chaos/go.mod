module github.com/mesh/mesh-state/chaos

go 1.26

require (
	github.com/anishathalye/porcupine v1.3.1 // indirect
	github.com/hanwen/go-fuse/v2 v2.12.1 // indirect
	golang.org/x/sys v0.28.0 // indirect
)
