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
// # Memory a decode may take
//
// A decode allocates for what its input holds, never for what it claims.
// The Decoder gives the lists and maps it sizes from counts in the input
// (MakeList, MakeMap: the generated .tars decoders use them), and the
// strings it copies, an allowance of 7 bytes per input byte over the whole
// decode; a container whose count asks for more starts smaller and grows as
// its elements are read. Structs nest at most 256 deep. So an input whose
// counts or lengths claim elements it does not hold allocates at most
// 8 bytes per input byte (TestHostileInputAllocation in
// cmd/tars2tarscomm/internal/testgen/demo/all measures 1 to 7.3 on crafted
// 64 KiB and 4 MiB inputs). A protobuf body (ReadProto, the replies of
// servantproxy and the requests of server.HandleProto) is unmarshalled by
// protobuf-go, which sizes nothing from a claim either: a length beyond
// the input costs nothing, a packed field is sized from the values really
// there.
//
// That bound cannot hold for valid input whose Go form outweighs its wire
// form: an empty struct in a vector is 2 bytes on the wire and a 48-byte
// Tree in Go, an empty protobuf message 2 bytes and a 64-byte message and
// its pointer. What holds then is 8 bytes per input byte plus 5 times the
// Go form of what was decoded (growing past the allowance by append and
// map growth allocates up to 5 times the final size along the way);
// FuzzDecodeItem, FuzzDecodeTree and FuzzReadProto check it on every
// input, including the partial value of a failed decode. Measured per
// input byte: 107 bytes for a vector of empty structs, 54 for a
// structpb.ListValue of empty Values, 26 to 30 for a map of short keys to empty
// messages, 21 for messages nested to protobuf-go's recursion limit. The
// input itself is one frame, at most max-packet-size (10 MiB by default,
// on the client and the server): lower it where peers are not trusted and
// such replies or requests are possible.
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
