package codec_test

import (
	"bytes"
	"fmt"

	"github.com/tarscomm/tarscomm/codec"
)

// A request is framed into a reusable buffer; the peer's byte stream is
// split into frames and each frame decoded into a response.
func Example() {
	buf := codec.AppendRequest(nil, &codec.RequestPacket{
		Version:     codec.VersionTars,
		RequestID:   1,
		ServantName: "Hello.Server.GreeterObj",
		FuncName:    "SayHello",
		Buffer:      []byte("body"),
		Timeout:     3000,
	})
	fmt.Printf("request frame: %d bytes\n", len(buf))

	// Two responses arrive in one read.
	var stream []byte
	stream = codec.AppendResponse(stream, &codec.ResponsePacket{Version: codec.VersionTars, RequestID: 1, Buffer: []byte("reply")})
	stream = codec.AppendResponse(stream, &codec.ResponsePacket{Version: codec.VersionTars, RequestID: 2, Ret: codec.RetNoFunc, ResultDesc: "no func"})

	fr := codec.NewFrameReader(bytes.NewReader(stream), codec.DefaultMaxPacketSize)
	for {
		frame, err := fr.Next()
		if err != nil {
			fmt.Println(err)
			break
		}
		var rsp codec.ResponsePacket
		if err := codec.DecodeResponse(frame, &rsp); err != nil {
			fmt.Println(err)
			break
		}
		if rsp.Ret != codec.RetOK {
			fmt.Printf("id %d: %s: %s\n", rsp.RequestID, codec.RetName(rsp.Ret), rsp.ResultDesc)
			continue
		}
		fmt.Printf("id %d: %s\n", rsp.RequestID, rsp.Buffer)
	}
	// Output:
	// request frame: 60 bytes
	// id 1: reply
	// id 2: no such function: no func
	// EOF
}

// Generated code for a .tars interface writes its parameters from tag 1
// and reads the return value at tag 0, skipping what it does not know.
func ExampleDecoder() {
	var e codec.Encoder
	e.WriteInt32(0, 0)               // return value
	e.WriteString(1, "added in v2")  // a field this reader does not know
	e.WriteBytes(2, []byte("hello")) // out-parameter

	d := codec.NewDecoder(e.Buf)
	ret, _ := d.ReadInt32(0, true)
	out, _ := d.ReadBytes(2, true)
	_, err := d.ReadString(3, true)
	fmt.Println(ret, string(out))
	fmt.Println(err)
	// Output:
	// 0 hello
	// codec: required field missing: tag 3 (offset 23)
}
