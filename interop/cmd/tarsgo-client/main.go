// Command tarsgo-client is a real TarsGo v1.4.6 client for the interop tests. It reads one
// job.Job as JSON from stdin, makes the calls it describes with TarsGo's public API
// (Communicator.StringToProxy, ServantProxy.TarsInvoke, TarsGo's codec for .tars bodies,
// protobuf for protobuf bodies, as TarsGo's generated proxies do), and writes a job.Result as
// JSON to stdout. It exits non-zero only when it cannot run the job at all; failed calls are
// reported in the Result for the test to judge.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/TarsCloud/TarsGo/tars"
	"github.com/TarsCloud/TarsGo/tars/model"
	"github.com/TarsCloud/TarsGo/tars/protocol/codec"
	"github.com/TarsCloud/TarsGo/tars/protocol/res/requestf"
	"github.com/TarsCloud/TarsGo/tars/util/tools"
	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/interop/echopb"
	"github.com/tarscomm/tarscomm/interop/internal/job"
)

func main() {
	// TarsGo's logger writes to os.Stdout: keep stdout for the result, send the logs to stderr.
	out := os.Stdout
	os.Stdout = os.Stderr
	var j job.Job
	if err := json.NewDecoder(os.Stdin).Decode(&j); err != nil {
		fatal("read job: %v", err)
	}
	res, err := run(j)
	if err != nil {
		fatal("%s: %v", j.Op, err)
	}
	if err := json.NewEncoder(out).Encode(res); err != nil {
		fatal("write result: %v", err)
	}
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "tarsgo-client: "+format+"\n", args...)
	os.Exit(1)
}

// proxy is a TarsGo proxy as TarsGo's generators write them: StringToProxy hands it its
// servant through SetServant.
type proxy struct {
	s model.Servant
}

// SetServant implements tars.ProxyPrx.
func (p *proxy) SetServant(s model.Servant) { p.s = s }

// invoke calls fn with body and the job's maps, and fills c with the outcome.
func (p *proxy) invoke(j *job.Job, c *job.Call, oneway bool, fn string, body []byte) *requestf.ResponsePacket {
	var cType byte
	if oneway {
		cType = 1 // basef.TARSONEWAY
	}
	resp := new(requestf.ResponsePacket)
	start := time.Now()
	err := p.s.TarsInvoke(context.Background(), cType, fn, body, j.Status, j.Context, resp)
	c.ElapsedMs = time.Since(start).Milliseconds()
	if err != nil {
		setErr(c, err)
		return nil
	}
	c.Ret, c.Desc = resp.IRet, resp.SResultDesc
	c.RspContext, c.RspStatus = resp.Context, resp.Status
	return resp
}

func setErr(c *job.Call, err error) {
	c.Err = err.Error()
	c.ErrType = fmt.Sprintf("%T", err)
	c.ErrCode = tars.GetErrorCode(err)
}

// invokePb calls fn with a protobuf request and unmarshals the reply into rsp.
func (p *proxy) invokePb(j *job.Job, c *job.Call, fn string, req, rsp proto.Message) bool {
	in, err := proto.Marshal(req)
	if err != nil {
		setErr(c, err)
		return false
	}
	resp := p.invoke(j, c, false, fn, in)
	if resp == nil {
		return false
	}
	if err := proto.Unmarshal(tools.Int8ToByte(resp.SBuffer), rsp); err != nil {
		setErr(c, fmt.Errorf("decode %s reply: %w", fn, err))
		return false
	}
	return true
}

