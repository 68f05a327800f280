package server

import (
	"bytes"
	"maps"
	"testing"

	"github.com/tarscomm/tarscomm/codec"
)

// FuzzDecodeRequest checks that decodeRequest agrees with codec.DecodeRequest on any input:
// both fail, or both succeed with the same fields.
func FuzzDecodeRequest(f *testing.F) {
	for _, v := range []string{
		"0000004110012c3c4001561b416e63686f722e4563686f5365727665722e4563686f50624f626a66044563686f7d0000090a0568656c6c6f1007810bb8980ca80c",
		"0000004810012c3c4002561b416e63686f722e4563686f5365727665722e4563686f50624f626a66044563686f7d0000090a0568656c6c6f1007810bb898000106016b160176a80c",
		"0000003c10012c3c4006561b416e63686f722e4563686f5365727665722e4563686f50624f626a6609746172735f70696e677d000c810bb8980ca80c",
	} {
		f.Add(unhex(f, v))
	}
	long := request(1, string(bytes.Repeat([]byte("S"), 300)), "F", []byte("body"))
	f.Add(codec.AppendRequest(nil, long))
	// Names written as 4-byte strings although short, and with long heads.
	f.Add(frameOf(func(e *codec.Encoder) {
		e.WriteInt16(1, 1)
		e.WriteInt8(2, 0)
		e.WriteInt32(3, 0)
		e.WriteInt32(4, 5)
		e.WriteHead(5, codec.TypeString4)
		e.Buf = append(e.Buf, 0, 0, 0, 1, 'S')
		e.Buf = append(e.Buf, 0xF0|codec.TypeString1, 6, 1, 'F')
		e.WriteBytes(7, nil)
	}))
	f.Add(frameOf(func(e *codec.Encoder) { // function name missing
		e.WriteInt16(1, 1)
		e.WriteInt8(2, 0)
		e.WriteInt32(3, 0)
		e.WriteInt32(4, 5)
		e.WriteString(5, "S")
		e.WriteBytes(7, nil)
	}))
	f.Add(frameOf(func(e *codec.Encoder) { // servant name truncated
		e.WriteInt16(1, 1)
		e.WriteInt8(2, 0)
		e.WriteInt32(3, 0)
		e.WriteInt32(4, 5)
		e.WriteHead(5, codec.TypeString1)
		e.Buf = append(e.Buf, 200, 'S')
	}))
	f.Fuzz(func(t *testing.T, frame []byte) {
		var want, got codec.RequestPacket
		wantErr := codec.DecodeRequest(frame, &want)
		servant, fn, err := decodeRequest(frame, &got)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("decodeRequest(%x): error %v, codec.DecodeRequest: %v", frame, err, wantErr)
		}
		if err != nil {
			return
		}
		got.ServantName, got.FuncName = string(servant), string(fn)
		if got.Version != want.Version || got.PacketType != want.PacketType || got.MessageType != want.MessageType ||
			got.RequestID != want.RequestID || got.ServantName != want.ServantName || got.FuncName != want.FuncName ||
			!bytes.Equal(got.Buffer, want.Buffer) || got.Timeout != want.Timeout ||
			!maps.Equal(got.Context, want.Context) || !maps.Equal(got.Status, want.Status) {
			t.Fatalf("decodeRequest(%x)\n got %+v\nwant %+v", frame, got, want)
		}
	})
}

// frameOf returns a frame holding what write encodes.
func frameOf(write func(e *codec.Encoder)) []byte {
	b, start := codec.BeginFrame(nil)
	e := codec.Encoder{Buf: b}
	write(&e)
	codec.EndFrame(e.Buf, start)
	return e.Buf
}
