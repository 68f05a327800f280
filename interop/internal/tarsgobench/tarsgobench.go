// Package tarsgobench is the TarsGo side of the encode/decode benchmark: testdata/bench.tars
// written by hand on TarsGo v1.4.6's codec exactly the way its tars2go generates structs
// (WriteTo/ReadFrom, WriteBlock/ReadBlock, one error check per call, ResetDefault), since
// tars2go itself cannot be fetched as a module. The interop tests check that it encodes to the
// same bytes as the code tars2tarscomm generates from the same file.
package tarsgobench

import (
	"fmt"

	"github.com/TarsCloud/TarsGo/tars/protocol/codec"
)

// Inner is bench::Inner.
type Inner struct {
	Id   int32  `json:"id" tars:"id,tag:0,require:true"`
	Name string `json:"name" tars:"name,tag:1,require:false"`
}

// ResetDefault sets the fields that have defaults (none).
func (st *Inner) ResetDefault() {}

// ReadFrom reads the fields.
func (st *Inner) ReadFrom(readBuf *codec.Reader) error {
	var err error
	st.ResetDefault()
	err = readBuf.ReadInt32(&st.Id, 0, true)
	if err != nil {
		return err
	}
	err = readBuf.ReadString(&st.Name, 1, false)
	if err != nil {
		return err
	}
	return nil
}

// ReadBlock reads the struct at tag.
func (st *Inner) ReadBlock(readBuf *codec.Reader, tag byte, require bool) error {
	var (
		err  error
		have bool
	)
	st.ResetDefault()
	have, err = readBuf.SkipTo(codec.StructBegin, tag, require)
	if err != nil {
		return err
	}
	if !have {
		if require {
			return fmt.Errorf("require Inner, but not exist. tag %d", tag)
		}
		return nil
	}
	err = st.ReadFrom(readBuf)
	if err != nil {
		return err
	}
	err = readBuf.SkipToStructEnd()
	if err != nil {
		return err
	}
	return nil
}

// WriteTo writes the fields.
func (st *Inner) WriteTo(buf *codec.Buffer) (err error) {
	err = buf.WriteInt32(st.Id, 0)
	if err != nil {
		return err
	}
	if st.Name != "" {
		err = buf.WriteString(st.Name, 1)
		if err != nil {
			return err
		}
	}
	return err
}

// WriteBlock writes the struct at tag.
func (st *Inner) WriteBlock(buf *codec.Buffer, tag byte) error {
	var err error
	err = buf.WriteHead(codec.StructBegin, tag)
	if err != nil {
		return err
	}
	err = st.WriteTo(buf)
	if err != nil {
		return err
	}
	err = buf.WriteHead(codec.StructEnd, 0)
	if err != nil {
		return err
	}
	return nil
}

// Record is bench::Record.
type Record struct {
	Id     int64             `json:"id" tars:"id,tag:0,require:true"`
	Count  int32             `json:"count" tars:"count,tag:1,require:true"`
	Kind   int16             `json:"kind" tars:"kind,tag:2,require:true"`
	Active bool              `json:"active" tars:"active,tag:3,require:true"`
	Score  float64           `json:"score" tars:"score,tag:4,require:true"`
	Name   string            `json:"name" tars:"name,tag:5,require:true"`
	Desc   string            `json:"desc" tars:"desc,tag:6,require:false"`
	Values []int32           `json:"values" tars:"values,tag:7,require:false"`
	Attrs  map[string]string `json:"attrs" tars:"attrs,tag:8,require:false"`
	Inner  Inner             `json:"inner" tars:"inner,tag:9,require:false"`
}

// ResetDefault sets the fields that have defaults.
func (st *Record) ResetDefault() {
	st.Inner.ResetDefault()
}

