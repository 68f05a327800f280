package codec

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// echoDescriptors builds, without generated code, the EchoReq message of
// the test vectors (proto3: string data = 1; int32 seq = 2) and a proto2
// message with a required field, which cannot be marshalled while unset.
func echoDescriptors(t testing.TB) (echoReq, withRequired protoreflect.MessageDescriptor) {
	t.Helper()
	field := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{
			Name: proto.String(name), JsonName: proto.String(name), Number: proto.Int32(num),
			Type: typ.Enum(), Label: label.Enum(),
		}
	}
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
	files := []*descriptorpb.FileDescriptorProto{
		{
			Name: proto.String("codec_test_echo.proto"), Package: proto.String("codectest"), Syntax: proto.String("proto3"),
			MessageType: []*descriptorpb.DescriptorProto{{
				Name: proto.String("EchoReq"),
				Field: []*descriptorpb.FieldDescriptorProto{
					field("data", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt),
					field("seq", 2, descriptorpb.FieldDescriptorProto_TYPE_INT32, opt),
				},
			}},
		},
		{
			Name: proto.String("codec_test_req.proto"), Package: proto.String("codectest"), Syntax: proto.String("proto2"),
			MessageType: []*descriptorpb.DescriptorProto{{
				Name: proto.String("WithRequired"),
				Field: []*descriptorpb.FieldDescriptorProto{
					field("id", 1, descriptorpb.FieldDescriptorProto_TYPE_INT32, descriptorpb.FieldDescriptorProto_LABEL_REQUIRED),
				},
			}},
		},
	}
	var mds []protoreflect.MessageDescriptor
	for _, fdp := range files {
		fd, err := protodesc.NewFile(fdp, nil)
		if err != nil {
			t.Fatalf("protodesc.NewFile: %v", err)
		}
		mds = append(mds, fd.Messages().Get(0))
	}
	return mds[0], mds[1]
}

func newEchoReq(md protoreflect.MessageDescriptor, data string, seq int32) *dynamicpb.Message {
	m := dynamicpb.NewMessage(md)
	m.Set(md.Fields().ByName("data"), protoreflect.ValueOfString(data))
	m.Set(md.Fields().ByName("seq"), protoreflect.ValueOfInt32(seq))
	return m
}

func TestWriteProtoVector(t *testing.T) {
	md, _ := echoDescriptors(t)
	var e Encoder
	e.WriteInt8(1, 1) // something before it, to check nothing is overwritten
	if err := e.WriteProto(7, newEchoReq(md, "hello", 7)); err != nil {
		t.Fatalf("WriteProto: %v", err)
	}
	// Tag 7 of the request vector: simple list of the 9-byte EchoReq. A
	// dynamic message may order its fields differently from generated code,
	// so the body is compared as a message.
	head := unhex(t, "1001"+"7d000009")
	if !bytes.HasPrefix(e.Buf, head) || len(e.Buf) != len(head)+len(echoPbBodyHx)/2 {
		t.Fatalf("got %x, want %x followed by 9 bytes", e.Buf, head)
	}
	got := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(e.Buf[len(head):], got); err != nil || !proto.Equal(got, newEchoReq(md, "hello", 7)) {
		t.Errorf("body: got %v, %v; want %x", got, err, echoPbBodyHx)
	}
}

func TestReadProtoVector(t *testing.T) {
	md, _ := echoDescriptors(t)
	frame := unhex(t, vecReq1)
	d := NewDecoder(frame[HeaderLen:])
	if _, err := d.ReadString(6, true); err != nil {
		t.Fatal(err)
	}
	got := dynamicpb.NewMessage(md)
	if err := d.ReadProto(7, true, got); err != nil {
		t.Fatalf("ReadProto: %v", err)
	}
	if want := newEchoReq(md, "hello", 7); !proto.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if n, err := d.ReadInt32(8, true); err != nil || n != 3000 {
		t.Errorf("field after the body: got %d, %v; want 3000, nil", n, err)
	}
}

func TestReadProtoErrors(t *testing.T) {
	md, reqMD := echoDescriptors(t)
	tests := []struct {
		name      string
		input     []byte
		required  bool
		into      protoreflect.MessageDescriptor
		wantErr   error
		wantReset bool
	}{
		{name: "absent optional resets", input: nil, into: md, wantReset: true},
		{name: "absent required", input: nil, required: true, into: md, wantErr: ErrRequired},
		{name: "not protobuf", input: encode(func(e *Encoder) { e.WriteBytes(0, []byte{0xff, 0xff}) }), into: md, wantErr: ErrMalformed},
		{name: "wrong type", input: encode(func(e *Encoder) { e.WriteString(0, "x") }), into: md, wantErr: ErrMalformed},
		{name: "required field unset", input: encode(func(e *Encoder) { e.WriteBytes(0, nil) }), into: reqMD, wantErr: ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := dynamicpb.NewMessage(tc.into)
			if tc.into == md {
				m = newEchoReq(md, "stale", 1)
			}
			err := NewDecoder(tc.input).ReadProto(0, tc.required, m)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
			if tc.wantReset && proto.Size(m) != 0 {
				t.Errorf("message after an absent field: got %v, want empty", m)
			}
		})
	}
}