func run(j job.Job) (*job.Result, error) {
	comm := tars.NewCommunicator()
	p := new(proxy)
	comm.StringToProxy(j.Proxy, p)
	if j.TimeoutMs > 0 {
		p.s.TarsSetTimeout(j.TimeoutMs)
	}
	res := new(job.Result)
	one := func() *job.Call {
		res.Calls = append(res.Calls, job.Call{})
		return &res.Calls[len(res.Calls)-1]
	}
	switch j.Op {
	case job.OpEcho:
		parallel := max(j.Parallel, 1)
		res.Calls = make([]job.Call, parallel*len(j.Sizes))
		var wg sync.WaitGroup
		for g := range parallel {
			wg.Go(func() {
				for i, size := range j.Sizes {
					n := g*len(j.Sizes) + i
					c := &res.Calls[n]
					c.Size = size
					req := &echopb.EchoReq{Data: job.Payload(size, int64(n)), Seq: int64(n)}
					rsp := new(echopb.EchoRsp)
					c.OK = p.invokePb(&j, c, "Echo", req, rsp) && rsp.GetSeq() == req.GetSeq() && bytes.Equal(rsp.GetData(), req.GetData())
				}
			})
		}
		wg.Wait()
	case job.OpInspect:
		for range max(j.Count, 1) {
			c := one()
			rsp := new(echopb.InspectRsp)
			if p.invokePb(&j, c, "Inspect", new(echopb.InspectReq), rsp) {
				c.Body, _ = proto.Marshal(rsp)
			}
		}
	case job.OpSleep:
		p.invokePb(&j, one(), "Sleep", &echopb.SleepReq{Ms: j.Ms, IgnoreDeadline: j.Ignore}, new(echopb.SleepRsp))
	case job.OpFail:
		p.invokePb(&j, one(), "Fail", &echopb.FailReq{Code: j.Code, Desc: j.Desc}, new(echopb.FailRsp))
	case job.OpNote:
		for seq := range int64(j.Count) {
			c := one()
			in, _ := proto.Marshal(&echopb.NoteReq{Tag: j.Tag, Seq: seq + 1})
			p.invoke(&j, c, j.Oneway, "Note", in)
		}
		if j.Oneway {
			// TarsInvoke returns a one-way call once it is queued for TarsGo's writer
			// goroutine; a sync call on the same connection, written after them, makes sure
			// they left before the process exits.
			p.invokePb(&j, new(job.Call), "Notes", &echopb.NotesReq{Tag: j.Tag}, new(echopb.NotesRsp))
		}
	case job.OpNotes:
		c := one()
		rsp := new(echopb.NotesRsp)
		if p.invokePb(&j, c, "Notes", &echopb.NotesReq{Tag: j.Tag}, rsp) {
			c.Seqs = rsp.GetSeqs()
		}
	case job.OpRaw:
		c := one()
		if resp := p.invoke(&j, c, j.Oneway, j.Func, j.Body); resp != nil {
			c.Body = append([]byte{}, tools.Int8ToByte(resp.SBuffer)...)
		}
	case job.OpTarsEcho:
		for i, size := range j.Sizes {
			c := one()
			c.Size = size
			c.OK = tarsEcho(p, &j, c, job.Payload(size, int64(i)))
		}
	case job.OpTarsSum:
		tarsSum(p, &j, one())
	default:
		return nil, errors.New("unknown op")
	}
	return res, nil
}

// tarsEcho calls "int echo(vector<byte> req, out vector<byte> rsp)" as tars2go's generated
// proxy does, and reports whether rsp came back equal to req.
func tarsEcho(p *proxy, j *job.Job, c *job.Call, req []byte) bool {
	os := codec.NewBuffer()
	_ = os.WriteHead(codec.SimpleList, 1)
	_ = os.WriteHead(codec.BYTE, 0)
	_ = os.WriteInt32(int32(len(req)), 0)
	_ = os.WriteBytes(req)
	resp := p.invoke(j, c, false, "echo", os.ToBytes())
	if resp == nil {
		return false
	}
	is := codec.NewReader(tools.Int8ToByte(resp.SBuffer))
	if err := is.ReadInt32(&c.TarsRet, 0, true); err != nil {
		setErr(c, fmt.Errorf("decode echo return value: %w", err))
		return false
	}
	if _, err := is.SkipTo(codec.SimpleList, 2, true); err != nil {
		setErr(c, fmt.Errorf("decode echo rsp: %w", err))
		return false
	}
	if _, err := is.SkipTo(codec.BYTE, 0, true); err != nil {
		setErr(c, fmt.Errorf("decode echo rsp: %w", err))
		return false
	}
	var n int32
	if err := is.ReadInt32(&n, 0, true); err != nil {
		setErr(c, fmt.Errorf("decode echo rsp size: %w", err))
		return false
	}
	var rsp []byte
	if n > 0 {
		if err := is.ReadBytes(&rsp, n, true); err != nil {
			setErr(c, fmt.Errorf("decode echo rsp: %w", err))
			return false
		}
	}
	return bytes.Equal(rsp, req)
}

// tarsSum calls "int sum(vector<int> nums, string label, out long total, out string echoed)".
func tarsSum(p *proxy, j *job.Job, c *job.Call) {
	os := codec.NewBuffer()
	_ = os.WriteHead(codec.LIST, 1)
	_ = os.WriteInt32(int32(len(j.Nums)), 0)
	for _, n := range j.Nums {
		_ = os.WriteInt32(n, 0)
	}
	_ = os.WriteString(j.Label, 2)
	resp := p.invoke(j, c, false, "sum", os.ToBytes())
	if resp == nil {
		return
	}
	is := codec.NewReader(tools.Int8ToByte(resp.SBuffer))
	err := is.ReadInt32(&c.TarsRet, 0, true)
	if err == nil {
		err = is.ReadInt64(&c.Total, 3, true)
	}
	if err == nil {
		err = is.ReadString(&c.Label, 4, true)
	}
	if err != nil {
		setErr(c, fmt.Errorf("decode sum reply: %w", err))
		return
	}
	c.OK = true
}
