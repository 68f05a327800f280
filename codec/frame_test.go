package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// vectorStream returns every test vector frame, back to back.
func vectorStream(t testing.TB) (stream []byte, frames [][]byte) {
	t.Helper()
	for _, h := range []string{vecReq1, vecRsp1, vecReq2Ctx, vecRspNoFunc, vecReqOneway, vecReqPing, vecRspPing, vecReqTarsEcho, vecRspTarsEcho} {
		f := unhex(t, h)
		frames = append(frames, f)
		stream = append(stream, f...)
	}
	return stream, frames
}

func TestBeginEndFrame(t *testing.T) {
	b := []byte("xy")
	b, start := BeginFrame(b)
	if start != 2 || len(b) != 6 {
		t.Fatalf("BeginFrame: got start %d len %d, want 2 and 6", start, len(b))
	}
	b = append(b, "body"...)
	EndFrame(b, start)
	if want := append([]byte("xy"), 0, 0, 0, 8, 'b', 'o', 'd', 'y'); !bytes.Equal(b, want) {
		t.Errorf("got %x, want %x", b, want)
	}
	frame, n, err := NextFrame(b[start:], 0)
	if err != nil || n != 8 || !bytes.Equal(frame, b[start:]) {
		t.Errorf("NextFrame: got %x, %d, %v; want %x, 8, nil", frame, n, err, b[start:])
	}
}

// AppendResponseAround's parts, with the body put back at the offset it returns, are the
// bytes AppendResponse writes, for bodies whose length takes 1, 2 and 4 bytes on the wire.
func TestAppendResponseAround(t *testing.T) {
	for _, n := range []int{0, 3, 200, 70000} {
		full := fullResponse()
		full.Context = map[string]string{"c": "d"} // one entry: the encoding is deterministic
		for _, pkt := range []ResponsePacket{{Version: VersionTars, RequestID: 7}, full} {
			pkt.Buffer = bytes.Repeat([]byte{0xa5}, n)
			want := AppendResponse([]byte("xy"), &pkt)
			b, at := AppendResponseAround([]byte("xy"), &pkt)
			got := append(append(append([]byte(nil), b[:at]...), pkt.Buffer...), b[at:]...)
			if !bytes.Equal(got, want) {
				t.Fatalf("body of %d bytes, ret %d: head %x, tail %x differ from AppendResponse's frame", n, pkt.Ret, b[:at], b[at:])
			}
		}
	}
}

func TestNextFrameManyInOneBuffer(t *testing.T) {
	stream, frames := vectorStream(t)
	buf := stream
	for i, want := range frames {
		got, n, err := NextFrame(buf, DefaultMaxPacketSize)
		if err != nil || n != len(want) || !bytes.Equal(got, want) {
			t.Fatalf("frame %d: got %x, %d, %v; want %x, %d, nil", i, got, n, err, want, len(want))
		}
		if cap(got) != n {
			t.Errorf("frame %d: cap %d, want %d", i, cap(got), n)
		}
		buf = buf[n:]
	}
	if got, n, err := NextFrame(buf, DefaultMaxPacketSize); got != nil || n != 0 || err != nil {
		t.Errorf("after the last frame: got %x, %d, %v; want nil, 0, nil", got, n, err)
	}
}

// A frame split at every byte position is reported incomplete until all
// of it is there.
func TestNextFrameSplitEverywhere(t *testing.T) {
	_, frames := vectorStream(t)
	for _, frame := range frames {
		for i := range len(frame) {
			got, n, err := NextFrame(frame[:i], DefaultMaxPacketSize)
			if got != nil || n != 0 || err != nil {
				t.Fatalf("%d of %d bytes: got %x, %d, %v; want nil, 0, nil", i, len(frame), got, n, err)
			}
		}
		if got, n, err := NextFrame(frame, DefaultMaxPacketSize); err != nil || n != len(frame) || !bytes.Equal(got, frame) {
			t.Fatalf("whole frame: got %x, %d, %v", got, n, err)
		}
	}
}

func header(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }

func TestNextFrameBadLength(t *testing.T) {
	tests := []struct {
		name    string
		length  uint32
		max     int
		wantErr error
	}{
		{name: "zero", length: 0, max: 100, wantErr: ErrFrameTooSmall},
		{name: "three", length: 3, max: 100, wantErr: ErrFrameTooSmall},
		{name: "four is empty but valid", length: 4, max: 100},
		{name: "max", length: 100, max: 100},
		{name: "max+1", length: 101, max: 100, wantErr: ErrFrameTooLarge},
		{name: "default max", length: DefaultMaxPacketSize, max: 0},
		{name: "default max+1", length: DefaultMaxPacketSize + 1, max: -1, wantErr: ErrFrameTooLarge},
		{name: "2^31-1", length: 0x7fffffff, max: DefaultMaxPacketSize, wantErr: ErrFrameTooLarge},
		{name: "2^32-1", length: 0xffffffff, max: DefaultMaxPacketSize, wantErr: ErrFrameTooLarge},
		{name: "2^31-1 under MaxInt", length: 0x7fffffff, max: math.MaxInt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, n, err := NextFrame(header(tc.length), tc.max)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("got error %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil && (got != nil || n != 0) {
				t.Errorf("got %x, %d with the error; want nil, 0", got, n)
			}
			if tc.wantErr == nil && tc.length > HeaderLen && (got != nil || n != 0) {
				t.Errorf("incomplete frame: got %x, %d; want nil, 0", got, n)
			}
		})
	}
}

func TestDecodeFrameMismatch(t *testing.T) {
	frame := unhex(t, vecRsp1)
	tests := []struct {
		name    string
		frame   []byte
		wantErr error
	}{
		{name: "empty", frame: nil, wantErr: ErrFrameTooSmall},
		{name: "header only, too short", frame: frame[:3], wantErr: ErrFrameTooSmall},
		{name: "shorter than its header says", frame: frame[:len(frame)-1], wantErr: ErrMalformed},
		{name: "longer than its header says", frame: append(bytes.Clone(frame), 0x0c), wantErr: ErrMalformed},
		{name: "empty packet", frame: header(4), wantErr: ErrRequired},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := DecodeResponse(tc.frame, new(ResponsePacket)); !errors.Is(err, tc.wantErr) {
				t.Errorf("DecodeResponse: got %v, want %v", err, tc.wantErr)
			}
			if err := DecodeRequest(tc.frame, new(RequestPacket)); !errors.Is(err, tc.wantErr) {
				t.Errorf("DecodeRequest: got %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func BenchmarkNextFrame(b *testing.B) {
	stream, frames := vectorStream(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		buf := stream
		for range frames {
			_, n, err := NextFrame(buf, DefaultMaxPacketSize)
			if err != nil || n == 0 {
				b.Fatal(n, err)
			}
			buf = buf[n:]
		}
	}
}
