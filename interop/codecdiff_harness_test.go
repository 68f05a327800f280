package interop_test

// A differential harness for the TARS codec: the same read plan run over the same bytes with
// tarscomm's codec.Decoder (the way tars2tarscomm's generated code reads) and with TarsGo's
// codec.Reader (the way tars2go's generated code reads), and the same values written with
// codec.Encoder and TarsGo's codec.Buffer.

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	tgcodec "github.com/TarsCloud/TarsGo/tars/protocol/codec"

	"github.com/tarscomm/tarscomm/codec"
)

// cdKind is a TARS field type as an IDL declares it.
type cdKind byte

const (
	cdBool cdKind = iota
	cdInt8
	cdInt16
	cdInt32
	cdInt64
	cdUint8  // written as an int16
	cdUint16 // written as an int32
	cdUint32 // written as an int64
	cdFloat
	cdDouble
	cdString
	cdBytes     // vector<byte>: a simple list
	cdListInt32 // vector<int>
	cdListStr   // vector<string>
	cdMapSS     // map<string,string>
	cdStruct    // a nested struct
	cdListSt    // vector<struct>
	cdMapISt    // map<int,struct>
	cdKinds
)

var cdKindNames = [...]string{"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
	"float", "double", "string", "bytes", "list<int32>", "list<string>", "map<string,string>",
	"struct", "list<struct>", "map<int32,struct>"}

