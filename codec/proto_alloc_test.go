package codec

import (
	"bytes"
	"errors"
	"reflect"
	"runtime"
	"strconv"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// A protobuf body (ReadProto here; servantproxy's reply and server.HandleProto's request call
// the same proto.Unmarshal) is decoded by protobuf-go, which sizes nothing from a count in
// the input: a length is checked against the bytes left before anything is read, a packed
// field's slice is sized from the varints really there, and a message is allocated when its
// bytes are read. So a length that claims more than the input holds costs nothing; what the
// input really holds costs its Go form, which for empty messages is far more than their
// wire form (an empty structpb.Value is 2 bytes on the wire, a 64-byte message and a pointer
// in Go). These tests and FuzzReadProto hold protobuf bodies to the bound of the generated
// .tars decoders: 8 bytes per input byte, plus the decoded message's Go form grown by append
// and map growth (protoAllocBound).

// protoAllocBound is what unmarshalling n bytes into messages weighing weight bytes
// (protoWeight) may allocate: 8 bytes per input byte, plus the messages themselves, grown to
// their size by append and map growth (up to 5 times the final size along the way, as for
// the generated .tars decoders), plus a constant for the allocator's minimum sizes and an
// error.
func protoAllocBound(n int, weight uint64) uint64 {
	return 8*uint64(n) + 5*weight + 4096
}

// protoWeight is what m's Go form weighs: its struct, its unknown fields, and for every field
// set, the elements of a list, the entries of a map (at the map's load and rounding), the
// bytes of a string, the wrapper a oneof member lives in, and so on down.
func protoWeight(m protoreflect.Message) uint64 {
	w := uint64(reflect.TypeOf(m.Interface()).Elem().Size()) + uint64(len(m.GetUnknown()))
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			w += uint64(l.Len()) * protoElemSize(fd)
			for i := range l.Len() {
				w += protoValueWeight(fd, l.Get(i))
			}
		case fd.IsMap():
			mp := v.Map()
			w += uint64(mp.Len()) * uint64(mapEntryCost(int(protoElemSize(fd.MapKey())), int(protoElemSize(fd.MapValue()))))
			mp.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
				w += protoValueWeight(fd.MapKey(), k.Value()) + protoValueWeight(fd.MapValue(), v)
				return true
			})
		default:
			if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
				w += 16 // the wrapper struct holding the member
			}
			w += protoValueWeight(fd, v)
		}
		return true
	})
	return w
}

// protoValueWeight is what one value of field fd weighs outside the slot holding it.
func protoValueWeight(fd protoreflect.FieldDescriptor, v protoreflect.Value) uint64 {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return protoWeight(v.Message())
	case protoreflect.StringKind:
		return uint64(len(v.String()))
	case protoreflect.BytesKind:
		return uint64(len(v.Bytes()))
	}
	return 0
}

// protoElemSize is the Go size of one value of fd's kind in a slice or map slot.
func protoElemSize(fd protoreflect.FieldDescriptor) uint64 {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return 1
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind,
		protoreflect.Sfixed64Kind, protoreflect.DoubleKind, protoreflect.MessageKind, protoreflect.GroupKind:
		return 8
	case protoreflect.StringKind:
		return 16
	case protoreflect.BytesKind:
		return 24
	}
	return 4 // 32-bit integers, floats, enums
}

// protoAlloc unmarshals input into a fresh message from newMsg, and returns the bytes
// allocated per run (the mean of a few runs after a first one), the message of the last run
// and Unmarshal's error.
func protoAlloc(input []byte, newMsg func() proto.Message) (alloc float64, m proto.Message, err error) {
	m = newMsg()
	err = proto.Unmarshal(input, m)
	const runs = 2
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		m = newMsg()
		err = proto.Unmarshal(input, m)
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / runs, m, err
}

// pb builds protobuf wire bytes.
type pb []byte

// field appends a length-delimited field's tag and its length n (which the bytes that follow
// may not hold).
func (b pb) field(num protowire.Number, n int) pb {
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.BytesType), uint64(n))
}

// fill pads b to total bytes with c.
func (b pb) fill(total int, c byte) pb {
	for len(b) < total {
		b = append(b, c)
	}
	return b
}

// repeat appends the field of empty bytes num until b is total bytes long (or a byte short).
func (b pb) repeat(total int, num protowire.Number) pb {
	for len(b)+2 <= total {
		b = b.field(num, 0)
	}
	return b
}

// nest wraps inner in depth levels of ListValue{values: [Value{list_value: ...}]}.
func nest(inner pb, depth int) pb {
	for range depth {
		v := protowire.AppendBytes(protowire.AppendTag(nil, 6, protowire.BytesType), inner) // Value.list_value
		inner = protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), v)  // ListValue.values
	}
	return inner
}

func newListValue() proto.Message { return new(structpb.ListValue) }
func newStruct() proto.Message    { return new(structpb.Struct) }
func newLocation() proto.Message  { return new(descriptorpb.SourceCodeInfo_Location) }

