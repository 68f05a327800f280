package server

import (
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/stats"
)

// TestQueueTimeout: in worker mode, a request that waited for the worker longer than
// WithQueueTimeout or than its client's own timeout is answered RetQueueTimeout without its
// handler running (a one-way one is dropped), while the requests still within both are run. One
// worker is held by a first request, so that every later one waits in the queue at least as long
// as the test holds it (a slower machine only makes the waits longer, never shorter), and the
// worker takes them in order.
func TestQueueTimeout(t *testing.T) {
	const hold = 300 * time.Millisecond
	for _, tc := range []struct {
		name  string
		queue time.Duration // WithQueueTimeout
		// The client timeouts (ms, 0: none) of the requests queued behind the first, and
		// whether each must run.
		timeouts []int32
		run      []bool
	}{
		// A client timeout shorter than the wait: not run. None, or a longer one: run.
		{"client timeout", time.Hour, []int32{100, 0, 60000}, []bool{false, true, true}},
		// The queue's own timeout shorter than the wait: none runs, whatever the client's.
		{"queue timeout", 200 * time.Millisecond, []int32{60000, 0}, []bool{false, false}},
		// Off: every request runs, however long it waited.
		{"off", 0, []int32{100, 0}, []bool{true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			blk := newBlocker()
			s, addr := startServer(t, func(s *Server) { mustHandle(t, s, "App.S.Obj", "Work", blk.handle) },
				WithWorkers(1), WithQueueTimeout(tc.queue), WithStats())
			c := dial(t, addr)
			c.write(codec.AppendRequest(nil, request(1, "App.S.Obj", "Work", []byte("first"))))
			blk.waitStarted(t)

			var frames []byte
			late := request(100, "App.S.Obj", "Work", []byte("one-way"))
			late.PacketType, late.Timeout = codec.PacketOneway, 100 // late in every case but "off"
			frames = codec.AppendRequest(frames, late)
			for i, to := range tc.timeouts {
				r := request(int32(i+2), "App.S.Obj", "Work", []byte{byte('a' + i)})
				r.Timeout = to
				frames = codec.AppendRequest(frames, r)
			}
			c.write(frames)
			time.Sleep(hold) // every queued request waits at least this long
			close(blk.release)

			if rsp := c.recv(); rsp.RequestID != 1 || rsp.Ret != codec.RetOK || string(rsp.Buffer) != "first" {
				t.Fatalf("the first request: id %d ret %d body %q", rsp.RequestID, rsp.Ret, rsp.Buffer)
			}
			ran, timedOut := 0, int64(0)
			for i, want := range tc.run {
				rsp := c.recv()
				if rsp.RequestID != int32(i+2) {
					t.Fatalf("reply id %d, want %d", rsp.RequestID, i+2)
				}
				switch {
				case want && (rsp.Ret != codec.RetOK || string(rsp.Buffer) != string(rune('a'+i))):
					t.Fatalf("request %d (client timeout %d ms) should have run: ret %d %q body %q",
						i+2, tc.timeouts[i], rsp.Ret, rsp.ResultDesc, rsp.Buffer)
				case !want && (rsp.Ret != codec.RetQueueTimeout || rsp.ResultDesc != queueTimeoutDesc || len(rsp.Buffer) != 0):
					t.Fatalf("request %d (client timeout %d ms) should have timed out in the queue: ret %d %q body %q",
						i+2, tc.timeouts[i], rsp.Ret, rsp.ResultDesc, rsp.Buffer)
				case want:
					ran++
				default:
					timedOut++
				}
			}
			// The one-way request, queued before the others, was taken before them.
			oneway := 0
			if tc.queue == 0 {
				oneway = 1 // run, since nothing times out
			} else {
				timedOut++
			}
			if got := len(blk.started); got != ran+oneway {
				t.Fatalf("handlers started after the first: %d, want %d", got, ran+oneway)
			}
			if got := s.LimitStats().QueueTimeout; got != timedOut {
				t.Fatalf("LimitStats().QueueTimeout = %d, want %d", got, timedOut)
			}
			// The call stats count every request: those that ran, and those the queue timeout
			// answered, under their code.
			var calls stats.Counters
			for _, cs := range s.Stats().Calls {
				if cs.Servant == "App.S.Obj" && cs.Function == "Work" {
					calls = cs.Counters
				}
			}
			var dropped uint64
			for _, cc := range calls.Codes {
				if cc.Code == codec.RetQueueTimeout {
					dropped = cc.Count
				}
			}
			if ok := calls.Results[stats.OK]; ok != uint64(1+ran+oneway) || dropped != uint64(timedOut) ||
				calls.Calls() != uint64(1+ran+oneway)+uint64(timedOut) {
				t.Fatalf("call stats: %d ok, %d answered %d, %d in all; want %d, %d, %d",
					ok, dropped, codec.RetQueueTimeout, calls.Calls(), 1+ran+oneway, timedOut, 1+ran+oneway+int(timedOut))
			}
		})
	}
}
