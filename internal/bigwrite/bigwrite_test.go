package bigwrite

import (
	"bytes"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestVectorToSlowReader: a vector of more slices than one writev takes, of sizes from 0 bytes
// to megabytes, written first with DirectVec and then, from where the socket stopped taking
// bytes, by a Writer (StartVec) to a TCP peer that reads in small pieces: the peer receives
// every byte once and in order.
func TestVectorToSlowReader(t *testing.T) {
	defer goleak.VerifyNone(t)
	src, dst := tcpPair(t)

	var bs [][]byte
	var want []byte
	for i := range 3*iovMax + 5 {
		n := (i * 7919) % 100
		if i%5 == 0 {
			n = 1<<20 + i
		}
		b := bytes.Repeat([]byte{byte(i)}, n)
		bs = append(bs, b)
		want = append(want, b...)
	}

	raw, err := src.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var w *Writer
	var first int
	cerr := raw.Control(func(fd uintptr) {
		var ok bool
		if first, ok = DirectVec(int(fd), bs); !ok {
			t.Error("DirectVec: the socket failed")
			return
		}
		w, err = StartVec(int(fd), bs, first)
	})
	if cerr != nil || err != nil || w == nil {
		t.Fatalf("start: %v, %v", cerr, err)
	}
	if first >= len(want) {
		t.Fatalf("the socket took all %d bytes at once: the writer has nothing to do", first)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()

	got := make([]byte, 0, len(want))
	buf := make([]byte, 64<<10)
	_ = dst.SetReadDeadline(time.Now().Add(10 * time.Second))
	for len(got) < len(want) {
		n, err := dst.Read(buf)
		if err != nil && err != io.EOF {
			t.Fatalf("read after %d of %d bytes: %v", len(got), len(want), err)
		}
		got = append(got, buf[:n]...)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if w.Left() != 0 {
		t.Fatalf("Left = %d after Run, want 0", w.Left())
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && got[i] == want[i] {
			i++
		}
		t.Fatalf("the peer's %d bytes differ from the %d written, first at %d", len(got), len(want), i)
	}
}

// TestSkip: Skip drops whole slices, then part of one.
func TestSkip(t *testing.T) {
	bs := [][]byte{[]byte("ab"), nil, []byte("cde"), []byte("f")}
	got := Skip(bs, 3)
	if len(got) != 2 || string(got[0]) != "de" || string(got[1]) != "f" {
		t.Fatalf("Skip 3: %q", got)
	}
	if got := Skip([][]byte{[]byte("ab")}, 2); len(got) != 0 && len(got[0]) != 0 {
		t.Fatalf("Skip all: %q", got)
	}
}

// tcpPair returns the two ends of a TCP connection on 127.0.0.1; t.Cleanup closes them.
func tcpPair(t *testing.T) (src, dst net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	src, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	dst, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dst.Close() })
	return src, dst
}
