package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/benchcpu"
)

// BenchmarkServerEcho measures pipelined echo calls over loopback: conns plain net.Conn
// clients each keep up to window requests in flight, written batch frames per write, and
// count the replies. One op is one call answered. Allocations include the client's (none per
// call) and the server's.
func BenchmarkServerEcho(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 128)
	for _, m := range []struct {
		name string
		opts []Option
	}{
		{name: "inline", opts: []Option{WithWorkers(0)}},
		{name: "workers", opts: []Option{WithWorkers(4)}},
	} {
		for _, conns := range []int{1, 4} {
			b.Run(fmt.Sprintf("%s/conns=%d", m.name, conns), func(b *testing.B) {
				benchEcho(b, body, conns, m.opts...)
			})
		}
	}
}

func benchEcho(b *testing.B, body []byte, conns int, opts ...Option) {
	const (
		batch  = 32 // requests per write
		window = 8  // batches in flight per connection
	)
	_, addr := startServer(b, func(s *Server) {
		mustHandle(b, s, pbServant, "Echo", echo)
	}, opts...)

	// One batch of requests, written again and again; ids do not matter to the server.
	var frames []byte
	for i := range batch {
		frames = codec.AppendRequest(frames, request(int32(i+1), pbServant, "Echo", body))
	}
	rspLen := len(codec.AppendResponse(nil, &codec.ResponsePacket{
		Version: codec.VersionTars, RequestID: 1, Buffer: body,
	}))

	cs := make([]net.Conn, conns)
	for i := range cs {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		cs[i] = c
	}
	batches := (b.N + batch - 1) / batch
	b.ReportAllocs()
	b.SetBytes(int64(len(frames) / batch))
	b.ResetTimer()
	cpu0 := benchcpu.Used(b)

	var wg sync.WaitGroup
	errs := make(chan error, 2*conns)
	for i, c := range cs {
		n := batches / conns
		if i < batches%conns {
			n++
		}
		credits := make(chan struct{}, window)
		for range window {
			credits <- struct{}{}
		}
		wg.Add(2)
		go func() { // writer
			defer wg.Done()
			for range n {
				<-credits
				if _, err := c.Write(frames); err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() { // reader: counts whole replies
			defer wg.Done()
			buf := make([]byte, 64<<10)
			want := n * batch
			got, have := 0, 0
			for got < want {
				k, err := c.Read(buf[have:])
				if err != nil {
					errs <- err
					return
				}
				have += k
				off := 0
				for have-off >= 4 {
					l := int(binary.BigEndian.Uint32(buf[off:]))
					if l != rspLen {
						errs <- fmt.Errorf("reply of %d bytes, want %d", l, rspLen)
						return
					}
					if have-off < l {
						break
					}
					off += l
					if got++; got%batch == 0 && got < want {
						credits <- struct{}{}
					}
				}
				have = copy(buf, buf[off:have])
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	// CPU time of the whole process (client and server) per call: steadier than ns/op on a
	// shared machine.
	benchcpu.Report(b, cpu0)
	close(errs)
	for err := range errs {
		if !errors.Is(err, io.EOF) {
			b.Fatal(err)
		}
	}
}

// BenchmarkServeFrames measures the server's own work per request, without the network: it
// hands batches of 32 pipelined echo requests to the loop's serve, frame by frame as OnTraffic does,
// and encodes the replies. One op is one request. "raw" echoes the body with a HandlerFunc,
// "proto" unmarshals and marshals a protobuf message through HandleProto.
func BenchmarkServeFrames(b *testing.B) {
	payload := bytes.Repeat([]byte("x"), 128)
	pb, err := proto.Marshal(wrapperspb.Bytes(payload))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("raw", func(b *testing.B) {
		benchServeFrames(b, payload, func(s *Server) { mustHandle(b, s, pbServant, "Echo", echo) })
	})
	b.Run("proto", func(b *testing.B) {
		benchServeFrames(b, pb, func(s *Server) {
			err := HandleProto(s, pbServant, "Echo",
				func(_ context.Context, _ *Current, req *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error) {
					return req, nil
				})
			if err != nil {
				b.Fatal(err)
			}
		})
	})
}

func benchServeFrames(b *testing.B, body []byte, setup func(s *Server)) {
	const batch = 32
	s := New()
	setup(s)
	s.mu.Lock()
	s.state = stateRunning // handlers frozen, as after Start
	s.mu.Unlock()
	s.baseCtx = context.Background()
	l := &loop{s: s, rsp: newScratch()}
	cs := &conn{loop: l}
	var frames []byte
	for i := range batch {
		frames = codec.AppendRequest(frames, request(int32(i+1), pbServant, "Echo", body))
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(frames) / batch))
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		l.out.b = l.out.b[:0]
		for off := 0; off < len(frames); {
			frame, n, err := codec.NextFrame(frames[off:], 0)
			if err != nil || frame == nil || !l.serve(cs, frame, false) {
				b.Fatalf("frame at %d: %v", off, err)
			}
			off += n
		}
	}
}
