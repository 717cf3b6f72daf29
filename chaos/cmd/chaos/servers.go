package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mesh/mesh-state/chaos/lazyfs"
	"github.com/mesh/mesh-state/chaos/netns"
)

// server is one nats-server node in its own namespace, its store on a lazyfs mount when asked.
type server struct {
	name, addr, store, config string
	lazy                      *lazyfs.FS
	mu                        sync.Mutex
	cmd                       *exec.Cmd
	exited                    chan struct{}
	paused                    bool
}

// cluster is the nodes, their namespaces and what the driver did to them.
type cluster struct {
	net      *netns.Cluster
	servers  []*server
	bin, out string
	pids     []int // every server pid started, to prove none is left
}

func (c *cluster) writeConfigs(accounts, syncInterval string) error {
	for _, s := range c.servers {
		var routes []string
		for _, other := range c.servers {
			if other != s {
				routes = append(routes, fmt.Sprintf("nats-route://%s:6222", other.addr))
			}
		}
		sync := ""
		if syncInterval != "" {
			sync = "\n  sync_interval: " + syncInterval
		}
		conf := fmt.Sprintf(`server_name: %s
listen: %s:4222
http: %s:8222
jetstream {
  store_dir: %q%s
}
cluster {
  name: chaos
  listen: %s:6222
  routes: [%s]
}
%s`, s.name, s.addr, s.addr, s.store, sync, s.addr, strings.Join(routes, ", "), accounts)
		if err := os.WriteFile(s.config, []byte(conf), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (c *cluster) start(ctx context.Context, s *server) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	logFile, err := os.OpenFile(filepath.Join(c.out, s.name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd, err := c.net.Command(context.WithoutCancel(ctx), s.name, c.bin, "-c", s.config)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return err
	}
	c.pids = append(c.pids, cmd.Process.Pid)
	s.cmd, s.exited, s.paused = cmd, make(chan struct{}), false
	go func(cmd *exec.Cmd, exited chan struct{}) {
		cmd.Wait()
		logFile.Close()
		close(exited)
	}(cmd, s.exited)
	return nil
}

func (c *cluster) signal(s *server, sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return fmt.Errorf("%s is not running", s.name)
	}
	if sig == syscall.SIGSTOP {
		s.paused = true
	}
	if sig == syscall.SIGCONT {
		s.paused = false
	}
	return s.cmd.Process.Signal(sig)
}

// state says whether the node's process runs and whether it is paused.
func (s *server) state() (running, paused bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil, s.paused
}

// take marks the node stopped and hands over its process (nil when it was not running).
func (s *server) take() (*exec.Cmd, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	return cmd, exited
}

// kill SIGKILLs the node and waits for it to be gone.
func (c *cluster) kill(s *server) {
	cmd, exited := s.take()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// stop ends the node gently (SIGCONT first: a paused server cannot act on SIGTERM), then SIGKILL after 10 s.
func (c *cluster) stop(s *server) {
	cmd, exited := s.take()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGCONT)
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		cmd.Process.Signal(syscall.SIGKILL)
		<-exited
	}
}

func (c *cluster) byName(name string) *server {
	for _, s := range c.servers {
		if s.name == name {
			return s
		}
	}
	return nil
}

// streamInfo is what one node's monitoring endpoint says about the bucket's stream.
type streamInfo struct {
	Leader    string
	Current   int // replicas (leader included) that are current
	Replicas  int
	LastSeq   uint64
	Consumers int
	Followers []string // the replicas that are not the leader
}

// jsz asks one node's monitoring port from the clients' namespace (the driver's own has no route
// to the cluster's addresses); a paused or cut-off node does not answer within the timeout.
func (c *cluster) jsz(s *server, timeout time.Duration) (map[string]streamInfo, error) {
	var body []byte
	err := c.net.Do("clients", func() error {
		conn, err := net.DialTimeout("tcp", s.addr+":8222", timeout)
		if err != nil {
			return err
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(timeout))
		fmt.Fprintf(conn, "GET /jsz?accounts=true&streams=true HTTP/1.0\r\nHost: %s\r\n\r\n", s.addr)
		body, err = io.ReadAll(conn)
		return err
	})
	if err != nil {
		return nil, err
	}
	if i := strings.Index(string(body), "\r\n\r\n"); i >= 0 {
		body = body[i+4:]
	}
	var reply struct {
		Accounts []struct {
			Name    string `json:"name"`
			Streams []struct {
				Name    string `json:"name"`
				Cluster *struct {
					Leader   string `json:"leader"`
					Replicas []struct {
						Name    string `json:"name"`
						Current bool   `json:"current"`
					} `json:"replicas"`
				} `json:"cluster"`
				State struct {
					LastSeq   uint64 `json:"last_seq"`
					Consumers int    `json:"consumer_count"`
				} `json:"state"`
			} `json:"stream_detail"`
		} `json:"account_details"`
	}
	if err := json.Unmarshal(body, &reply); err != nil {
		return nil, fmt.Errorf("jsz of %s: %w", s.name, err)
	}
	streams := map[string]streamInfo{}
	for _, account := range reply.Accounts {
		for _, stream := range account.Streams {
			info := streamInfo{LastSeq: stream.State.LastSeq, Consumers: stream.State.Consumers}
			if stream.Cluster != nil {
				info.Leader = stream.Cluster.Leader
				info.Replicas = 1 + len(stream.Cluster.Replicas)
				info.Current = 1
				for _, r := range stream.Cluster.Replicas {
					info.Followers = append(info.Followers, r.Name)
					if r.Current {
						info.Current++
					}
				}
			}
			streams[stream.Name] = info
		}
	}
	return streams, nil
}

// placement is the bucket stream's leader and followers as the first node to answer reports them
// (empty when none knows).
func (c *cluster) placement(stream string) (leader string, followers []string) {
	for _, s := range c.servers {
		if streams, err := c.jsz(s, time.Second); err == nil && streams[stream].Leader != "" {
			return streams[stream].Leader, streams[stream].Followers
		}
	}
	return "", nil
}
