package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/benchcpu"
)

// BenchmarkLargeServer measures the server's work per large echo call over loopback: one call
// at a time from a plain net.Conn that writes a prebuilt request and reads the reply into a
// buffer it reuses, so that B/op is what the server allocates per call (the client allocates
// nothing per call). "raw" echoes with a HandlerFunc, "proto" through HandleProto (whose
// Unmarshal copies the payload once: its allocation is the handler's).
func BenchmarkLargeServer(b *testing.B) {
	for _, m := range []struct {
		name string
		opts []Option
	}{{"inline", nil}, {"workers", []Option{WithWorkers(2)}}} {
		for _, h := range []string{"raw", "proto"} {
			for _, n := range []int{1 << 20, 8 << 20} {
				b.Run(fmt.Sprintf("%s/%s/%dMiB", m.name, h, n>>20), func(b *testing.B) {
					benchLargeServer(b, h, n, m.opts)
				})
			}
		}
	}
}

func benchLargeServer(b *testing.B, handler string, n int, opts []Option) {
	payload := bytes.Repeat([]byte{0x5a}, n)
	body := payload
	setup := func(s *Server) { mustHandle(b, s, pbServant, "Echo", echo) }
	if handler == "proto" {
		var err error
		if body, err = proto.Marshal(wrapperspb.Bytes(payload)); err != nil {
			b.Fatal(err)
		}
		setup = func(s *Server) {
			err := HandleProto(s, pbServant, "Echo",
				func(_ context.Context, _ *Current, req *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error) {
					return req, nil
				})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	_, addr := startServer(b, setup, append([]Option{WithMaxPacketSize(64 << 20)}, opts...)...)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := codec.AppendRequest(nil, request(1, pbServant, "Echo", body))
	buf := make([]byte, len(body)+1024)
	call := func() {
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf[:4]); err != nil {
			b.Fatal(err)
		}
		l := int(binary.BigEndian.Uint32(buf))
		if l < len(body) || l > len(buf) {
			b.Fatalf("reply of %d bytes to a body of %d", l, len(body))
		}
		if _, err := io.ReadFull(c, buf[4:l]); err != nil {
			b.Fatal(err)
		}
	}
	for range 3 { // the server's buffers reach their size
		call()
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := benchcpu.Used(b)
	for range b.N {
		call()
	}
	b.StopTimer()
	benchcpu.Report(b, cpu0)
}
