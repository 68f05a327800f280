package tarsgoecho

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/TarsCloud/TarsGo/tars"
	"github.com/TarsCloud/TarsGo/tars/protocol/res/requestf"
	"github.com/TarsCloud/TarsGo/tars/util/current"
	"github.com/TarsCloud/TarsGo/tars/util/tools"
	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/interop/echopb"
)

// EchoPbServant is what a TarsGo user implements for echopb.Echo (the "WithContext" flavour of
// TarsGo's generated interfaces).
type EchoPbServant interface {
	Echo(ctx context.Context, req *echopb.EchoReq) (*echopb.EchoRsp, error)
	Inspect(ctx context.Context, req *echopb.InspectReq) (*echopb.InspectRsp, error)
	Sleep(ctx context.Context, req *echopb.SleepReq) (*echopb.SleepRsp, error)
	Fail(ctx context.Context, req *echopb.FailReq) (*echopb.FailRsp, error)
	Note(ctx context.Context, req *echopb.NoteReq) (*echopb.NoteRsp, error)
	Notes(ctx context.Context, req *echopb.NotesReq) (*echopb.NotesRsp, error)
}

// EchoPb dispatches the requests of echopb.Echo to an EchoPbServant; register it with
// tars.AddServantWithContext(new(EchoPb), impl, obj).
type EchoPb struct{}

type requestKey struct{}

// requestFrom returns the request packet Dispatch stored in ctx, for Inspect.
func requestFrom(ctx context.Context) *requestf.RequestPacket {
	req, _ := ctx.Value(requestKey{}).(*requestf.RequestPacket)
	return req
}

// call unmarshals the request into a new Req, runs h, and marshals its reply.
func call[Req any, PReq interface {
	*Req
	proto.Message
}, Rsp proto.Message](ctx context.Context, in []byte, h func(context.Context, PReq) (Rsp, error)) ([]byte, error) {
	req := PReq(new(Req))
	if err := proto.Unmarshal(in, req); err != nil {
		return nil, err
	}
	rsp, err := h(ctx, req)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(rsp)
}

// Dispatch serves one request: it is called by TarsGo's server for every request to the obj
// it is registered for (TarsGo does not check sServantName), and answers tars_ping itself.
func (*EchoPb) Dispatch(ctx context.Context, val any, req *requestf.RequestPacket, resp *requestf.ResponsePacket, withContext bool) error {
	if !withContext {
		return errors.New("EchoPb needs tars.AddServantWithContext")
	}
	imp := val.(EchoPbServant)
	in := tools.Int8ToByte(req.SBuffer)
	ctx = context.WithValue(ctx, requestKey{}, req)
	var out []byte
	var err error
	switch req.SFuncName {
	case "Echo":
		out, err = call(ctx, in, imp.Echo)
	case "Inspect":
		out, err = call(ctx, in, imp.Inspect)
	case "Sleep":
		out, err = call(ctx, in, imp.Sleep)
	case "Fail":
		out, err = call(ctx, in, imp.Fail)
	case "Note":
		out, err = call(ctx, in, imp.Note)
	case "Notes":
		out, err = call(ctx, in, imp.Notes)
	default:
		return errors.New("func mismatch")
	}
	if err != nil {
		return err
	}
	status, _ := current.GetResponseStatus(ctx)
	rctx, _ := current.GetResponseContext(ctx)
	*resp = requestf.ResponsePacket{
		IVersion:    req.IVersion,
		CPacketType: req.CPacketType,
		IRequestId:  req.IRequestId,
		SBuffer:     tools.ByteToInt8(out),
		Status:      status,
		Context:     rctx,
	}
	return nil
}

// EchoPbImp implements EchoPbServant.
type EchoPbImp struct {
	ID string // reported by Inspect

	mu    sync.Mutex
	notes map[string][]int64
}

var _ EchoPbServant = (*EchoPbImp)(nil)

// Echo returns the request.
func (*EchoPbImp) Echo(_ context.Context, req *echopb.EchoReq) (*echopb.EchoRsp, error) {
	return &echopb.EchoRsp{Data: req.GetData(), Seq: req.GetSeq()}, nil
}

// Inspect describes the request and answers with its maps, keys prefixed with "rsp-".
func (s *EchoPbImp) Inspect(ctx context.Context, _ *echopb.InspectReq) (*echopb.InspectRsp, error) {
	req := requestFrom(ctx)
	rsp := &echopb.InspectRsp{
		Context:     req.Context,
		Status:      req.Status,
		TimeoutMs:   req.ITimeout,
		PacketType:  int32(req.CPacketType),
		MessageType: req.IMessageType,
		Version:     int32(req.IVersion),
		DeadlineMs:  -1,
		Servant:     req.SServantName,
		Func:        req.SFuncName,
		ServerId:    s.ID,
	}
	if d, ok := ctx.Deadline(); ok {
		rsp.DeadlineMs = time.Until(d).Milliseconds()
	}
	// The way a TarsGo servant reads the maps and sets the reply's.
	reqCtx, _ := current.GetRequestContext(ctx)
	reqStatus, _ := current.GetRequestStatus(ctx)
	current.SetResponseContext(ctx, prefixed(reqCtx))
	current.SetResponseStatus(ctx, prefixed(reqStatus))
	return rsp, nil
}

func prefixed(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out["rsp-"+k] = v
	}
	return out
}

// Sleep waits req.ms or, unless req.ignore_deadline, until ctx ends (TarsGo derives ctx's
// deadline from iTimeout), and records how long it slept under the tag "sleep".
func (s *EchoPbImp) Sleep(ctx context.Context, req *echopb.SleepReq) (*echopb.SleepRsp, error) {
	start := time.Now()
	t := time.NewTimer(time.Duration(req.GetMs()) * time.Millisecond)
	defer t.Stop()
	rsp := new(echopb.SleepRsp)
	done := ctx.Done()
	if req.GetIgnoreDeadline() {
		done = nil
	}
	select {
	case <-t.C:
	case <-done:
		rsp.Interrupted = true
	}
	rsp.SleptMs = time.Since(start).Milliseconds()
	s.record("sleep", rsp.SleptMs)
	return rsp, nil
}

// Fail answers with a *tars.Error: TarsGo sends its Code as iRet and its text as description.
func (*EchoPbImp) Fail(_ context.Context, req *echopb.FailReq) (*echopb.FailRsp, error) {
	return nil, &tars.Error{Code: req.GetCode(), Message: req.GetDesc()}
}

// Note records req.seq under req.tag.
func (s *EchoPbImp) Note(_ context.Context, req *echopb.NoteReq) (*echopb.NoteRsp, error) {
	s.record(req.GetTag(), req.GetSeq())
	return new(echopb.NoteRsp), nil
}

// Notes returns the seqs recorded under req.tag.
func (s *EchoPbImp) Notes(_ context.Context, req *echopb.NotesReq) (*echopb.NotesRsp, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &echopb.NotesRsp{Seqs: append([]int64(nil), s.notes[req.GetTag()]...)}, nil
}

func (s *EchoPbImp) record(tag string, seq int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.notes == nil {
		s.notes = make(map[string][]int64)
	}
	s.notes[tag] = append(s.notes[tag], seq)
}

// String names the servant in logs.
func (s *EchoPbImp) String() string { return fmt.Sprintf("EchoPbImp(%s)", s.ID) }