// ReadFrom reads the fields.
func (st *Record) ReadFrom(readBuf *codec.Reader) error {
	var (
		err    error
		length int32
		have   bool
		ty     byte
	)
	st.ResetDefault()
	err = readBuf.ReadInt64(&st.Id, 0, true)
	if err != nil {
		return err
	}
	err = readBuf.ReadInt32(&st.Count, 1, true)
	if err != nil {
		return err
	}
	err = readBuf.ReadInt16(&st.Kind, 2, true)
	if err != nil {
		return err
	}
	err = readBuf.ReadBool(&st.Active, 3, true)
	if err != nil {
		return err
	}
	err = readBuf.ReadFloat64(&st.Score, 4, true)
	if err != nil {
		return err
	}
	err = readBuf.ReadString(&st.Name, 5, true)
	if err != nil {
		return err
	}
	err = readBuf.ReadString(&st.Desc, 6, false)
	if err != nil {
		return err
	}
	have, ty, err = readBuf.SkipToNoCheck(7, false)
	if err != nil {
		return err
	}
	if have {
		if ty == codec.LIST {
			err = readBuf.ReadInt32(&length, 0, true)
			if err != nil {
				return err
			}
			st.Values = make([]int32, length)
			for i0, e0 := int32(0), length; i0 < e0; i0++ {
				err = readBuf.ReadInt32(&st.Values[i0], 0, true)
				if err != nil {
					return err
				}
			}
		} else if ty == codec.SimpleList {
			err = fmt.Errorf("not support SimpleList type")
			if err != nil {
				return err
			}
		} else {
			err = fmt.Errorf("require vector, but not")
			if err != nil {
				return err
			}
		}
	}
	have, err = readBuf.SkipTo(codec.MAP, 8, false)
	if err != nil {
		return err
	}
	if have {
		err = readBuf.ReadInt32(&length, 0, true)
		if err != nil {
			return err
		}
		st.Attrs = make(map[string]string)
		for i1, e1 := int32(0), length; i1 < e1; i1++ {
			var k1 string
			var v1 string
			err = readBuf.ReadString(&k1, 0, false)
			if err != nil {
				return err
			}
			err = readBuf.ReadString(&v1, 1, false)
			if err != nil {
				return err
			}
			st.Attrs[k1] = v1
		}
	}
	err = st.Inner.ReadBlock(readBuf, 9, false)
	if err != nil {
		return err
	}
	_ = length
	_ = have
	_ = ty
	return nil
}

// WriteTo writes the fields.
func (st *Record) WriteTo(buf *codec.Buffer) (err error) {
	err = buf.WriteInt64(st.Id, 0)
	if err != nil {
		return err
	}
	err = buf.WriteInt32(st.Count, 1)
	if err != nil {
		return err
	}
	err = buf.WriteInt16(st.Kind, 2)
	if err != nil {
		return err
	}
	err = buf.WriteBool(st.Active, 3)
	if err != nil {
		return err
	}
	err = buf.WriteFloat64(st.Score, 4)
	if err != nil {
		return err
	}
	err = buf.WriteString(st.Name, 5)
	if err != nil {
		return err
	}
	if st.Desc != "" {
		err = buf.WriteString(st.Desc, 6)
		if err != nil {
			return err
		}
	}
	if len(st.Values) > 0 {
		err = buf.WriteHead(codec.LIST, 7)
		if err != nil {
			return err
		}
		err = buf.WriteInt32(int32(len(st.Values)), 0)
		if err != nil {
			return err
		}
		for _, v := range st.Values {
			err = buf.WriteInt32(v, 0)
			if err != nil {
				return err
			}
		}
	}
	if len(st.Attrs) > 0 {
		err = buf.WriteHead(codec.MAP, 8)
		if err != nil {
			return err
		}
		err = buf.WriteInt32(int32(len(st.Attrs)), 0)
		if err != nil {
			return err
		}
		for k2, v2 := range st.Attrs {
			err = buf.WriteString(k2, 0)
			if err != nil {
				return err
			}
			err = buf.WriteString(v2, 1)
			if err != nil {
				return err
			}
		}
	}
	err = st.Inner.WriteBlock(buf, 9)
	if err != nil {
		return err
	}
	return err
}
