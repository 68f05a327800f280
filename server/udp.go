package server

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/panjf2000/gnet/v2"
	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/datagram"
)

// TARS over UDP (Start("udp://host:port")): each datagram is one request frame, each reply one
// datagram sent back to the request's sender; there are no connections, so nothing is assembled,
// authenticated or encrypted. A datagram that is not exactly one frame (internal/datagram.Check),
// or whose request does not decode, is dropped and counted (DroppedDatagrams), and the server
// goes on serving. A reply larger than datagram.MaxSize is replaced by a RetServerEncode reply
// saying so, so that the caller learns why instead of timing out.
//
// A reply leaves from the address the kernel chooses for the client's, not necessarily the one
// the request was sent to (the server reads no IP_PKTINFO). Bound to a wildcard (0.0.0.0, ::) on
// a host with several addresses, a server called through a secondary address answers from the
// primary one, which tarscomm's client (a connected socket) drops: bind a UDP
// server to the address its clients call.

// errUDPOptions refuses a UDP server with TLS or authentication, which need a connection.
var errUDPOptions = errors.New("udp has no connections: WithTLS and WithAuth need tcp")

// errPushUDP is what Push returns on a UDP server: a push needs the client's connection.
var errPushUDP = errors.New("server: push is not supported over udp (no connection to push on)")

// isUDP reports whether protoAddr, a gnet address, is a UDP one.
func isUDP(protoAddr string) bool { return strings.HasPrefix(protoAddr, "udp") }

// udpLoops returns how many event loops serve the UDP address protoAddr when loops are asked
// for: gnet binds one socket per loop (SO_REUSEPORT), so port 0 would give each loop a port of
// its own; such an address is served by one loop.
func udpLoops(protoAddr string, loops int) int {
	if _, _, ok := fixedPort(protoAddr); !ok {
		return 1
	}
	return loops
}

// fixedPort splits the gnet address protoAddr into its network and host:port, and reports
// whether the port is given (not 0, not missing, the address well formed).
func fixedPort(protoAddr string) (network, hostPort string, ok bool) {
	network, hostPort, _ = strings.Cut(protoAddr, "://")
	_, port, err := net.SplitHostPort(hostPort)
	return network, hostPort, err == nil && port != "0" && port != ""
}

// udpPortFree fails when the explicit port of the UDP address protoAddr is taken. gnet binds its
// datagram sockets with SO_REUSEPORT (one per loop), so a second server on a port a running
// one serves would start, and the kernel would split the clients between the two; a plain bind
// (without it) tells, as a TCP listener's does. (A port taken between this check and gnet's
// bind is not caught.)
func udpPortFree(protoAddr string) error {
	network, hostPort, ok := fixedPort(protoAddr)
	if !ok {
		return nil // port 0: a fresh port; a malformed address: gnet's error says so
	}
	pc, err := net.ListenPacket(network, hostPort)
	if err != nil {
		return err
	}
	return pc.Close()
}

// DroppedDatagrams returns how many datagrams a UDP server dropped: received ones that were not
// exactly one decodable request frame, and replies the socket refused. Safe for concurrent use;
// always 0 for a TCP server.
func (s *Server) DroppedDatagrams() int64 { return s.dropped.Load() }

// drop counts a datagram dropped and logs why.
func (s *Server) drop(what string, err error, remote net.Addr) {
	s.dropped.Add(1)
	s.log.Debug(what, zap.Error(err), zap.Stringer("remote", remote))
}

// datagram serves the request in c's datagram: inline, it writes the reply to c (one datagram
// to the sender); with workers, it queues the request and the worker replies (replyDatagram).
// It always returns gnet.None: a bad datagram is dropped, the socket serves on.
func (l *loop) datagram(c gnet.Conn) gnet.Action {
	s := l.s
	l.stamp = 0
	d, _ := c.Next(-1)
	if err := datagram.Check(d); err != nil {
		s.drop("bad datagram, dropped", err, c.RemoteAddr())
		return gnet.None
	}
	l.out.b = l.out.b[:0]
	if len(d) > s.opts.maxPacketSize {
		// Answered -1 as over tcp (answerOversized): the client's call fails at once instead of
		// waiting for its deadline. One that is no request's head is dropped.
		req := &l.req
		*req = codec.RequestPacket{}
		if _, err := codec.DecodeRequestHead(d, len(d), req); err != nil {
			s.drop("datagram above max-packet-size, dropped", fmt.Errorf("%d bytes, max %d", len(d), s.opts.maxPacketSize), c.RemoteAddr())
			return gnet.None
		}
		s.log.Debug("request exceeds max-packet-size, answered", zap.Int("bytes", len(d)),
			zap.Int("limit", s.opts.maxPacketSize), zap.Int32("request_id", req.RequestID), zap.Stringer("remote", c.RemoteAddr()))
		if req.PacketType != codec.PacketOneway {
			desc := fmt.Sprintf("server: request of %d bytes exceeds max-packet-size %d", len(d), s.opts.maxPacketSize)
			l.out.b = appendReply(l.out.b, &l.resp, req, codec.RetServerDecode, desc, nil, nil)
		}
		*req = codec.RequestPacket{}
	} else if s.jobs != nil {
		remote := cloneUDPAddr(c.RemoteAddr()) // the job keeps it
		if !l.dispatch(nil, remote, d, false) {
			s.drop("undecodable request, dropped", errUndecodable, remote)
		}
	} else if !l.serveDatagram(c, d) {
		s.drop("undecodable request, dropped", errUndecodable, c.RemoteAddr())
	}
	if len(l.out.b) > 0 {
		if _, err := c.Write(l.out.b); err != nil {
			s.drop("reply not sent", err, c.RemoteAddr())
		}
	}
	return gnet.None
}