func (k cdKind) String() string {
	if int(k) < len(cdKindNames) {
		return cdKindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// cdField is one field of a message: its tag, type and value.
type cdField struct {
	Tag  byte
	Kind cdKind
	I    int64       // integers and bool
	F    float64     // float, double
	S    string      // string
	B    []byte      // bytes
	LI   []int32     // list<int32>
	LS   []string    // list<string>
	MSS  [][2]string // map<string,string>, in writing order (unique keys)
	St   []cdField   // struct
	LSt  [][]cdField
	MISt []cdEntry // map<int32,struct>, unique keys
}

type cdEntry struct {
	K int32
	V []cdField
}

// ---- random messages ----

func cdRandInt(r *rand.Rand, bits int) int64 {
	edges := []int64{0, 1, -1, 127, -128, 128, -129, 255, 256, 32767, -32768, 32768, -32769,
		65535, 65536, math.MaxInt32, math.MinInt32, math.MaxInt32 + 1, math.MinInt32 - 1,
		math.MaxUint32, math.MaxInt64, math.MinInt64}
	var v int64
	switch r.IntN(3) {
	case 0:
		v = edges[r.IntN(len(edges))]
	case 1:
		v = int64(r.IntN(512)) - 256
	default:
		v = int64(r.Uint64())
	}
	// Wrap into the type's range.
	shift := 64 - bits
	return v << shift >> shift
}

func cdRandUint(r *rand.Rand, bits int) int64 {
	v := cdRandInt(r, 64)
	return int64(uint64(v) << (64 - bits) >> (64 - bits))
}

func cdRandString(r *rand.Rand) string {
	n := r.IntN(8)
	switch r.IntN(8) {
	case 0:
		n = 0
	case 1:
		n = 250 + r.IntN(10) // around the 1-byte length limit
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return string(b)
}

// cdRandFields makes a struct body of up to max fields with ascending tags, some of 15 and more.
func cdRandFields(r *rand.Rand, depth int) []cdField {
	n := r.IntN(7)
	var fs []cdField
	tag := -1
	for range n {
		step := 1 + r.IntN(3)
		if r.IntN(6) == 0 {
			step += 10 + r.IntN(60)
		}
		tag += step
		if tag > 255 {
			break
		}
		fs = append(fs, cdRandField(r, byte(tag), depth))
	}
	return fs
}

func cdRandField(r *rand.Rand, tag byte, depth int) cdField {
	k := cdKind(r.IntN(int(cdKinds)))
	if depth >= 3 && k >= cdStruct {
		k = cdInt32
	}
	f := cdField{Tag: tag, Kind: k}
	switch k {
	case cdBool:
		f.I = int64(r.IntN(2))
	case cdInt8:
		f.I = cdRandInt(r, 8)
	case cdInt16:
		f.I = cdRandInt(r, 16)
	case cdInt32:
		f.I = cdRandInt(r, 32)
	case cdInt64:
		f.I = cdRandInt(r, 64)
	case cdUint8:
		f.I = cdRandUint(r, 8)
	case cdUint16:
		f.I = cdRandUint(r, 16)
	case cdUint32:
		f.I = cdRandUint(r, 32)
	case cdFloat:
		f.F = float64(float32(r.NormFloat64() * 1e3))
		if r.IntN(4) == 0 {
			f.F = 0
		}
	case cdDouble:
		f.F = r.NormFloat64() * 1e9
		if r.IntN(4) == 0 {
			f.F = 0
		}
	case cdString:
		f.S = cdRandString(r)
	case cdBytes:
		f.B = []byte(cdRandString(r))
	case cdListInt32:
		for range r.IntN(5) {
			f.LI = append(f.LI, int32(cdRandInt(r, 32)))
		}
	case cdListStr:
		for range r.IntN(4) {
			f.LS = append(f.LS, cdRandString(r))
		}
	case cdMapSS:
		seen := map[string]bool{}
		for range r.IntN(4) {
			k := cdRandString(r)
			if seen[k] {
				continue
			}
			seen[k] = true
			f.MSS = append(f.MSS, [2]string{k, cdRandString(r)})
		}
	case cdStruct:
		f.St = cdRandFields(r, depth+1)
	case cdListSt:
		for range r.IntN(3) {
			f.LSt = append(f.LSt, cdRandFields(r, depth+1))
		}
	case cdMapISt:
		seen := map[int32]bool{}
		for range r.IntN(3) {
			k := int32(cdRandInt(r, 32))
			if seen[k] {
				continue
			}
			seen[k] = true
			f.MISt = append(f.MISt, cdEntry{k, cdRandFields(r, depth+1)})
		}
	}
	return f
}

// ---- writers ----

// cdWriteOurs writes fs with tarscomm's Encoder, as generated code does for required fields.
func cdWriteOurs(e *codec.Encoder, fs []cdField) {
	for _, f := range fs {
		cdWriteOursOne(e, f)
	}
}

func cdWriteOursOne(e *codec.Encoder, f cdField) {
	t := f.Tag
	switch f.Kind {
	case cdBool:
		e.WriteBool(t, f.I != 0)
	case cdInt8:
		e.WriteInt8(t, int8(f.I))
	case cdInt16:
		e.WriteInt16(t, int16(f.I))
	case cdInt32:
		e.WriteInt32(t, int32(f.I))
	case cdInt64:
		e.WriteInt64(t, f.I)
	case cdUint8:
		e.WriteUint8(t, uint8(f.I))
	case cdUint16:
		e.WriteUint16(t, uint16(f.I))
	case cdUint32:
		e.WriteUint32(t, uint32(f.I))
	case cdFloat:
		e.WriteFloat32(t, float32(f.F))
	case cdDouble:
		e.WriteFloat64(t, f.F)
	case cdString:
		e.WriteString(t, f.S)
	case cdBytes:
		e.WriteBytes(t, f.B)
	case cdListInt32:
		e.WriteListHead(t, len(f.LI))
		for _, v := range f.LI {
			e.WriteInt32(0, v)
		}
	case cdListStr:
		e.WriteListHead(t, len(f.LS))
		for _, v := range f.LS {
			e.WriteString(0, v)
		}
	case cdMapSS:
		e.WriteMapHead(t, len(f.MSS))
		for _, kv := range f.MSS {
			e.WriteString(0, kv[0])
			e.WriteString(1, kv[1])
		}
	case cdStruct:
		e.WriteStructBegin(t)
		cdWriteOurs(e, f.St)
		e.WriteStructEnd()
	case cdListSt:
		e.WriteListHead(t, len(f.LSt))
		for _, st := range f.LSt {
			e.WriteStructBegin(0)
			cdWriteOurs(e, st)
			e.WriteStructEnd()
		}
	case cdMapISt:
		e.WriteMapHead(t, len(f.MISt))
		for _, en := range f.MISt {
			e.WriteInt32(0, en.K)
			e.WriteStructBegin(1)
			cdWriteOurs(e, en.V)
			e.WriteStructEnd()
		}
	}
}

// cdWriteTheirs writes fs with TarsGo's Buffer, as tars2go's generated code does.
func cdWriteTheirs(b *tgcodec.Buffer, fs []cdField) {
	for _, f := range fs {
		cdWriteTheirsOne(b, f)
	}
}

func cdWriteTheirsOne(b *tgcodec.Buffer, f cdField) {
	t := f.Tag
	switch f.Kind {
	case cdBool:
		_ = b.WriteBool(f.I != 0, t)
	case cdInt8:
		_ = b.WriteInt8(int8(f.I), t)
	case cdInt16:
		_ = b.WriteInt16(int16(f.I), t)
	case cdInt32:
		_ = b.WriteInt32(int32(f.I), t)
	case cdInt64:
		_ = b.WriteInt64(f.I, t)
	case cdUint8:
		_ = b.WriteUint8(uint8(f.I), t)
	case cdUint16:
		_ = b.WriteUint16(uint16(f.I), t)
	case cdUint32:
		_ = b.WriteUint32(uint32(f.I), t)
	case cdFloat:
		_ = b.WriteFloat32(float32(f.F), t)
	case cdDouble:
		_ = b.WriteFloat64(f.F, t)
	case cdString:
		_ = b.WriteString(f.S, t)
	case cdBytes:
		_ = b.WriteHead(tgcodec.SimpleList, t)
		_ = b.WriteHead(tgcodec.BYTE, 0)
		_ = b.WriteInt32(int32(len(f.B)), 0)
		_ = b.WriteBytes(f.B)
	case cdListInt32:
		_ = b.WriteHead(tgcodec.LIST, t)
		_ = b.WriteInt32(int32(len(f.LI)), 0)
		for _, v := range f.LI {
			_ = b.WriteInt32(v, 0)
		}
	case cdListStr:
		_ = b.WriteHead(tgcodec.LIST, t)
		_ = b.WriteInt32(int32(len(f.LS)), 0)
		for _, v := range f.LS {
			_ = b.WriteString(v, 0)
		}
	case cdMapSS:
		_ = b.WriteHead(tgcodec.MAP, t)
		_ = b.WriteInt32(int32(len(f.MSS)), 0)
		for _, kv := range f.MSS {
			_ = b.WriteString(kv[0], 0)
			_ = b.WriteString(kv[1], 1)
		}
	case cdStruct:
		_ = b.WriteHead(tgcodec.StructBegin, t)
		cdWriteTheirs(b, f.St)
		_ = b.WriteHead(tgcodec.StructEnd, 0)
	case cdListSt:
		_ = b.WriteHead(tgcodec.LIST, t)
		_ = b.WriteInt32(int32(len(f.LSt)), 0)
		for _, st := range f.LSt {
			_ = b.WriteHead(tgcodec.StructBegin, 0)
			cdWriteTheirs(b, st)
			_ = b.WriteHead(tgcodec.StructEnd, 0)
		}
	case cdMapISt:
		_ = b.WriteHead(tgcodec.MAP, t)
		_ = b.WriteInt32(int32(len(f.MISt)), 0)
		for _, en := range f.MISt {
			_ = b.WriteInt32(en.K, 0)
			_ = b.WriteHead(tgcodec.StructBegin, 1)
			cdWriteTheirs(b, en.V)
			_ = b.WriteHead(tgcodec.StructEnd, 0)
		}
	}
}

// ---- read plans ----

// cdRead is one read of a plan: the field at Tag read as Kind (Sub is the plan of a struct's
// fields, or of each element's fields for list<struct> and map<int32,struct>).
type cdRead struct {
	Tag  byte
	Kind cdKind
	Req  bool
	Sub  []cdRead
}

// cdPlanFor returns a plan reading fs: each field read as its own type, or a wider one that
// TARS lets a reader accept, or left unread (a field this reader does not know); with reads of
// optional fields that are absent in between.
func cdPlanFor(r *rand.Rand, fs []cdField) []cdRead {
	var p []cdRead
	next := 0 // the smallest tag a phantom read may use
	present := map[int]bool{}
	for _, f := range fs {
		present[int(f.Tag)] = true
	}
	for _, f := range fs {
		if r.IntN(5) == 0 && int(f.Tag) > next {
			// An absent optional field, between the last read and this one.
			t := next + r.IntN(int(f.Tag)-next)
			if !present[t] {
				p = append(p, cdRead{Tag: byte(t), Kind: cdKind(r.IntN(int(cdKinds))), Req: false})
				if p[len(p)-1].Kind >= cdStruct {
					p[len(p)-1].Kind = cdString
				}
				next = t + 1
			}
		}
		if r.IntN(5) == 0 {
			continue // unknown to this reader: skipped
		}
		rd := cdRead{Tag: f.Tag, Kind: f.Kind, Req: r.IntN(2) == 0}
		switch f.Kind {
		case cdInt8:
			rd.Kind = []cdKind{cdInt8, cdInt16, cdInt32, cdInt64}[r.IntN(4)]
		case cdInt16, cdUint8:
			rd.Kind = []cdKind{cdInt16, cdInt32, cdInt64}[r.IntN(3)]
		case cdInt32, cdUint16:
			rd.Kind = []cdKind{cdInt32, cdInt64}[r.IntN(2)]
		case cdUint32:
			rd.Kind = cdInt64
		case cdFloat:
			rd.Kind = []cdKind{cdFloat, cdDouble}[r.IntN(2)]
		case cdStruct:
			rd.Sub = cdPlanFor(r, f.St)
		case cdListSt:
			var all []cdField
			for _, st := range f.LSt {
				all = cdMergeFields(all, st)
			}
			rd.Sub = cdPlanFor(r, all)
		case cdMapISt:
			var all []cdField
			for _, en := range f.MISt {
				all = cdMergeFields(all, en.V)
			}
			rd.Sub = cdPlanFor(r, all)
		}
		p = append(p, rd)
		next = int(f.Tag) + 1
	}
	if r.IntN(3) == 0 && next <= 255 {
		p = append(p, cdRead{Tag: byte(next + r.IntN(256-next)), Kind: cdInt32, Req: false})
	}
	return p
}

// cdMergeFields returns the fields of a and b by tag, a's first: a plan for list elements
// that may each hold different fields reads only tags whose kinds agree.
func cdMergeFields(a, b []cdField) []cdField {
	byTag := map[byte]cdField{}
	for _, f := range a {
		byTag[f.Tag] = f
	}
	var out []cdField
	out = append(out, a...)
	for _, f := range b {
		if g, ok := byTag[f.Tag]; ok {
			if g.Kind != f.Kind {
				// Two elements disagree on the kind at this tag: keep it out of the plan
				// by marking it a kind only the first has; the reads of the other may
				// then fail on both sides alike, which the comparison accepts.
				continue
			}
			continue
		}
		byTag[f.Tag] = f
		out = append(out, f)
	}
	// Keep tags ascending.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Tag < out[j-1].Tag; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// ---- readers ----

// errCDLax marks a read on which TarsGo's Reader went past the end of its input without an
// error (it does not check lengths): its result says nothing about what the input holds.
var errCDLax = errors.New("TarsGo read past the end of its input")

// cdTrace is what a plan read: one line per value, and the error that stopped it.
type cdTrace struct {
	Lines []string
	Err   error
}

func (t cdTrace) String() string {
	s := strings.Join(t.Lines, "\n")
	if t.Err != nil {
		s += "\nerror"
	}
	return s
}

// Detail is String with the error's text.
func (t cdTrace) Detail() string {
	if t.Err != nil {
		return t.String() + ": " + t.Err.Error()
	}
	return t.String()
}

// cdReadOurs runs plan p over data with tarscomm's Decoder, as generated code reads.
func cdReadOurs(data []byte, p []cdRead) cdTrace {
	var tr cdTrace
	d := codec.NewDecoder(data)
	tr.Err = cdReadOursPlan(d, p, "", &tr)
	return tr
}

func cdReadOursPlan(d *codec.Decoder, p []cdRead, path string, tr *cdTrace) error {
	for _, rd := range p {
		if err := cdReadOursOne(d, rd, fmt.Sprintf("%s%d", path, rd.Tag), tr); err != nil {
			return err
		}
	}
	return nil
}

func cdReadOursStruct(d *codec.Decoder, tag byte, req bool, sub []cdRead, path string, tr *cdTrace) error {
	found, err := d.ReadStructBegin(tag, req)
	if err != nil {
		return err
	}
	if !found {
		tr.Lines = append(tr.Lines, path+": absent struct")
		return nil
	}
	if err := cdReadOursPlan(d, sub, path+".", tr); err != nil {
		return err
	}
	return d.ReadStructEnd()
}

func cdReadOursOne(d *codec.Decoder, rd cdRead, path string, tr *cdTrace) error {
	add := func(v any) { tr.Lines = append(tr.Lines, fmt.Sprintf("%s: %v", path, v)) }
	t, req := rd.Tag, rd.Req
	switch rd.Kind {
	case cdBool:
		v, err := d.ReadBool(t, req)
		if err != nil {
			return err
		}
		add(v)
	case cdInt8:
		v, err := d.ReadInt8(t, req)
		if err != nil {
			return err
		}
		add(int64(v))
	case cdInt16:
		v, err := d.ReadInt16(t, req)
		if err != nil {
			return err
		}
		add(int64(v))
	case cdInt32:
		v, err := d.ReadInt32(t, req)
		if err != nil {
			return err
		}
		add(int64(v))
	case cdInt64:
		v, err := d.ReadInt64(t, req)
		if err != nil {
			return err
		}
		add(v)
	case cdUint8:
		v, err := d.ReadInt16(t, req)
		if err != nil {
			return err
		}
		add(int64(uint8(v)))
	case cdUint16:
		v, err := d.ReadInt32(t, req)
		if err != nil {
			return err
		}
		add(int64(uint16(v)))
	case cdUint32:
		v, err := d.ReadInt64(t, req)
		if err != nil {
			return err
		}
		add(int64(uint32(v)))
	case cdFloat:
		v, err := d.ReadFloat32(t, req)
		if err != nil {
			return err
		}
		add(math.Float64bits(float64(v)))
	case cdDouble:
		v, err := d.ReadFloat64(t, req)
		if err != nil {
			return err
		}
		add(math.Float64bits(v))
	case cdString:
		v, err := d.ReadStringKeep(t, req, "")
		if err != nil {
			return err
		}
		add(fmt.Sprintf("%q", v))
	case cdBytes:
		v, err := d.ReadBytes(t, req)
		if err != nil {
			return err
		}
		add(fmt.Sprintf("%x", v))
	case cdListInt32:
		n, ok, err := d.ReadListHead(t, req)
		if err != nil {
			return err
		}
		var vs []int32
		for range n {
			v, err := d.ReadInt32(0, true)
			if err != nil {
				return err
			}
			vs = append(vs, v)
		}
		_ = ok
		add(fmt.Sprint(vs))
	case cdListStr:
		n, _, err := d.ReadListHead(t, req)
		if err != nil {
			return err
		}
		var vs []string
		for range n {
			v, err := d.ReadStringKeep(0, true, "")
			if err != nil {
				return err
			}
			vs = append(vs, fmt.Sprintf("%q", v))
		}
		add(fmt.Sprint(vs))
	case cdMapSS:
		n, _, err := d.ReadMapHead(t, req)
		if err != nil {
			return err
		}
		var vs []string
		for range n {
			k, err := d.ReadStringKeep(0, true, "")
			if err != nil {
				return err
			}
			v, err := d.ReadStringKeep(1, true, "")
			if err != nil {
				return err
			}
			vs = append(vs, fmt.Sprintf("%q=%q", k, v))
		}
		add(fmt.Sprint(vs))
	case cdStruct:
		return cdReadOursStruct(d, t, req, rd.Sub, path, tr)
	case cdListSt:
		n, _, err := d.ReadListHead(t, req)
		if err != nil {
			return err
		}
		add(fmt.Sprintf("list of %d", n))
		for i := range n {
			if err := cdReadOursStruct(d, 0, true, rd.Sub, fmt.Sprintf("%s[%d]", path, i), tr); err != nil {
				return err
			}
		}
	case cdMapISt:
		n, _, err := d.ReadMapHead(t, req)
		if err != nil {
			return err
		}
		add(fmt.Sprintf("map of %d", n))
		for i := range n {
			k, err := d.ReadInt32(0, true)
			if err != nil {
				return err
			}
			add(fmt.Sprintf("key %d", k))
			if err := cdReadOursStruct(d, 1, true, rd.Sub, fmt.Sprintf("%s[%d]", path, i), tr); err != nil {
				return err
			}
		}
	}
	return nil
}

// cdReadTheirs runs plan p over data with TarsGo's Reader, as tars2go's generated code reads.
func cdReadTheirs(data []byte, p []cdRead) (tr cdTrace) {
	r := tgcodec.NewReader(data)
	defer func() {
		if v := recover(); v != nil {
			tr.Err = fmt.Errorf("TarsGo panicked: %v", v)
		}
	}()
	tr.Err = cdReadTheirsPlan(r, len(data), p, "", &tr)
	return tr
}

func cdReadTheirsPlan(r *tgcodec.Reader, total int, p []cdRead, path string, tr *cdTrace) error {
	for _, rd := range p {
		if err := cdReadTheirsOne(r, total, rd, fmt.Sprintf("%s%d", path, rd.Tag), tr); err != nil {
			return err
		}
	}
	return nil
}

func cdReadTheirsStruct(r *tgcodec.Reader, total int, tag byte, req bool, sub []cdRead, path string, tr *cdTrace) error {
	have, err := r.SkipTo(tgcodec.StructBegin, tag, req)
	if err != nil {
		return err
	}
	if !have {
		tr.Lines = append(tr.Lines, path+": absent struct")
		return nil
	}
	if err := cdReadTheirsPlan(r, total, sub, path+".", tr); err != nil {
		return err
	}
	return r.SkipToStructEnd()
}

func cdReadTheirsOne(r *tgcodec.Reader, total int, rd cdRead, path string, tr *cdTrace) error {
	add := func(v any) { tr.Lines = append(tr.Lines, fmt.Sprintf("%s: %v", path, v)) }
	t, req := rd.Tag, rd.Req
	switch rd.Kind {
	case cdBool:
		var v bool
		if err := r.ReadBool(&v, t, req); err != nil {
			return err
		}
		add(v)
	case cdInt8:
		var v int8
		if err := r.ReadInt8(&v, t, req); err != nil {
			return err
		}
		add(int64(v))
	case cdInt16:
		var v int16
		if err := r.ReadInt16(&v, t, req); err != nil {
			return err
		}
		add(int64(v))
	case cdInt32:
		var v int32
		if err := r.ReadInt32(&v, t, req); err != nil {
			return err
		}
		add(int64(v))
	case cdInt64:
		var v int64
		if err := r.ReadInt64(&v, t, req); err != nil {
			return err
		}
		add(v)
	case cdUint8:
		var v uint8
		if err := r.ReadUint8(&v, t, req); err != nil {
			return err
		}
		add(int64(v))
	case cdUint16:
		var v uint16
		if err := r.ReadUint16(&v, t, req); err != nil {
			return err
		}
		add(int64(v))
	case cdUint32:
		var v uint32
		if err := r.ReadUint32(&v, t, req); err != nil {
			return err
		}
		add(int64(v))
	case cdFloat:
		var v float32
		if err := r.ReadFloat32(&v, t, req); err != nil {
			return err
		}
		add(math.Float64bits(float64(v)))
	case cdDouble:
		var v float64
		if err := r.ReadFloat64(&v, t, req); err != nil {
			return err
		}
		add(math.Float64bits(v))
	case cdString:
		var v string
		if err := r.ReadString(&v, t, req); err != nil {
			return err
		}
		add(fmt.Sprintf("%q", v))
	case cdBytes:
		have, ty, err := r.SkipToNoCheck(t, req)
		if err != nil {
			return err
		}
		var v []int8
		if have {
			var length int32
			switch ty {
			case tgcodec.LIST:
				if err := r.ReadInt32(&length, 0, true); err != nil {
					return err
				}
				if int(length) > total {
					return errCDLax // tars2go makes the slice first: refuse to allocate it
				}
				v = make([]int8, max(length, 0))
				for i := range v {
					if err := r.ReadInt8(&v[i], 0, true); err != nil {
						return err
					}
				}
			case tgcodec.SimpleList:
				if _, err := r.SkipTo(tgcodec.BYTE, 0, true); err != nil {
					return err
				}
				if err := r.ReadInt32(&length, 0, true); err != nil {
					return err
				}
				if int(length) > total {
					return errCDLax
				}
				if err := r.ReadSliceInt8(&v, length, true); err != nil {
					return err
				}
			default:
				return fmt.Errorf("require vector, but not")
			}
		}
		if len(v) == 0 {
			v = nil
		}
		add(fmt.Sprintf("%x", tgcodec.FromInt8(v)))
	case cdListInt32, cdListStr, cdListSt:
		have, ty, err := r.SkipToNoCheck(t, req)
		if err != nil {
			return err
		}
		if !have {
			switch rd.Kind {
			case cdListInt32:
				add(fmt.Sprint([]int32(nil)))
			case cdListStr:
				add(fmt.Sprint([]string(nil)))
			default:
				add("list of 0")
			}
			return nil
		}
		if ty != tgcodec.LIST {
			return fmt.Errorf("require vector, but not")
		}
		var length int32
		if err := r.ReadInt32(&length, 0, true); err != nil {
			return err
		}
		if int(length) > total {
			return errCDLax
		}
		switch rd.Kind {
		case cdListInt32:
			var vs []int32
			for range length {
				var v int32
				if err := r.ReadInt32(&v, 0, true); err != nil {
					return err
				}
				vs = append(vs, v)
			}
			add(fmt.Sprint(vs))
		case cdListStr:
			var vs []string
			for range length {
				var v string
				if err := r.ReadString(&v, 0, true); err != nil {
					return err
				}
				vs = append(vs, fmt.Sprintf("%q", v))
			}
			add(fmt.Sprint(vs))
		default:
			add(fmt.Sprintf("list of %d", max(length, 0)))
			for i := range length {
				if err := cdReadTheirsStruct(r, total, 0, true, rd.Sub, fmt.Sprintf("%s[%d]", path, i), tr); err != nil {
					return err
				}
			}
		}
	case cdMapSS, cdMapISt:
		have, err := r.SkipTo(tgcodec.MAP, t, req)
		if err != nil {
			return err
		}
		var length int32
		if have {
			if err := r.ReadInt32(&length, 0, true); err != nil {
				return err
			}
			if int(length) > total {
				return errCDLax
			}
		}
		if rd.Kind == cdMapSS {
			var vs []string
			for range length {
				var k, v string
				if err := r.ReadString(&k, 0, true); err != nil {
					return err
				}
				if err := r.ReadString(&v, 1, true); err != nil {
					return err
				}
				vs = append(vs, fmt.Sprintf("%q=%q", k, v))
			}
			add(fmt.Sprint(vs))
			return nil
		}
		add(fmt.Sprintf("map of %d", max(length, 0)))
		for i := range length {
			var k int32
			if err := r.ReadInt32(&k, 0, true); err != nil {
				return err
			}
			add(fmt.Sprintf("key %d", k))
			if err := cdReadTheirsStruct(r, total, 1, true, rd.Sub, fmt.Sprintf("%s[%d]", path, i), tr); err != nil {
				return err
			}
		}
	case cdStruct:
		return cdReadTheirsStruct(r, total, t, req, rd.Sub, path, tr)
	}
	return nil
}