// TestProtoHostileAllocation unmarshals 128 KiB bodies whose lengths claim more than the input
// holds, at the top or under a prefix of real elements: each fails, and allocates within
// protoAllocBound of what it decoded before failing; those that fail at once allocate nothing
// to speak of.
func TestProtoHostileAllocation(t *testing.T) {
	const size = 128 << 10
	cases := []struct {
		name   string
		input  pb
		newMsg func() proto.Message
		atOnce bool // fails before decoding anything
	}{
		{"packed int32 claiming 1 GiB", pb(nil).field(1, 1<<30).fill(size, 1), newLocation, true},
		{"string claiming 1 GiB", pb(nil).field(3, 1<<30).fill(size, 'a'), newLocation, true},
		{"map entry claiming more than left", pb(nil).field(1, size).fill(size, 0), newStruct, true},
		{"list of Values, each claiming all left, 200 deep", func() pb {
			var b pb
			for range 200 {
				b = b.field(1, size-len(b)-8).field(6, size-len(b)-12)
			}
			return b.fill(size, 0xff)
		}(), newListValue, false},
		{"empty Values, then one claiming 1 GiB", pb(nil).repeat(size-8, 1).field(1, 1<<30).fill(size, 0), newListValue, false},
		{"packed int32 of 1-byte varints, the last one cut", pb(nil).field(1, size-4).fill(size-1, 1).fill(size, 0x80), newLocation, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			alloc, m, err := protoAlloc(c.input, c.newMsg)
			if err == nil {
				t.Fatal("unmarshal succeeded, want an error for an input missing its elements")
			}
			// The message after a failed Unmarshal is what protobuf-go had decoded.
			weight := protoWeight(m.ProtoReflect())
			bound := float64(protoAllocBound(len(c.input), weight))
			if c.atOnce {
				bound = 4096
			}
			if alloc > bound {
				t.Errorf("%.0f bytes allocated for %d input bytes (%.2f per byte), want at most %.0f", alloc, len(c.input), alloc/float64(len(c.input)), bound)
			}
			t.Logf("%.2f bytes allocated per input byte; %d bytes decoded before the error", alloc/float64(len(c.input)), weight)
		})
	}
}

// TestProtoHeavyValidAllocation unmarshals valid 128 KiB bodies whose Go form outweighs their
// wire form the most: empty messages in a list or map, and messages nested to protobuf-go's
// recursion limit. They are held to protoAllocBound; what they weigh per input byte is the
// figure the codec's doc gives.
func TestProtoHeavyValidAllocation(t *testing.T) {
	const size = 128 << 10
	cases := []struct {
		name   string
		input  pb
		newMsg func() proto.Message
	}{
		{"ListValue of empty Values", pb(nil).repeat(size, 1), newListValue},
		{"Struct of empty entries", func() pb {
			var b pb
			for i := 0; len(b) < size-12; i++ {
				entry := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), strconv.FormatInt(int64(i), 36))
				b = protowire.AppendBytes(protowire.AppendTag(b, 1, protowire.BytesType), entry)
			}
			return b
		}(), newStruct},
		{"ListValue nested 4,999 deep", nest(nil, 4999), newListValue},
		{"packed int32 of 1-byte varints", pb(nil).field(1, size-4).fill(size, 1), newLocation},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			alloc, m, err := protoAlloc(c.input, c.newMsg)
			if err != nil {
				t.Fatal(err)
			}
			weight := protoWeight(m.ProtoReflect())
			if bound := float64(protoAllocBound(len(c.input), weight)); alloc > bound {
				t.Errorf("%.0f bytes allocated for %d input bytes (%.2f per byte), want at most %.0f", alloc, len(c.input), alloc/float64(len(c.input)), bound)
			}
			t.Logf("%d input bytes, Go form %d bytes: %.2f bytes allocated per input byte", len(c.input), weight, alloc/float64(len(c.input)))
		})
	}
	// One level more is past protobuf-go's recursion limit (10,000 messages).
	if err := proto.Unmarshal(nest(nil, 5000), new(structpb.ListValue)); err == nil {
		t.Error("a ListValue nested 5,000 deep (10,000 messages) unmarshalled, want protobuf-go's recursion limit")
	}
}

// FuzzReadProto reads arbitrary bytes, framed as the simple list of a request's body, with
// ReadProto into a structpb.Value (messages nested through lists and maps, a oneof) and a
// descriptorpb.SourceCodeInfo (repeated messages with packed and repeated scalars): it must not
// panic, must allocate within protoAllocBound, and what it reads must marshal into bytes that
// read back to the same message.
func FuzzReadProto(f *testing.F) {
	v, _ := structpb.NewValue(map[string]any{"a": []any{1.5, "x", true, nil, map[string]any{}}})
	b, _ := proto.Marshal(v)
	f.Add(b)
	sci := &descriptorpb.SourceCodeInfo{Location: []*descriptorpb.SourceCodeInfo_Location{
		{Path: []int32{4, 0, 2, 1}, Span: []int32{3, 2, 40}, LeadingComments: proto.String("c")},
	}}
	b, _ = proto.Marshal(sci)
	f.Add(b)
	f.Add([]byte(nest(nil, 20)))
	f.Add([]byte(pb(nil).field(1, 1<<30).fill(64, 1)))
	f.Fuzz(func(t *testing.T, body []byte) {
		var e Encoder
		e.WriteBytes(7, body)
		for _, newMsg := range []func() proto.Message{
			func() proto.Message { return new(structpb.Value) },
			func() proto.Message { return new(descriptorpb.SourceCodeInfo) },
		} {
			var m proto.Message
			var err error
			checkAllocBound(t, e.Buf, func() uint64 {
				m = newMsg()
				err = NewDecoder(e.Buf).ReadProto(7, true, m)
				w := protoWeight(m.ProtoReflect())
				return protoAllocBound(0, w) - 1024 // checkAllocBound adds 8 per byte and 1024
			})
			if err != nil {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("ReadProto: %v, want an error wrapping ErrMalformed", err)
				}
				continue
			}
			out, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
			if err != nil {
				t.Fatalf("marshalling what was read: %v", err)
			}
			again := newMsg()
			if err := proto.Unmarshal(out, again); err != nil {
				t.Fatalf("reading back %x (marshalled from %x): %v", out, body, err)
			}
			if out2, _ := (proto.MarshalOptions{Deterministic: true}).Marshal(again); !bytes.Equal(out2, out) {
				t.Fatalf("read back %x, marshalled %x", out2, out)
			}
		}
	})
}