func TestWriteProtoErrorKeepsBuf(t *testing.T) {
	_, reqMD := echoDescriptors(t)
	var e Encoder
	e.WriteString(1, "before")
	before := bytes.Clone(e.Buf)
	if err := e.WriteProto(2, dynamicpb.NewMessage(reqMD)); err == nil {
		t.Fatal("WriteProto of a message missing a required field: got nil error")
	}
	if !bytes.Equal(e.Buf, before) {
		t.Errorf("Buf after a failed WriteProto: got %x, want %x", e.Buf, before)
	}
}

func TestProtoRoundTripAndAllocs(t *testing.T) {
	tests := []struct {
		name string
		msg  *wrapperspb.StringValue
	}{
		{name: "empty", msg: wrapperspb.String("")},
		{name: "short", msg: wrapperspb.String("hello")},
		{name: "long", msg: wrapperspb.String(string(bytes.Repeat([]byte("x"), 100000)))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := Encoder{Buf: make([]byte, 0, 200000)}
			allocs := testing.AllocsPerRun(20, func() {
				e.Reset(e.Buf)
				if err := e.WriteProto(20, tc.msg); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("WriteProto into a large enough buffer: got %v allocs, want 0", allocs)
			}
			var got wrapperspb.StringValue
			if err := NewDecoder(e.Buf).ReadProto(20, true, &got); err != nil {
				t.Fatalf("ReadProto: %v", err)
			}
			if got.GetValue() != tc.msg.GetValue() {
				t.Errorf("round trip: got %d bytes, want %d", len(got.GetValue()), len(tc.msg.GetValue()))
			}
		})
	}
}

func BenchmarkWriteProto(b *testing.B) {
	msg := wrapperspb.String("hello, tars")
	e := Encoder{Buf: make([]byte, 0, 256)}
	b.ReportAllocs()
	for b.Loop() {
		e.Reset(e.Buf)
		if err := e.WriteProto(7, msg); err != nil {
			b.Fatal(err)
		}
	}
}

func TestAppendRequestProtoVector(t *testing.T) {
	md, reqMD := echoDescriptors(t)
	p := RequestPacket{Version: VersionTars, RequestID: 1, ServantName: echoServant, FuncName: "Echo", Timeout: 3000,
		Buffer: []byte("ignored")}
	got, err := AppendRequestProto([]byte("x"), &p, newEchoReq(md, "hello", 7))
	if err != nil {
		t.Fatalf("AppendRequestProto: %v", err)
	}
	want := unhex(t, vecReq1)
	var gotPkt, wantPkt RequestPacket
	if err := DecodeRequest(got[1:], &gotPkt); err != nil {
		t.Fatalf("DecodeRequest: %v", err)
	}
	if err := DecodeRequest(want, &wantPkt); err != nil {
		t.Fatal(err)
	}
	// The dynamic message may order its two fields differently from the
	// generated code that made the vector: compare the bodies as messages.
	gotBody, wantBody := dynamicpb.NewMessage(md), dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(gotPkt.Buffer, gotBody); err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(wantPkt.Buffer, wantBody); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(gotBody, wantBody) {
		t.Errorf("body: got %v, want %v", gotBody, wantBody)
	}
	gotPkt.Buffer, wantPkt.Buffer = nil, nil
	if len(got) != 1+len(want) || !reflect.DeepEqual(gotPkt, wantPkt) {
		t.Errorf("got %x (%+v), want x%x (%+v)", got, gotPkt, want, wantPkt)
	}

	// On error the buffer is as it was.
	b, err := AppendRequestProto([]byte("x"), &p, dynamicpb.NewMessage(reqMD))
	if err == nil || string(b) != "x" {
		t.Errorf("with an unmarshallable body: got %q, %v; want \"x\" and an error", b, err)
	}
}

func TestAppendRequestProtoAllocs(t *testing.T) {
	p := RequestPacket{Version: VersionTars, RequestID: 1, ServantName: echoServant, FuncName: "Echo", Timeout: 3000}
	body := wrapperspb.String("hello")
	buf := make([]byte, 0, 512)
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if buf, err = AppendRequestProto(buf[:0], &p, body); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("got %v allocs, want 0", allocs)
	}
	var got RequestPacket
	if err := DecodeRequest(buf, &got); err != nil {
		t.Fatal(err)
	}
	var msg wrapperspb.StringValue
	if err := proto.Unmarshal(got.Buffer, &msg); err != nil || msg.GetValue() != "hello" {
		t.Errorf("body: got %q, %v; want hello", msg.GetValue(), err)
	}
}

func BenchmarkAppendRequestProto(b *testing.B) {
	p := RequestPacket{Version: VersionTars, RequestID: 1, ServantName: echoServant, FuncName: "Echo", Timeout: 3000}
	body := wrapperspb.String("hello, tars")
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendRequestProto(buf[:0], &p, body); err != nil {
			b.Fatal(err)
		}
	}
}
