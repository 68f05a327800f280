package server

import (
	"context"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/interceptor"
	"github.com/tarscomm/tarscomm/stats"
)

// Stats returns what the server counted (WithStats; empty without it). Safe for concurrent use.
func (s *Server) Stats() stats.Snapshot {
	if s.stats == nil {
		return stats.Snapshot{Taken: time.Now()}
	}
	return s.stats.Snapshot()
}

// StatsEndingPeriod is Stats for a stat reporter (stat.New(srv.StatsEndingPeriod, ...)): it
// also ends the period of the counters (stats.Recorder.EndPeriod), so that each report's greatest
// and least latency are the interval's own, as TarsCpp's are (with Stats they are estimated from
// the latency buckets after a key's first report). Give it to one reporter only: each call
// begins a new period. Safe for concurrent use.
func (s *Server) StatsEndingPeriod() stats.Snapshot {
	if s.stats == nil {
		return stats.Snapshot{Taken: time.Now()}
	}
	return s.stats.SnapshotEndingPeriod()
}

// localAddr is the address served, as text ("" before Start bound it).
func (s *Server) localAddr() string {
	if p := s.addrStr.Load(); p != nil {
		return *p
	}
	return ""
}

// intercept runs h inside the server interceptors.
func (s *Server) intercept(ctx context.Context, h HandlerFunc, cur *Current, req, rsp []byte) (body []byte, err error) {
	info := &interceptor.ServerInfo{
		Servant: cur.Servant, Function: cur.Func, RequestID: cur.RequestID,
		MessageType: cur.MessageType, Oneway: cur.PacketType == codec.PacketOneway,
		Context: cur.Context, Status: cur.Status, LocalAddr: s.localAddr(),
	}
	switch {
	case cur.conn != nil && cur.conn.remoteStr != "":
		info.RemoteAddr = cur.conn.remoteStr // made once per connection
	case cur.RemoteAddr != nil:
		info.RemoteAddr = cur.RemoteAddr.String() // a datagram's sender
	}
	err = s.icpt(ctx, info, func(ctx context.Context, info *interceptor.ServerInfo) (herr error) {
		returned := false
		defer func() {
			// A panicking handler is answered RetUnknown: the interceptors see that code and
			// error (the span of a tracing one ends with them), as for a handler's error. So
			// is one that ends its goroutine (runtime.Goexit): the interceptors' deferred
			// calls still run, and see the code the client gets (goexit.go).
			if r := recover(); r != nil {
				body, herr = nil, s.panicked(cur, r)
			}
			info.Ret = interceptor.RetOf(herr)
			if !returned && herr == nil {
				info.Ret = codec.RetUnknown
			}
		}()
		body, herr = s.handle(ctx, h, cur, req, rsp)
		returned = true
		return herr
	})
	return body, err
}

// record counts one request served.
// refused counts, when stats are on, a request to a registered function that the server refused
// without running it (its worker queue full, or Stop began): answered RetOverload.
func (s *Server) refused(req *codec.RequestPacket) {
	if s.stats != nil {
		s.stats.Record(req.ServantName, req.FuncName, s.localAddr(), stats.ServerError, codec.RetOverload, 0)
	}
}

func (s *Server) record(cur *Current, ret int32, d time.Duration) {
	res := stats.OK
	if ret != codec.RetOK {
		res = stats.ServerError
	}
	s.stats.Record(cur.Servant, cur.Func, s.localAddr(), res, ret, d)
}
