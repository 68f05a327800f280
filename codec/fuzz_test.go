package codec

import (
	"bytes"
	"io"
	"math"
	"reflect"
	"runtime"
	"testing"
)

// The seed corpora are in testdata/fuzz/<FuzzName>/: the packets of the
// protocol test vectors of vectors_test.go (without their frame headers) and a few
// hand-made edge cases. Plain `go test` replays them.

// FuzzDecodeRequest decodes arbitrary bytes as a request packet: it must
// not panic, and a packet it accepts must survive encoding and decoding
// again unchanged.
func FuzzDecodeRequest(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		var p RequestPacket
		var err error
		checkAllocBound(t, body, func() uint64 {
			p = RequestPacket{}
			err = p.Decode(NewDecoder(body))
			return mapsWeight(p.Context, p.Status)
		})
		if err != nil {
			return
		}
		checkNoOverflow(t, body, p.Buffer)
		frame := AppendRequest(nil, &p)
		var again RequestPacket
		if err := DecodeRequest(frame, &again); err != nil {
			t.Fatalf("re-decoding %x (from %x): %v", frame, body, err)
		}
		if !reflect.DeepEqual(again, p) {
			t.Fatalf("re-decoded packet differs:\n got %+v\nwant %+v", again, p)
		}
	})
}

// FuzzDecodeResponse is FuzzDecodeRequest for responses.
func FuzzDecodeResponse(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		var p ResponsePacket
		var err error
		checkAllocBound(t, body, func() uint64 {
			p = ResponsePacket{}
			err = p.Decode(NewDecoder(body))
			return mapsWeight(p.Context, p.Status)
		})
		if err != nil {
			return
		}
		checkNoOverflow(t, body, p.Buffer)
		frame := AppendResponse(nil, &p)
		var again ResponsePacket
		if err := DecodeResponse(frame, &again); err != nil {
			t.Fatalf("re-decoding %x (from %x): %v", frame, body, err)
		}
		if !reflect.DeepEqual(again, p) {
			t.Fatalf("re-decoded packet differs:\n got %+v\nwant %+v", again, p)
		}
	})
}

// checkAllocBound fails if decoding input allocated more than 8 bytes per input byte beyond
// what decode says the decoded value weighs: what counts in the input set aside is bounded by
// the Decoder's allowance (budget.go), but valid input can weigh more in Go than on the wire
// (see mapsWeight, and the protobuf messages of proto_alloc_test.go), and is charged at its
// own weight. A small constant covers the allocator's minimum sizes on tiny inputs. The
// heap's counter also sees what other goroutines allocate meanwhile (the fuzzing engine's),
// so a decode over the bound is measured again: it fails only if it is over the bound three
// times.
func checkAllocBound(t *testing.T, input []byte, decode func() (weight uint64)) {
	t.Helper()
	var alloc, bound uint64
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		weight := decode()
		runtime.ReadMemStats(&after)
		alloc = after.TotalAlloc - before.TotalAlloc
		bound = 8*uint64(len(input)) + 1024 + weight
		if alloc <= bound {
			return
		}
	}
	t.Fatalf("decoding %d bytes allocated %d bytes (%.1f per byte), bound %d", len(input), alloc, float64(alloc)/float64(max(len(input), 1)), bound)
}

// mapsWeight is what decoded string maps may weigh beyond the input's 8 bytes a byte: an
// entry of two empty strings is 2 bytes on the wire and a map slot of two string headers, so
// a map of many empty entries outweighs its input (a slot per entry, tables up to doubled and
// growing: 4 slots' cost an entry).
func mapsWeight(maps ...map[string]string) uint64 {
	var w uint64
	for _, m := range maps {
		w += 4 * uint64(len(m)) * uint64(mapEntryCost(16, 16))
	}
	return w
}

// checkNoOverflow fails if a view's capacity reaches past its length, which
// would let an append overwrite the rest of the input.
func checkNoOverflow(t *testing.T, input, view []byte) {
	t.Helper()
	if cap(view) != len(view) && len(input) > 0 {
		t.Fatalf("view of %d bytes has cap %d", len(view), cap(view))
	}
}

