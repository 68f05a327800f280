// Package tarsidl is the .tars interface of the interop tests, written by hand with tarscomm's
// codec the way a generator for .tars files would write it: parameters at tags 1..N, the
// return value at tag 0 of the reply and out-parameters at their own tags.
//
//	module Interop {
//	    interface EchoTars {
//	        int echo(vector<byte> req, out vector<byte> rsp);
//	        int sum(vector<int> nums, string label, out long total, out string echoed);
//	        int sleep(int ms);
//	    };
//	};
//
// The client side is EncodeX/DecodeXReply, sent with ServantProxy.InvokeRaw; the server side is
// Register, for tarscomm's server. The TarsGo side of the same interface is in tarsgoecho.
package tarsidl

import (
	"context"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/server"
)

// The functions of EchoTars.
const (
	FuncEcho  = "echo"
	FuncSum   = "sum"
	FuncSleep = "sleep"
)

// EncodeEcho encodes the parameters of echo.
func EncodeEcho(req []byte) []byte {
	var e codec.Encoder
	e.WriteBytes(1, req)
	return e.Buf
}

// DecodeEchoReply decodes the reply of echo.
func DecodeEchoReply(body []byte) (ret int32, rsp []byte, err error) {
	d := codec.NewDecoder(body)
	if ret, err = d.ReadInt32(0, true); err != nil {
		return 0, nil, err
	}
	rsp, err = d.ReadBytes(2, true)
	return ret, rsp, err
}

// EncodeSum encodes the parameters of sum.
func EncodeSum(nums []int32, label string) []byte {
	var e codec.Encoder
	e.WriteListHead(1, len(nums))
	for _, n := range nums {
		e.WriteInt32(0, n)
	}
	e.WriteString(2, label)
	return e.Buf
}

// DecodeSumReply decodes the reply of sum.
func DecodeSumReply(body []byte) (ret int32, total int64, echoed string, err error) {
	d := codec.NewDecoder(body)
	if ret, err = d.ReadInt32(0, true); err != nil {
		return
	}
	if total, err = d.ReadInt64(3, true); err != nil {
		return
	}
	echoed, err = d.ReadString(4, true)
	return
}

// EncodeSleep encodes the parameters of sleep.
func EncodeSleep(ms int32) []byte {
	var e codec.Encoder
	e.WriteInt32(1, ms)
	return e.Buf
}

// Register serves EchoTars as servant on s, with tarscomm's server: echo returns 0 and req,
// sum returns len(nums), their total and label, sleep waits ms milliseconds (or until the
// server stops) and returns 0. A body that does not decode is answered with
// codec.RetServerDecode. Serve it with workers (server.WithWorkers): sleep blocks.
func Register(s *server.Server, servant string) error {
	if err := s.Handle(servant, FuncEcho, func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		d := codec.NewDecoder(req)
		in, err := d.ReadBytesView(1, true)
		if err != nil {
			return nil, decodeError(err)
		}
		e := codec.Encoder{Buf: rsp}
		e.WriteInt32(0, 0)
		e.WriteBytes(2, in)
		return e.Buf, nil
	}); err != nil {
		return err
	}
	if err := s.Handle(servant, FuncSum, func(_ context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		d := codec.NewDecoder(req)
		n, _, err := d.ReadListHead(1, true)
		if err != nil {
			return nil, decodeError(err)
		}
		var total int64
		for range n {
			v, err := d.ReadInt32(0, true)
			if err != nil {
				return nil, decodeError(err)
			}
			total += int64(v)
		}
		label, err := d.ReadString(2, true)
		if err != nil {
			return nil, decodeError(err)
		}
		e := codec.Encoder{Buf: rsp}
		e.WriteInt32(0, int32(n))
		e.WriteInt64(3, total)
		e.WriteString(4, label)
		return e.Buf, nil
	}); err != nil {
		return err
	}
	return s.Handle(servant, FuncSleep, func(ctx context.Context, _ *server.Current, req, rsp []byte) ([]byte, error) {
		ms, err := codec.NewDecoder(req).ReadInt32(1, true)
		if err != nil {
			return nil, decodeError(err)
		}
		t := time.NewTimer(time.Duration(ms) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		e := codec.Encoder{Buf: rsp}
		e.WriteInt32(0, 0)
		return e.Buf, nil
	})
}

func decodeError(err error) error {
	return &server.Error{Code: codec.RetServerDecode, Desc: err.Error()}
}
