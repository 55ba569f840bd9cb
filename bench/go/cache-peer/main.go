// The peer of `make bench`: a grpc-go server of cache.v1.CacheGrpcService (proto/cache/v1) with
// an in-memory map, answering Get, Set and Remove as the cache service's memory backend does. It
// shows what one call costs a compiled gRPC stack on this machine. The cachev1 package is
// generated at build time by protoc with protoc-gen-go and protoc-gen-go-grpc (bench/lib/go-peer.sh).
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"

	cachev1 "sp.local/bench/cache-peer/cachev1"
)

type entry struct {
	value     []byte
	expiresAt int64
}

type server struct {
	cachev1.UnimplementedCacheGrpcServiceServer
	mu      sync.RWMutex
	entries map[string]entry
}

func (s *server) Get(_ context.Context, req *cachev1.CacheRequest) (*cachev1.CacheResponse, error) {
	s.mu.RLock()
	e, ok := s.entries[req.GetKey()]
	s.mu.RUnlock()
	if !ok || (e.expiresAt != 0 && e.expiresAt <= time.Now().UnixMilli()) {
		return &cachev1.CacheResponse{}, nil
	}
	return &cachev1.CacheResponse{Found: true, Value: e.value, ExpiresAtUnixMs: e.expiresAt}, nil
}

func (s *server) Set(_ context.Context, req *cachev1.CacheRequest) (*cachev1.CacheResponse, error) {
	var expiresAt int64
	if req.GetTtlMs() > 0 {
		expiresAt = time.Now().UnixMilli() + req.GetTtlMs()
	}
	s.mu.Lock()
	s.entries[req.GetKey()] = entry{value: req.GetValue(), expiresAt: expiresAt}
	s.mu.Unlock()
	return &cachev1.CacheResponse{Found: true, ExpiresAtUnixMs: expiresAt}, nil
}

func (s *server) Remove(_ context.Context, req *cachev1.CacheRequest) (*cachev1.CacheResponse, error) {
	s.mu.Lock()
	_, found := s.entries[req.GetKey()]
	delete(s.entries, req.GetKey())
	s.mu.Unlock()
	return &cachev1.CacheResponse{Found: found}, nil
}

func main() {
	listener, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("PORT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	grpcServer := grpc.NewServer()
	cachev1.RegisterCacheGrpcServiceServer(grpcServer, &server{entries: map[string]entry{}})
	go func() {
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
		<-stop
		grpcServer.Stop()
	}()
	fmt.Printf("listening %d\n", listener.Addr().(*net.TCPAddr).Port)
	if err := grpcServer.Serve(listener); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