// errUndecodable is what DroppedDatagrams' log says of a datagram holding no request.
var errUndecodable = errors.New("not a RequestPacket")

// serveDatagram runs the inline handler of the request frame d from c and puts the reply in
// l.out. It returns false if d does not decode.
func (l *loop) serveDatagram(c gnet.Conn, d []byte) bool {
	s := l.s
	req := &l.req
	*req = codec.RequestPacket{}
	defer func() { *req = codec.RequestPacket{} }()
	servantName, fn, err := decodeRequest(d, req)
	if err != nil {
		return false
	}
	h, ret, desc := s.route(req, servantName, fn, &l.routes)
	if h != nil && s.stopping.Load() {
		h, ret, desc = nil, codec.RetOverload, stoppingDesc
		s.refused(req)
	}
	var body []byte
	var cur *Current
	if h != nil {
		cur = &l.cur
		remote := c.RemoteAddr()
		if u, ok := remote.(*net.UDPAddr); ok && u.Zone != "" {
			// gnet gives the zone's bytes back to its pool once the datagram is served, and a
			// handler may keep the address: a link-local sender's is copied (others own theirs).
			remote = cloneUDPAddr(u)
		}
		l.fillCurrent(cur, req, remote)
		body, ret, desc = l.invokeInline(c, nil, h, cur)
		defer func() { *cur = Current{}; l.rsp.next(len(body), false) }()
	}
	if req.PacketType != codec.PacketOneway {
		l.out.b = appendDatagramReply(l.out.b, &l.resp, req, ret, desc, body, cur, l.s.replyLimit())
	}
	return true
}

// appendDatagramReply appends the frame answering req to b as appendReply does, unless it would
// exceed limit (Server.replyLimit: max-packet-size, at most a datagram): then the reply says
// RetServerEncode and why.
func appendDatagramReply(b []byte, rp *codec.ResponsePacket, req *codec.RequestPacket, ret int32, desc string,
	body []byte, cur *Current, limit int) []byte {
	start := len(b)
	b = appendReply(b, rp, req, ret, desc, body, cur)
	if n := len(b) - start; n > limit {
		why := tooLarge(n, limit)
		if limit == datagram.MaxSize {
			why = datagram.TooLarge("reply", n).Error()
		}
		b = appendReply(b[:start], rp, req, codec.RetServerEncode, why, nil, nil)
	}
	return b
}

// replyDatagram sends a worker's reply to job j (a datagram's request) from the server's socket,
// encoding it into out, which it returns for reuse. Called by workers.
func (s *Server) replyDatagram(out []byte, rp *codec.ResponsePacket, j *job, body []byte, ret int32, desc string) []byte {
	out = appendDatagramReply(out[:0], rp, &j.req, ret, desc, body, &j.cur, s.replyLimit())
	if err := syscall.Sendto(s.replyFD, out, 0, s.sockaddr(j.to)); err != nil {
		s.drop("reply not sent", err, j.to)
	}
	if cap(out) > maxKeptBuffer {
		return nil
	}
	return out
}

// openReplySocket makes the socket workers send UDP replies from: a duplicate of the engine's
// listener (any of the loops' sockets has the served address). Sending a datagram is one system
// call, safe from any goroutine.
func (s *Server) openReplySocket(eng gnet.Engine) error {
	fd, err := eng.Dup()
	if err != nil {
		return err
	}
	s.replyFD, s.hasReplyFD = fd, true
	return nil
}

// closeReplySocket closes the workers' socket, once the last worker has exited.
func (s *Server) closeReplySocket() {
	if s.hasReplyFD {
		s.hasReplyFD = false
		syscall.Close(s.replyFD) //nolint:errcheck // nothing was written that could be lost
	}
}

// sockaddr converts a datagram's sender to a sockaddr of the served socket's family (an IPv6
// socket receives IPv4 senders as mapped addresses and must answer them the same way).
func (s *Server) sockaddr(a *net.UDPAddr) syscall.Sockaddr {
	if ip4 := a.IP.To4(); ip4 != nil && !s.udp6 {
		sa := &syscall.SockaddrInet4{Port: a.Port}
		copy(sa.Addr[:], ip4)
		return sa
	}
	sa := &syscall.SockaddrInet6{Port: a.Port}
	copy(sa.Addr[:], a.IP.To16())
	if a.Zone != "" {
		if ifi, err := net.InterfaceByName(a.Zone); err == nil {
			sa.ZoneId = uint32(ifi.Index)
		}
	}
	return sa
}

// cloneUDPAddr copies a datagram's sender: gnet recycles the conn it came with.
func cloneUDPAddr(a net.Addr) *net.UDPAddr {
	u, _ := a.(*net.UDPAddr)
	if u == nil {
		return &net.UDPAddr{}
	}
	return &net.UDPAddr{IP: append(net.IP(nil), u.IP...), Port: u.Port, Zone: strings.Clone(u.Zone)}
}
