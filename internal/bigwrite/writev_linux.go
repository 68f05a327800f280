package bigwrite

import (
	"syscall"
	"unsafe"
)

// iovMax is how many slices one writev takes here: an array of that many iovecs lives on the
// stack; longer vectors take several calls.
const iovMax = 16

// writev writes bs to fd with writev calls of up to iovMax slices, as long as each call is
// written whole. It returns the bytes written and the error of the last call.
func writev(fd int, bs [][]byte) (int, error) {
	var iov [iovMax]syscall.Iovec
	total := 0
	for len(bs) > 0 {
		k, want := 0, 0
		for len(bs) > 0 && k < iovMax {
			if b := bs[0]; len(b) > 0 {
				iov[k].Base = &b[0]
				iov[k].SetLen(len(b))
				want += len(b)
				k++
			}
			bs = bs[1:]
		}
		if k == 0 {
			break
		}
		r, _, errno := syscall.Syscall(syscall.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(k))
		if errno != 0 {
			return total, errno
		}
		total += int(r)
		if int(r) < want {
			break
		}
	}
	return total, nil
}
