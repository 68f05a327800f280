package interop_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	tgprotocol "github.com/TarsCloud/TarsGo/tars/protocol"
	tgrequestf "github.com/TarsCloud/TarsGo/tars/protocol/res/requestf"
	"go.uber.org/zap/zaptest"
	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/interop/echopb"
	"github.com/tarscomm/tarscomm/interop/internal/job"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// TestLargeBodiesBothWays (a guard: nothing tested it before): 8 MiB bodies both ways (the other tests stop
// at 4 MiB); both sides' limit is 10 MiB.
func TestLargeBodiesBothWays(t *testing.T) {
	s := sharedTarsGoServer(t)
	prx := echoProxy(t, newComm(t), s)
	data := job.Payload(8<<20, 3)
	rsp, err := prx.Echo(testCtx(t), &echopb.EchoReq{Data: data, Seq: 3}, servantproxy.WithTimeout(30*time.Second))
	if err != nil || !bytes.Equal(rsp.GetData(), data) {
		t.Fatalf("8 MiB to TarsGo: %v", err)
	}
	ts := startTarscommServer(t, "big")
	res := runTarsGoClient(t, job.Job{Proxy: ts.pbProxy(), Op: job.OpEcho, Sizes: []int{1 << 20, 8 << 20}, TimeoutMs: 30000})
	mustOK(t, res)
}

// tarsgoRoundTrip writes req with TarsGo's client packer to addr and decodes the reply with
// TarsGo's client unpacker.
func tarsgoRoundTrip(t *testing.T, port int, req *tgrequestf.RequestPacket) *tgrequestf.ResponsePacket {
	t.Helper()
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	p := &tgprotocol.TarsProtocol{}
	b, err := p.RequestPack(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(b); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	var hdr [4]byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		t.Fatalf("no reply: %v", err)
	}
	frame := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	copy(frame, hdr[:])
	if _, err := io.ReadFull(conn, frame[4:]); err != nil {
		t.Fatal(err)
	}
	rsp, err := p.ResponseUnpack(frame)
	if err != nil {
		t.Fatalf("TarsGo's client cannot decode the reply %x: %v", frame, err)
	}
	return rsp
}

// TestJSONRefusalReadableByTarsGo (a guard: nothing tested it before): a TarsGo client with
// TarsSetVersion(5) (JSON) gets tarscomm's refusal as a ResponsePacket its own unpacker reads:
// its request id, iRet -1 and a description naming JSON, so TarsInvoke returns a *tars.Error -1.
func TestJSONRefusalReadableByTarsGo(t *testing.T) {
	ts := startTarscommServer(t, "json")
	rsp := tarsgoRoundTrip(t, ts.port, &tgrequestf.RequestPacket{IVersion: 5, IRequestId: 77, SServantName: tarscommPbObj, SFuncName: "Echo",
		SBuffer: []int8{'{', '}'}, ITimeout: 3000})
	if rsp.IRequestId != 77 || rsp.IRet != -1 || !strings.Contains(rsp.SResultDesc, "JSON") || rsp.CPacketType != 0 {
		t.Errorf("reply %+v", rsp)
	}
}

// TestDyeRelayThroughTarsGo (a guard: nothing tested it before): a request dyed as TarsGo's client dyes it
// (iMessageType 0x04, STATUS_DYED_KEY) reaches a TarsGo servant through a tarscomm handler that
// calls on with its ctx; WithDyeing reaches TarsGo directly.
func TestDyeRelayThroughTarsGo(t *testing.T) {
	down := echoProxy(t, newComm(t), sharedTarsGoServer(t))
	const relayObj = "Interop.TarscommServer.RelayObj"
	s := server.New(server.WithWorkers(4), server.WithLogger(zaptest.NewLogger(t).Named("relay")))
	err := server.HandleProto(s, relayObj, "Inspect", func(ctx context.Context, _ *server.Current, req *echopb.InspectReq) (*echopb.InspectRsp, error) {
		return down.Inspect(ctx, req)
	})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Stop(ctx)
	})
	body, _ := proto.Marshal(&echopb.InspectReq{})
	in := make([]int8, len(body))
	for i, c := range body {
		in[i] = int8(c)
	}
	rsp := tarsgoRoundTrip(t, addr.(*net.TCPAddr).Port, &tgrequestf.RequestPacket{IVersion: 1, IRequestId: 5, SServantName: relayObj, SFuncName: "Inspect",
		SBuffer: in, ITimeout: 3000, IMessageType: codec.MessageDyed, Status: map[string]string{"STATUS_DYED_KEY": "user-42"}})
	if rsp.IRet != 0 {
		t.Fatalf("relay: %+v", rsp)
	}
	out := make([]byte, len(rsp.SBuffer))
	for i, c := range rsp.SBuffer {
		out[i] = byte(c)
	}
	var ir echopb.InspectRsp
	if err := proto.Unmarshal(out, &ir); err != nil {
		t.Fatal(err)
	}
	if ir.GetMessageType()&codec.MessageDyed == 0 || ir.GetStatus()["STATUS_DYED_KEY"] != "user-42" {
		t.Errorf("dye not relayed: mt %#x status %v", ir.GetMessageType(), ir.GetStatus())
	}
	// tarscomm's WithDyeing straight to TarsGo.
	r2, err := down.Inspect(testCtx(t), &echopb.InspectReq{}, servantproxy.WithDyeing("k9"))
	if err != nil || r2.GetMessageType()&codec.MessageDyed == 0 || r2.GetStatus()["STATUS_DYED_KEY"] != "k9" {
		t.Errorf("WithDyeing: %v mt %#x status %v", err, r2.GetMessageType(), r2.GetStatus())
	}
}
