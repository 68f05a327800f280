package interop_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	tgcodec "github.com/TarsCloud/TarsGo/tars/protocol/codec"

	"github.com/tarscomm/tarscomm/codec"
)

// TestCodecDiffRandomMessages writes random messages of every TARS type (nested structs,
// lists and maps of them, tags of 15 and more, integers at every width boundary, strings around
// the 1-byte length limit) with TarsGo's Buffer and with tarscomm's Encoder, which must agree
// byte for byte, and reads them back with random read plans (fields read as a wider type, fields
// left unread and skipped, absent optional fields) through both decoders, which must agree on
// every value and on success.
func TestCodecDiffRandomMessages(t *testing.T) {
	r := rand.New(rand.NewPCG(2024, 7))
	for i := range 3000 {
		fs := cdRandFields(r, 0)
		var e codec.Encoder
		cdWriteOurs(&e, fs)
		b := tgcodec.NewBuffer()
		cdWriteTheirs(b, fs)
		if !bytes.Equal(e.Buf, b.ToBytes()) {
			t.Fatalf("message %d %+v:\ntarscomm % x\nTarsGo   % x", i, fs, e.Buf, b.ToBytes())
		}
		for range 4 {
			plan := cdPlanFor(r, fs)
			ours := cdReadOurs(e.Buf, plan)
			theirs := cdReadTheirs(e.Buf, plan)
			if ours.String() != theirs.String() {
				t.Fatalf("message %d, plan %+v\nbytes % x\ntarscomm:\n%s\nTarsGo:\n%s", i, plan, e.Buf, ours.Detail(), theirs.Detail())
			}
		}
	}
}

// FuzzCodecDiff runs a read plan made from the input's first bytes over the rest with
// both decoders. Whatever tarscomm accepts, TarsGo must accept with the same values: TarsGo
// checks less than tarscomm (it reads past the end of short input without an error), so the
// converse does not hold, but tarscomm accepting what TarsGo refuses, or reading other values,
// is a disagreement.
func FuzzCodecDiff(f *testing.F) {
	seed := func(plan []byte, fs []cdField) {
		var e codec.Encoder
		cdWriteOurs(&e, fs)
		f.Add(append(append([]byte{byte(len(plan) / 2)}, plan...), e.Buf...))
	}
	seed([]byte{byte(cdInt32), 1, byte(cdString), 0x82}, []cdField{{Tag: 1, Kind: cdInt16, I: -300}, {Tag: 2, Kind: cdString, S: "x"}})
	seed([]byte{byte(cdInt64), 0x80 | 20}, []cdField{{Tag: 3, Kind: cdMapSS, MSS: [][2]string{{"a", "b"}}}, {Tag: 20, Kind: cdInt32, I: 1 << 20}})
	seed([]byte{byte(cdBytes), 0x80 | 5, byte(cdDouble), 6}, []cdField{{Tag: 5, Kind: cdBytes, B: []byte("hello")}, {Tag: 6, Kind: cdFloat, F: 1.5}})
	seed([]byte{byte(cdListInt32), 0x80 | 2, byte(cdInt8), 200}, []cdField{{Tag: 2, Kind: cdListInt32, LI: []int32{0, -1, 1 << 30}}, {Tag: 200, Kind: cdInt8, I: -5}})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		n := int(in[0]) % 8
		if len(in) < 1+2*n {
			return
		}
		var plan []cdRead
		for i := range n {
			k, tg := in[1+2*i], in[2+2*i]
			kind := cdKind(k % byte(cdStruct)) // no nested plans from raw bytes
			plan = append(plan, cdRead{Tag: tg & 0x7f, Kind: kind, Req: tg&0x80 != 0})
			if tg&0x7f > 60 {
				plan[len(plan)-1].Tag = 200 + tg&7
			}
		}
		data := in[1+2*n:]
		ours := cdReadOurs(data, plan)
		if ours.Err != nil {
			return
		}
		theirs := cdReadTheirs(data, plan)
		if ours.String() != theirs.String() {
			t.Fatalf("plan %+v\nbytes % x\ntarscomm:\n%s\nTarsGo:\n%s", plan, data, ours.Detail(), theirs.Detail())
		}
	})
}
