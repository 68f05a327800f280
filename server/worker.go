package server

import (
	"math"
	"net"
	"sync"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/bufpool"
)

// job is one request handed from an event loop to a worker. The loop fills it; the worker
// owns it until it returns it with putJob.
type job struct {
	// due is when, on the server's clock, the request stops being worth running: queued plus
	// WithQueueTimeout or its client's timeout, whichever is shorter; 0: never. Set by the loop,
	// where the request is at hand; first in the struct, beside what the worker reads first.
	due   int64
	cs    *conn        // the request's connection; nil for a datagram
	to    *net.UDPAddr // a datagram's sender, where the reply goes
	h     HandlerFunc
	req   codec.RequestPacket // Buffer points into body
	cur   Current
	body  []byte // the worker's copy of the request body
	frame []byte // or the whole request frame, a bufpool buffer the job owns
	size  int64  // the frame's length, counted in the queue's bytes until the job ends (queue)
}

// queue counts the n bytes of j's frame in the worker queue's bytes and reports whether they fit
// WithQueueBytes (if not, nothing is counted). A frame always fits a queue that holds none.
func (s *Server) queue(j *job, n int) bool {
	lim := s.opts.queueBytes
	if lim <= 0 {
		return true
	}
	size := int64(n)
	if q := s.queuedBytes.Add(size); q > lim && q != size {
		s.queuedBytes.Add(-size)
		return false
	}
	j.size = size
	return true
}

// unqueue takes j's frame out of the worker queue's bytes.
func (s *Server) unqueue(j *job) {
	if j.size != 0 {
		s.queuedBytes.Add(-j.size)
		j.size = 0
	}
}

var jobPool = sync.Pool{New: func() any { return new(job) }}

func getJob() *job { return jobPool.Get().(*job) }

// putJob recycles j, keeping its body buffer unless it grew large.
func putJob(j *job) {
	body := j.body[:0]
	if cap(body) > maxKeptBuffer {
		body = nil
	}
	if j.frame != nil {
		bufpool.Put(j.frame)
	}
	*j = job{body: body}
	jobPool.Put(j)
}

// work runs jobs until the queue is closed (by Stop, after the loops exited).
//
// A handler that ends the worker's goroutine (runtime.Goexit: t.FailNow in a test's handler,
// for one) cannot be stopped from doing so, but it does not take its request or the worker with
// it: the request is answered RetUnknown, as a panic is, and a new worker takes this one's place.
func (s *Server) work() {
	w := worker{rsp: newScratch()}
	defer func() {
		if j := w.running; j != nil { // runtime.Goexit in a handler: the only way here mid-job
			s.finishJob(&w, j, nil, codec.RetUnknown, goexitDesc)
			go s.work() // takes over this worker's place in workersLeft
			return
		}
		if s.workersLeft.Add(-1) == 0 {
			s.closeReplySocket()
			close(s.workersDone)
		}
	}()
	for {
		var j *job
		select {
		case j = <-s.jobs:
		default:
			w.rsp.park() // nothing queued: hold no large buffer while waiting
			j = <-s.jobs
		}
		if j == nil {
			break // closed by Stop
		}
		if s.forced.Load() {
			s.refuseJob(&w, j) // Stop gave up waiting: what is still queued does not run
			continue
		}
		var (
			body      []byte
			ret, desc = codec.RetQueueTimeout, queueTimeoutDesc
		)
		if !s.late(j) {
			w.running = j
			body, ret, desc = s.invoke(&w.ctxs, j.h, &j.cur, j.req.Buffer, w.rsp.buf())
			w.running = nil
		} else if s.stats != nil {
			s.record(&j.cur, ret, 0) // counted under its code, as a handler's failure is
		}
		s.finishJob(&w, j, body, ret, desc)
	}
}

// worker is the state of one worker goroutine (work).
type worker struct {
	rsp     scratch  // reply-body scratch
	ctxs    callCtxs // handlers' ctxs
	resp    codec.ResponsePacket
	udpOut  []byte // a datagram reply being sent
	running *job   // the job whose handler runs
}

// finishJob hands the reply of j (body, or ret and desc) to its connection or its datagram
// sender, and recycles j.
func (s *Server) finishJob(w *worker, j *job, body []byte, ret int32, desc string) {
	idle := s.opts.idle > 0 // dispatch counted the job in its conn's handling
	taken := false          // the reply took w.rsp over
	switch {
	case j.req.PacketType == codec.PacketOneway:
		if idle && j.cs != nil {
			j.cs.handling.Add(-1)
		}
		s.done(1)
	case j.cs == nil:
		w.udpOut = s.replyDatagram(w.udpOut, &w.resp, j, body, ret, desc)
		s.done(1)
	default:
		cs := j.cs
		cs.mu.Lock()
		taken = cs.out.add(&w.resp, &j.req, ret, desc, body, &j.cur, w.rsp.b, s.opts.maxPacketSize)
		cs.n++
		wake := !cs.queued
		cs.queued = true
		cs.mu.Unlock()
		if idle {
			cs.handling.Add(-1) // after the reply is in out, where the idle rule sees it
		}
		if wake {
			cs.loop.enqueue(cs)
		}
	}
	if taken {
		s.bodiesTaken.Add(1)
	}
	w.rsp.next(len(body), taken)
	s.unqueue(j)
	putJob(j)
}

// refuseJob answers j, a request Stop gave up on before a worker ran it, as a stopping server
// answers the requests it refuses (codec.RetOverload, codec.StoppingDesc): it did not run, and a
// tarscomm client sends it to another endpoint. A one-way request is only counted.
func (s *Server) refuseJob(w *worker, j *job) {
	s.refused(&j.req)
	s.forcedRefusals.Add(1)
	s.finishJob(w, j, nil, codec.RetOverload, stoppingDesc)
}

// refuseQueued answers every request still waiting in the worker queue with refuseJob, for a
// Stop that gave up: the workers may all be held by handlers that ignore their ctx, and the
// engine closes the connections next.
func (s *Server) refuseQueued() {
	w := worker{rsp: newScratch()}
	for {
		select {
		case j := <-s.jobs:
			if j == nil {
				return // closed: the engine ended already
			}
			s.refuseJob(&w, j)
		default:
			return
		}
	}
}

// queueTimeoutDesc is the result description of a request that waited too long for a worker.
const queueTimeoutDesc = "server queue timeout"

// late reports whether j waited in the queue past its due time (WithQueueTimeout, or its
// client's timeout), and counts it: it is then answered RetQueueTimeout without running.
func (s *Server) late(j *job) bool {
	if j.due == 0 || s.clock() <= j.due {
		return false
	}
	s.lim.queueTimeouts.Add(1)
	return true
}

// due returns when a request queued at the clock's queued, whose client's timeout is timeoutMS
// (0: none), stops being worth running.
func (s *Server) due(queued int64, timeoutMS int32) int64 {
	d := s.opts.queueTimeout
	if timeoutMS > 0 {
		d = min(d, time.Duration(timeoutMS)*time.Millisecond)
	}
	if int64(d) > math.MaxInt64-queued {
		return math.MaxInt64 // a bound past the clock's end: never
	}
	return queued + int64(d)
}

// clock returns the server's monotonic time in nanoseconds, for queue waits.
func (s *Server) clock() int64 { return int64(time.Since(s.epoch)) }
