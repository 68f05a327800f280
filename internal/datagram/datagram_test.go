package datagram

import (
	"encoding/binary"
	"errors"
	"testing"
)

func frame(n, header int) []byte {
	b := make([]byte, n)
	if n >= 4 {
		binary.BigEndian.PutUint32(b, uint32(header))
	}
	return b
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    []byte
		want error
	}{
		{"whole frame", frame(30, 30), nil},
		{"largest", frame(MaxSize, MaxSize), nil},
		{"empty", nil, ErrNotOneFrame},
		{"short header", []byte{0, 0, 1}, ErrNotOneFrame},
		{"truncated", frame(30, 40), ErrNotOneFrame},
		{"trailing bytes", frame(40, 30), ErrNotOneFrame},
		{"header below 4", frame(4, 2), ErrNotOneFrame},
		{"too large", frame(MaxSize+1, MaxSize+1), ErrTooLarge},
	} {
		err := Check(tc.d)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: Check = %v, want %v", tc.name, err, tc.want)
		}
	}
}