// FuzzRoundTrip builds packets and a struct of typed fields from the fuzz
// inputs, encodes them, and checks that decoding gives them back.
func FuzzRoundTrip(f *testing.F) {
	f.Fuzz(func(t *testing.T, version int16, packetType int8, messageType, requestID, timeout, ret int32,
		servant, funcName string, body []byte, key, value, desc string, tag uint8, i64 int64, f64 float64) {
		var m map[string]string
		if key != "" || value != "" {
			m = map[string]string{key: value}
		}
		if len(body) == 0 {
			body = nil // decoders return nil for empty bytes
		}

		req := RequestPacket{
			Version: version, PacketType: packetType, MessageType: messageType, RequestID: requestID,
			ServantName: servant, FuncName: funcName, Buffer: body, Timeout: timeout, Context: m, Status: m,
		}
		stream := AppendRequest(nil, &req)
		rsp := ResponsePacket{
			Version: version, PacketType: packetType, RequestID: requestID, MessageType: messageType,
			Ret: ret, Buffer: body, Status: m, ResultDesc: desc, Context: m,
		}
		stream = AppendResponse(stream, &rsp)

		frame, n, err := NextFrame(stream, math.MaxInt)
		if err != nil || frame == nil {
			t.Fatalf("NextFrame of the request: %x, %v", frame, err)
		}
		var gotReq RequestPacket
		if err := DecodeRequest(frame, &gotReq); err != nil {
			t.Fatalf("DecodeRequest %x: %v", frame, err)
		}
		if !reflect.DeepEqual(gotReq, req) {
			t.Fatalf("request:\n got %+v\nwant %+v", gotReq, req)
		}
		if again := AppendRequest(nil, &gotReq); !bytes.Equal(again, frame) {
			t.Fatalf("request re-encoded:\n got %x\nwant %x", again, frame)
		}

		frame, _, err = NextFrame(stream[n:], math.MaxInt)
		if err != nil || frame == nil || len(frame) != len(stream)-n {
			t.Fatalf("NextFrame of the response: %x, %v", frame, err)
		}
		var gotRsp ResponsePacket
		if err := DecodeResponse(frame, &gotRsp); err != nil {
			t.Fatalf("DecodeResponse %x: %v", frame, err)
		}
		if !reflect.DeepEqual(gotRsp, rsp) {
			t.Fatalf("response:\n got %+v\nwant %+v", gotRsp, rsp)
		}

		// Typed fields at a fuzzed tag, in a struct skipped by a reader that
		// wants the field after it.
		var e Encoder
		e.WriteStructBegin(tag)
		e.WriteInt64(0, i64)
		e.WriteFloat64(1, f64)
		e.WriteString(2, servant)
		e.WriteBytes(3, body)
		e.WriteStringMap(4, m)
		e.WriteStructEnd()
		e.WriteInt32(tag, requestID)
		if tag < 255 {
			e.WriteInt8(tag+1, packetType)
		}

		d := NewDecoder(e.Buf)
		if found, err := d.ReadStructBegin(tag, true); !found || err != nil {
			t.Fatalf("ReadStructBegin(%d): %v, %v", tag, found, err)
		}
		gotI64, err := d.ReadInt64(0, true)
		if err != nil || gotI64 != i64 {
			t.Fatalf("int64: got %d, %v; want %d", gotI64, err, i64)
		}
		gotF64, err := d.ReadFloat64(1, true)
		if err != nil || math.Float64bits(gotF64) != math.Float64bits(f64) {
			t.Fatalf("double: got %v, %v; want %v", gotF64, err, f64)
		}
		if err := d.ReadStructEnd(); err != nil {
			t.Fatalf("ReadStructEnd: %v", err)
		}
		gotID, err := d.ReadInt32(tag, true)
		if err != nil || gotID != requestID {
			t.Fatalf("int32 after the struct: got %d, %v; want %d", gotID, err, requestID)
		}
		if tag < 255 {
			gotPT, err := d.ReadInt8(tag+1, true)
			if err != nil || gotPT != packetType {
				t.Fatalf("int8 at tag %d: got %d, %v; want %d", tag+1, gotPT, err, packetType)
			}
		}
		if d.Len() != 0 {
			t.Fatalf("%d bytes left unread", d.Len())
		}

		d.Reset(e.Buf)
		if err := d.SkipField(); err != nil {
			t.Fatalf("SkipField over the struct: %v", err)
		}
		if gotID, err := d.ReadInt32(tag, true); err != nil || gotID != requestID {
			t.Fatalf("int32 after skipping the struct: got %d, %v; want %d", gotID, err, requestID)
		}
	})
}

