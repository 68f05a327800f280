// Package codec owns the TARS wire protocol: the TARS encoding of fields
// (Encoder, Decoder), the request and response packets (RequestPacket,
// ResponsePacket), the length-prefixed framing of a TCP stream (BeginFrame,
// EndFrame, NextFrame, FrameReader), protobuf bodies marshalled in place
// (WriteProto, ReadProto, AppendRequestProto), and the protocol's constants
// and return codes.
//
// codec imports, besides the standard library and google.golang.org/protobuf,
// only internal/bufpool (the pool its large frame buffers come from), and
// starts no goroutine. Its types hold no
// shared state; an Encoder, Decoder or FrameReader belongs to the goroutine
// using it, typically a net thread's event loop.
//
// It is built for the hot path of an RPC client. Encoders only append to a
// caller-owned buffer; decoders return byte slices that are views into the
// input where documented, allocate only for strings, non-empty maps and
// copies, and never allocate more than the input could justify, whatever
// lengths the input claims.
//
// # Wire format
//
// A frame is a big-endian uint32 length that includes its own four bytes,
// followed by the packet's fields. Each field starts with a head byte
// tag<<4|type (a tag of 15 or more is written as 0xF0|type and a tag byte);
// integers use the smallest type that holds them, and 0 is TypeZero. Fields
// are written and read in ascending tag order; a reader skips fields it
// does not know.
//
// # Example
//
// Encoding a request into a reusable buffer and reading responses from a
// stream:
//
//	buf = codec.AppendRequest(buf[:0], &codec.RequestPacket{
//		Version:     codec.VersionTars,
//		RequestID:   id,
//		ServantName: "Hello.Server.GreeterObj",
//		FuncName:    "SayHello",
//		Buffer:      body,
//		Timeout:     3000,
//	})
//	conn.Write(buf)
//
//	fr := codec.NewFrameReader(conn, codec.DefaultMaxPacketSize)
//	for {
//		frame, err := fr.Next()
//		if err != nil {
//			return err // io.EOF, or a bad stream: close the connection
//		}
//		var rsp codec.ResponsePacket
//		if err := codec.DecodeResponse(frame, &rsp); err != nil {
//			return err
//		}
//		// rsp.Buffer aliases frame: use or copy it before the next fr.Next.
//	}
package codec
