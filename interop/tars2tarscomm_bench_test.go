package interop_test

import (
	"bytes"
	"strings"
	"testing"

	tgcodec "github.com/TarsCloud/TarsGo/tars/protocol/codec"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/benchcpu"
	"github.com/tarscomm/tarscomm/interop/internal/benchtars/bench"
	"github.com/tarscomm/tarscomm/interop/internal/tarsgobench"
)

// benchRecord is the benchmark's value: every field set, one map entry (so that both encode
// byte-identically), eight vector elements, short and long strings.
func benchRecord() bench.Record {
	return bench.Record{
		Id: 1 << 40, Count: 123456, Kind: -7, Active: true, Score: 3.25,
		Name: "Hello.World.GreeterObj", Desc: strings.Repeat("d", 64),
		Values: []int32{1, 200, 30000, 4000000, -1, -200, 0, 7},
		Attrs:  map[string]string{"trace-id": "0123456789abcdef"},
		Inner:  bench.Inner{Id: 42, Name: "inner"},
	}
}

func tarsgoRecord() tarsgobench.Record {
	r := benchRecord()
	return tarsgobench.Record{Id: r.Id, Count: r.Count, Kind: r.Kind, Active: r.Active, Score: r.Score,
		Name: r.Name, Desc: r.Desc, Values: r.Values, Attrs: r.Attrs,
		Inner: tarsgobench.Inner{Id: r.Inner.Id, Name: r.Inner.Name}}
}

// TestBenchRecordSameBytes: the two sides of the benchmark encode the same value to the same
// bytes and decode each other's, so the benchmark compares equal work.
func TestBenchRecordSameBytes(t *testing.T) {
	r := benchRecord()
	mine := r.MarshalTars(nil)
	tg := tarsgoRecord()
	buf := tgcodec.NewBuffer()
	if err := tg.WriteTo(buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mine, buf.ToBytes()) {
		t.Fatalf("tarscomm % x\nTarsGo   % x", mine, buf.ToBytes())
	}
	var back tarsgobench.Record
	if err := back.ReadFrom(tgcodec.NewReader(mine)); err != nil || back.Inner != tg.Inner || back.Name != tg.Name {
		t.Fatalf("TarsGo decoded %+v, %v", back, err)
	}
	var mback bench.Record
	if err := mback.UnmarshalTars(buf.ToBytes()); err != nil || mback.Inner != r.Inner || len(mback.Values) != 8 {
		t.Fatalf("tarscomm decoded %+v, %v", mback, err)
	}
}

// BenchmarkRecordEncode encodes the ten-field struct: tarscomm's generated Encode into a
// reused buffer, TarsGo's WriteTo into a reset Buffer (its generated code's way).
func BenchmarkRecordEncode(b *testing.B) {
	b.Run("tarscomm", func(b *testing.B) {
		r := benchRecord()
		var e codec.Encoder
		b.ReportAllocs()
		for b.Loop() {
			e.Reset(e.Buf)
			r.Encode(&e)
		}
		b.SetBytes(int64(len(e.Buf)))
	})
	b.Run("tarsgo", func(b *testing.B) {
		r := tarsgoRecord()
		buf := tgcodec.NewBuffer()
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			if err := r.WriteTo(buf); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(buf.ToBytes())))
	})
}

// BenchmarkRecordDecode decodes it again and again into the same value: tarscomm's Decode reuses
// the value's memory (only the map's key and value strings are copied anew), TarsGo's
// ReadFrom allocates every string, the vector and the map each time. tarscomm-fresh decodes
// into a new value each time: the map (two allocations, its header and its group) and room for
// the strings and the vector in the Decoder's arena (a chunk shared by them and, the Decoder
// being reused, by the next few decodes: a quarter of an allocation a decode). Each also reports
// cpu-ns/op (internal/benchcpu), steadier than ns/op on a shared machine.
//
// alloc-floor decodes nothing: it only gets from the runtime what any decode into a fresh value
// must, whatever the decoder: the map (its header and group, one entry put in it) and one block
// for the bytes of the strings and the vector. No decoder into a fresh value costs less than it,
// so tarsgo ÷ alloc-floor bounds how far tarscomm-fresh can get ahead of TarsGo.
func BenchmarkRecordDecode(b *testing.B) {
	src := benchRecord()
	data := src.MarshalTars(nil)
	b.Run("tarscomm-fresh", func(b *testing.B) {
		var d codec.Decoder
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		cpu0 := benchcpu.Used(b)
		for b.Loop() {
			var r bench.Record
			d.Reset(data)
			if err := r.Decode(&d); err != nil {
				b.Fatal(err)
			}
		}
		benchcpu.Report(b, cpu0)
	})
	b.Run("tarscomm", func(b *testing.B) {
		var r bench.Record
		var d codec.Decoder
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		cpu0 := benchcpu.Used(b)
		for b.Loop() {
			d.Reset(data)
			if err := r.Decode(&d); err != nil {
				b.Fatal(err)
			}
		}
		benchcpu.Report(b, cpu0)
	})
	b.Run("tarsgo", func(b *testing.B) {
		var r tarsgobench.Record
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		cpu0 := benchcpu.Used(b)
		for b.Loop() {
			if err := r.ReadFrom(tgcodec.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
		benchcpu.Report(b, cpu0)
	})
	b.Run("alloc-floor", func(b *testing.B) {
		n := len(src.Name) + len(src.Desc) + 4*len(src.Values) + len(src.Inner.Name)
		for k, v := range src.Attrs {
			n += len(k) + len(v)
		}
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		cpu0 := benchcpu.Used(b)
		for b.Loop() {
			m := make(map[string]string, 1)
			m["trace-id"] = "0123456789abcdef"
			floorSink.attrs, floorSink.bytes = m, make([]byte, n)
		}
		benchcpu.Report(b, cpu0)
	})
}

// floorSink keeps what alloc-floor allocates on the heap, as a decoded value's fields are.
var floorSink struct {
	attrs map[string]string
	bytes []byte
}
