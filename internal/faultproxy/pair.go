package faultproxy

import (
	"net"
	"sync"
	"time"
)

// readBuf is the size of one read, hence the largest chunk.
const readBuf = 32 << 10

// chunkQueue is how many chunks one direction holds between its reader and its writer (while
// delayed); a full queue stops the reader, so a slow side is pushed back on, not buffered.
const chunkQueue = 64

// chunk is what a reader read, waiting for its writer.
type chunk struct {
	b          []byte
	due        time.Time // forward not before this
	closeAfter bool      // close the connection once b is written
}

// pair is one forwarded connection: the client's socket and the upstream's, with a reader and a
// writer goroutine per direction.
type pair struct {
	p              *Proxy
	client, server net.Conn

	once sync.Once
	done chan struct{} // closed by close
}

// start runs the pair's four goroutines; the caller holds a count of p.wg.
func (c *pair) start() {
	up := make(chan chunk, chunkQueue)
	down := make(chan chunk, chunkQueue)
	c.p.wg.Add(4)
	go c.read(Up, up)
	go c.write(Up, up)
	go c.read(Down, down)
	go c.write(Down, down)
}

// close ends the pair, with RSTs if reset, and reports whether this call closed it.
func (c *pair) close(rst bool) bool {
	closed := false
	c.once.Do(func() {
		closed = true
		close(c.done)
		for _, nc := range []net.Conn{c.client, c.server} {
			if rst {
				reset(nc)
			} else {
				_ = nc.Close()
			}
		}
		c.p.mu.Lock()
		delete(c.p.pairs, c)
		c.p.mu.Unlock()
		c.p.stats.active.Add(-1)
	})
	return closed
}

func (c *pair) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// read reads the source side of dir and queues what it reads for write, applying the black hole,
// the stall and, downward, a pending replacement. It closes out when the source ends.
func (c *pair) read(dir Direction, out chan<- chunk) {
	defer c.p.wg.Done()
	defer close(out)
	p := c.p
	src := c.client
	dropped, ended := &p.stats.droppedUp, &p.stats.clientCloses
	if dir == Down {
		src = c.server
		dropped, ended = &p.stats.droppedDown, &p.stats.serverCloses
	}
	buf := make([]byte, readBuf)
	for {
		if !c.waitUnstalled(dir) {
			return
		}
		n, err := src.Read(buf)
		// A read that was under way when the stall began is held too.
		if n > 0 && !c.waitUnstalled(dir) {
			return
		}
		if n > 0 {
			ck := chunk{b: buf[:n]}
			replaced := false
			if dir == Down {
				if r := p.replace.Swap(nil); r != nil {
					ck.b, ck.closeAfter, replaced = r.b, r.closeAfter, true
				}
			}
			if !replaced && Direction(p.blackhole.Load())&dir != 0 {
				dropped.Add(int64(n))
			} else {
				if !replaced {
					ck.b = append([]byte(nil), ck.b...)
				}
				if d := p.delay.Load(); d > 0 {
					ck.due = time.Now().Add(time.Duration(d))
				}
				select {
				case out <- ck:
				case <-c.done:
					return
				}
			}
		}
		if err != nil {
			if !c.isClosed() {
				ended.Add(1)
			}
			return
		}
	}
}

// waitUnstalled waits while dir is stalled; it reports false if the pair ended meanwhile.
func (c *pair) waitUnstalled(dir Direction) bool {
	p := c.p
	for {
		changed := p.changes()
		if Direction(p.stall.Load())&dir == 0 {
			return true
		}
		select {
		case <-changed:
		case <-c.done:
			return false
		}
	}
}

// write forwards the chunks of dir to their destination when they are due. When the reader ends
// (its side closed) it writes what is queued and closes the pair.
func (c *pair) write(dir Direction, in <-chan chunk) {
	defer c.p.wg.Done()
	p := c.p
	dst := c.server
	sent := &p.stats.bytesUp
	if dir == Down {
		dst = c.client
		sent = &p.stats.bytesDown
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for ck := range in {
		if wait := time.Until(ck.due); wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			select {
			case <-timer.C:
			case <-c.done:
				return
			}
		}
		n, err := c.writeChunk(dir, dst, ck.b)
		sent.Add(int64(n))
		if err != nil || ck.closeAfter {
			c.close(false)
			return
		}
	}
	c.close(false)
}
