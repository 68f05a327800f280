package tarsgoecho

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/TarsCloud/TarsGo/tars/protocol/codec"
	"github.com/TarsCloud/TarsGo/tars/protocol/res/requestf"
	"github.com/TarsCloud/TarsGo/tars/util/current"
	"github.com/TarsCloud/TarsGo/tars/util/tools"
)

// EchoTars dispatches the functions of the .tars interface EchoTars (see package tarsidl) to
// itself; register it with tars.AddServantWithContext(new(EchoTars), new(EchoTars), obj).
type EchoTars struct{}

// Dispatch decodes the parameters at tags 1..N with TarsGo's codec, runs the function, and
// encodes the return value at tag 0 and the out-parameters at their tags.
func (t *EchoTars) Dispatch(ctx context.Context, _ any, req *requestf.RequestPacket, resp *requestf.ResponsePacket, _ bool) error {
	is := codec.NewReader(tools.Int8ToByte(req.SBuffer))
	os := codec.NewBuffer()
	var err error
	switch req.SFuncName {
	case "echo":
		err = t.echo(is, os)
	case "sum":
		err = t.sum(is, os)
	case "sleep":
		err = t.sleep(ctx, is, os)
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
		SBuffer:     tools.ByteToInt8(os.ToBytes()),
		Status:      status,
		Context:     rctx,
	}
	return nil
}

// readBytes reads a vector<byte> at tag, written as a simple list or a list of bytes.
func readBytes(is *codec.Reader, tag byte) ([]int8, error) {
	_, ty, err := is.SkipToNoCheck(tag, true)
	if err != nil {
		return nil, err
	}
	var n int32
	var out []int8
	switch ty {
	case codec.SimpleList:
		if _, err := is.SkipTo(codec.BYTE, 0, true); err != nil {
			return nil, err
		}
		if err := is.ReadInt32(&n, 0, true); err != nil {
			return nil, err
		}
		err = is.ReadSliceInt8(&out, n, true)
	case codec.LIST:
		if err := is.ReadInt32(&n, 0, true); err != nil {
			return nil, err
		}
		out = make([]int8, n)
		for i := range out {
			if err = is.ReadInt8(&out[i], 0, true); err != nil {
				break
			}
		}
	default:
		err = fmt.Errorf("tag %d: type %d is not a vector<byte>", tag, ty)
	}
	return out, err
}

func writeBytes(os *codec.Buffer, tag byte, b []int8) error {
	if err := os.WriteHead(codec.SimpleList, tag); err != nil {
		return err
	}
	if err := os.WriteHead(codec.BYTE, 0); err != nil {
		return err
	}
	if err := os.WriteInt32(int32(len(b)), 0); err != nil {
		return err
	}
	return os.WriteSliceInt8(b)
}

// echo: int echo(vector<byte> req, out vector<byte> rsp).
func (*EchoTars) echo(is *codec.Reader, os *codec.Buffer) error {
	in, err := readBytes(is, 1)
	if err != nil {
		return err
	}
	if err := os.WriteInt32(0, 0); err != nil {
		return err
	}
	return writeBytes(os, 2, in)
}

// sum: int sum(vector<int> nums, string label, out long total, out string echoed); it returns
// the number of nums.
func (*EchoTars) sum(is *codec.Reader, os *codec.Buffer) error {
	if _, err := is.SkipTo(codec.LIST, 1, true); err != nil {
		return err
	}
	var n int32
	if err := is.ReadInt32(&n, 0, true); err != nil {
		return err
	}
	var total int64
	for range n {
		var v int32
		if err := is.ReadInt32(&v, 0, true); err != nil {
			return err
		}
		total += int64(v)
	}
	var label string
	if err := is.ReadString(&label, 2, true); err != nil {
		return err
	}
	if err := os.WriteInt32(n, 0); err != nil {
		return err
	}
	if err := os.WriteInt64(total, 3); err != nil {
		return err
	}
	return os.WriteString(label, 4)
}

// sleep: int sleep(int ms); it returns 1 if ctx ended first.
func (*EchoTars) sleep(ctx context.Context, is *codec.Reader, os *codec.Buffer) error {
	var ms int32
	if err := is.ReadInt32(&ms, 1, true); err != nil {
		return err
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	var ret int32
	select {
	case <-t.C:
	case <-ctx.Done():
		ret = 1
	}
	return os.WriteInt32(ret, 0)
}