// chunkReader returns its data in reads of the sizes in chunks, cycling.
type chunkReader struct {
	data   []byte
	chunks []byte
	i      int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.chunks) > 0 {
		n = int(c.chunks[c.i%len(c.chunks)]) + 1
		c.i++
	}
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// FuzzFrameReader checks that FrameReader, fed in arbitrary chunks, yields
// the frames NextFrame finds in the whole stream, then the same error.
func FuzzFrameReader(f *testing.F) {
	stream, _ := vectorStream(f)
	f.Add(stream, []byte{0, 3, 200, 7})
	f.Add(append(stream, 0, 0, 0, 2), []byte{255})
	f.Fuzz(func(t *testing.T, stream, chunks []byte) {
		const maxSize = 1 << 12
		var want [][]byte
		var wantErr error
		for rest := stream; ; {
			frame, n, err := NextFrame(rest, maxSize)
			if err != nil {
				wantErr = err
				break
			}
			if frame == nil {
				wantErr = io.EOF
				if len(rest) > 0 {
					wantErr = io.ErrUnexpectedEOF
				}
				break
			}
			want = append(want, frame)
			rest = rest[n:]
		}
		fr := NewFrameReader(&chunkReader{data: stream, chunks: chunks}, maxSize)
		got, err := readAll(fr)
		if len(got) != len(want) {
			t.Fatalf("got %d frames, want %d", len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("frame %d: got %x, want %x", i, got[i], want[i])
			}
		}
		if err != wantErr && err.Error() != wantErr.Error() {
			t.Fatalf("error: got %v, want %v", err, wantErr)
		}
		if cap(fr.buf) > 2*maxSize {
			t.Fatalf("buffer cap %d for frames of at most %d bytes", cap(fr.buf), maxSize)
		}
	})
}

// FuzzDecoder runs the generic Decoder over arbitrary bytes: skipping field
// by field must consume input on every success and stop with an error or at
// the end; the typed readers must not panic or over-allocate.
func FuzzDecoder(f *testing.F) {
	for _, h := range []string{vecReq2Ctx, vecRspNoFunc, vecRspTarsEcho} {
		f.Add(mustUnhex(h)[HeaderLen:])
	}
	f.Add(mustUnhex("0a0900020a0b1c0b98000106016b1601760b"))
	f.Fuzz(func(t *testing.T, input []byte) {
		d := NewDecoder(input)
		for d.Len() > 0 {
			before := d.Len()
			if _, typ, err := d.PeekHead(); err != nil || typ == TypeStructEnd {
				break
			}
			if err := d.SkipField(); err != nil {
				break
			}
			if d.Len() >= before {
				t.Fatalf("SkipField consumed nothing at offset %d", d.Offset())
			}
		}
		for tag := range byte(4) {
			readers := []func(d *Decoder) error{
				func(d *Decoder) error { _, err := d.ReadInt64(tag, false); return err },
				func(d *Decoder) error { _, err := d.ReadFloat64(tag, false); return err },
				func(d *Decoder) error { _, err := d.ReadString(tag, false); return err },
				func(d *Decoder) error {
					b, err := d.ReadBytes(tag, false)
					if len(b) > len(input) {
						t.Fatalf("ReadBytes: %d bytes from %d of input", len(b), len(input))
					}
					return err
				},
				func(d *Decoder) error {
					m, err := d.ReadStringMap(tag, false)
					if len(m) > len(input)/4 {
						t.Fatalf("ReadStringMap: %d entries from %d bytes", len(m), len(input))
					}
					return err
				},
				func(d *Decoder) error {
					n, _, err := d.ReadListHead(tag, false)
					if n > d.Len() {
						t.Fatalf("ReadListHead: size %d with %d bytes left", n, d.Len())
					}
					return err
				},
				func(d *Decoder) error {
					n, _, err := d.ReadMapHead(tag, false)
					if n > d.Len()/2 {
						t.Fatalf("ReadMapHead: size %d with %d bytes left", n, d.Len())
					}
					return err
				},
				func(d *Decoder) error {
					found, err := d.ReadStructBegin(tag, false)
					if found && err == nil {
						return d.ReadStructEnd()
					}
					return err
				},
			}
			for _, read := range readers {
				read(NewDecoder(input))
			}
		}
	})
}
