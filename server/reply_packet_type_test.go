package server

import (
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

// TestReplyPacketType: TarsCpp's Current::sendResponse writes every reply with
// cPacketType = TARSNORMAL (0), whatever the request's cPacketType was (only TARSONEWAY, 1, gets
// no reply). A request whose cPacketType is neither 0 nor 1 is served as a normal one by both
// servers, and answered with packet type 0 by both now. Before, this server copied the request's
// packet type into the reply (fillResponse), answering a reply packet type TARS does not define.
func TestReplyPacketType(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			_, addr := startServer(t, func(s *Server) {
				mustHandle(t, s, pbServant, "Echo", echo)
			}, m.opts...)
			c := dial(t, addr)
			for i, fn := range []string{"Echo", "Nope", codec.FuncPing} {
				req := request(int32(10+i), pbServant, fn, []byte("x"))
				req.PacketType = 2
				rsp := c.call(req)
				if rsp.PacketType != codec.PacketNormal {
					t.Errorf("%s with cPacketType 2: reply cPacketType %d (ret %d), want %d (TARSNORMAL, as TarsCpp's Current::sendResponse writes)",
						fn, rsp.PacketType, rsp.Ret, codec.PacketNormal)
				}
			}
		})
	}
}
