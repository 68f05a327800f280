package netthread

import (
	"bytes"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/internal/call"
)

// TestLargeFrameGivenBackOnceWritten: a call whose request frame is larger than a pooled Call
// keeps gives the frame back as soon as it is written, not when its reply comes: while the
// server holds each request, the loop finds the call without its frame. A small frame stays
// with its call, to be reused. Each reply echoes the request, so the bytes the server read
// were the frame's. Sizes: one written through gnet (256 KiB), one by the large-frame path
// (2 MiB), one small.
func TestLargeFrameGivenBackOnceWritten(t *testing.T) {
	h := newHeld(t)
	for _, size := range []int{256 << 10, 2 << 20, 1 << 10} {
		body := bytes.Repeat([]byte{byte(size >> 10)}, size)
		c, err := h.submit(body, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if n := h.arrived(t); n != size {
			t.Fatalf("the server read a %d-byte request, want %d", n, size)
		}
		// The whole frame was written (the server has it all); the reply is held.
		frame := make(chan int, 1)
		h.th.Execute(func() { frame <- cap(c.Frame) })
		var frameCap int
		select {
		case frameCap = <-frame:
		case <-time.After(10 * time.Second):
			t.Fatal("the loop did not run the check")
		}
		if size > 64<<10 && frameCap != 0 {
			t.Errorf("%d-byte call: its %d-byte frame is still held while the reply is awaited", size, frameCap)
		}
		if size <= 64<<10 && frameCap == 0 {
			t.Errorf("%d-byte call: its small frame was dropped, not kept for reuse", size)
		}
		h.release <- struct{}{}
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("the %d-byte call did not end", size)
		}
		if c.Err != nil || c.Ret != 0 || !bytes.Equal(c.Body, body) {
			t.Fatalf("%d-byte call: err %v ret %d, %d body bytes (equal %v)", size, c.Err, c.Ret, len(c.Body), bytes.Equal(c.Body, body))
		}
		call.Put(c)
	}
}
