package adapterproxy

import (
	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/call"
)

// Tick runs the connection's periodic chores: a keepalive ping when the connection has been
// idle for the keepalive interval, or, without keepalive, closing a connection idle for longer
// than the endpoint's -t timeout. The net thread calls it every few check intervals. Must be
// called on the loop goroutine.
func (a *AdapterProxy) Tick(now int64) {
	if a.state != stateConnected {
		return
	}
	idle := now - a.lastIO
	if ka := int64(a.opts.KeepAlive); ka > 0 {
		if a.ping == nil && idle >= ka {
			a.sendPing(now, ka)
		}
		return
	}
	if t := int64(a.ep.Timeout); t > 0 && idle >= t && len(a.pending) == 0 && len(a.unsent) == 0 {
		a.log.Debug("closing idle connection")
		_ = a.conn.Close()
	}
}

// sendPing sends tars_ping with a deadline of timeout; its reply (or its expiry) is handled
// like any call's, and nobody waits for it.
func (a *AdapterProxy) sendPing(now, timeout int64) {
	c := call.Get()
	c.ID = a.loop.NextID()
	c.Deadline = now + timeout
	c.Notify = recycle
	c.Dest = noRetry{}
	c.Frame = codec.AppendRequest(c.Frame[:0], &codec.RequestPacket{
		Version:     codec.VersionTars,
		PacketType:  codec.PacketNormal,
		RequestID:   c.ID,
		ServantName: a.servant,
		FuncName:    "tars_ping",
		Timeout:     int32(timeout / 1e6),
	})
	a.ping = c
	a.Send(c)
}

// recycle is the completion of calls nobody waits for.
func recycle(c *call.Call) { call.Put(c) }

// noRetry routes the adapter's own calls (pings): they are never retried elsewhere.
type noRetry struct{}

func (noRetry) Route(c *call.Call)            { c.Complete(call.ErrNoEndpoint) }
func (noRetry) Retry(c *call.Call, err error) { c.Complete(err) }
