package faultproxy

import (
	"net"
	"time"
)

// throttleQuantum is the pacing step of a throttled direction: each write is at most what the
// rate allows in this much time, followed by a pause of that length.
const throttleQuantum = 10 * time.Millisecond

// Throttle limits the sides in dir to about bytesPerSecond each, on current and new connections
// (0 or less: unlimited again). The limit applies to what the Proxy writes: bytes are written in
// small pieces with pauses between them, so the receiver sees a slow link, while the Proxy keeps
// reading the sender until its queue is full (then TCP flow control pushes back on the sender).
// A change takes effect at the next piece. Pass removes every throttle.
func (p *Proxy) Throttle(dir Direction, bytesPerSecond int) {
	r := int64(max(bytesPerSecond, 0))
	if dir&Up != 0 {
		p.throttle[0].Store(r)
	}
	if dir&Down != 0 {
		p.throttle[1].Store(r)
	}
}

// rate returns dir's throttle in bytes per second; 0 means unlimited.
func (p *Proxy) rate(dir Direction) int64 {
	if dir == Down {
		return p.throttle[1].Load()
	}
	return p.throttle[0].Load()
}

// writeChunk writes b to dst, paced by dir's throttle. It returns early, with what it wrote, if
// a write fails or the pair ends.
func (c *pair) writeChunk(dir Direction, dst net.Conn, b []byte) (int, error) {
	written := 0
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for len(b) > 0 {
		r := c.p.rate(dir)
		if r <= 0 {
			n, err := dst.Write(b)
			return written + n, err
		}
		piece := int(max(r*int64(throttleQuantum)/int64(time.Second), 1))
		piece = min(piece, len(b))
		n, err := dst.Write(b[:piece])
		written += n
		if err != nil {
			return written, err
		}
		b = b[piece:]
		pause := time.Duration(int64(piece) * int64(time.Second) / r)
		if timer == nil {
			timer = time.NewTimer(pause)
		} else {
			timer.Reset(pause)
		}
		select {
		case <-timer.C:
		case <-c.done:
			return written, net.ErrClosed
		}
	}
	return written, nil
}
