package communicator_test

import (
	"net"
	"sync/atomic"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/stats"
)

// TestServerDrivenCodeCardinality: the client counts every error reply under its TARS return
// code, which the server chooses freely: a server answering each call with another code makes
// the client keep at most stats.MaxCodes codes apart for a (servant, function, endpoint), the
// others counted together under stats.OtherCodes. One CodeCount per code used to be kept with no
// bound (the snapshot, the debug page and the server_errors_total{code} series grew with the
// calls, forever, and each reply scanned the list on the net thread's loop).
func TestServerDrivenCodeCardinality(t *testing.T) {
	var next atomic.Int32
	raw := startRawServer(t, func(req *codec.RequestPacket, w net.Conn) bool {
		frame := codec.AppendResponse(nil, &codec.ResponsePacket{
			Version: req.Version, PacketType: codec.PacketNormal, RequestID: req.RequestID,
			MessageType: req.MessageType, Ret: -100000 - next.Add(1), ResultDesc: "x",
		})
		_, err := w.Write(frame)
		return err == nil
	})
	comm := newComm(t, nil)
	var sp servantproxy.ServantProxy
	if err := comm.StringToProxy(servant+"@"+raw.endpoint(), &sp); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	const calls = 3000
	for i := range calls {
		if _, err := sp.InvokeRaw(ctx, "Get", []byte("x")); err == nil {
			t.Fatalf("call %d succeeded; the raw server answers an error code", i)
		}
	}
	codes, keys := 0, 0
	var counted, other uint64
	for _, c := range comm.Stats().Calls {
		if c.Servant == servant && c.Function == "Get" {
			keys++
			codes += len(c.Codes)
			for _, cc := range c.Codes {
				counted += cc.Count
				if cc.Code == stats.OtherCodes {
					other += cc.Count
				}
			}
		}
	}
	t.Logf("%d calls, each answered with a new return code: %d codes kept over %d key(s), %d replies under OtherCodes", calls, codes, keys, other)
	if keys != 1 || codes > stats.MaxCodes+1 {
		t.Errorf("the server drove %d code entries into %d key(s); want one key with at most %d (MaxCodes and OtherCodes)", codes, keys, stats.MaxCodes+1)
	}
	if counted != calls || other != calls-stats.MaxCodes {
		t.Errorf("%d replies counted by code (%d under OtherCodes), want all %d (%d under OtherCodes)", counted, other, calls, calls-stats.MaxCodes)
	}
}
